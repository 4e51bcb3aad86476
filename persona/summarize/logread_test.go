package summarize

import (
	"strings"
	"testing"
)

func TestReadLog(t *testing.T) {
	log := `{"turn_id":"A","summary_source":"model","rejected_by":null,"cached":false}
{"turn_id":"B","summary_source":"rule","rejected_by":"check 10","cached":false}
{"turn_id":"C","summary_source":"rule","rejected_by":"check 10","cached":true}

{"turn_id":"D","summary_source":"rule","rejected_by":"discarded: verdict differs","cached":false}
{"turn_id":"E","summary_source":"rule","rejected_by":null,"cached":false}
`
	got, err := ReadLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if want := "summaries: model 1, rule 4 (check 10 2 · discarded: verdict differs 1)"; got.String() != want {
		t.Errorf("tally %q, want %q", got.String(), want)
	}
	t.Run("an unknown source is an error naming the line", func(t *testing.T) {
		_, err := ReadLog(strings.NewReader(`{"turn_id":"A","summary_source":"rule"}` + "\n" + `{"turn_id":"B","summary_source":"guess"}`))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("err = %v", err)
		}
	})
}
