package evalrun_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/evalrun"
)

func TestReadGold(t *testing.T) {
	t.Run("a valid file reads in order, skipping blank lines and a BOM", func(t *testing.T) {
		in := "\ufeff" + `{"turn_id":"T-1","verdict":"설정대로 말함","note":"반말 유지"}` + "\n\n" +
			`  {"turn_id":"T-2","verdict":"말투 어긋남","extra":1}  ` + "\r\n" +
			`{"turn_id":"T-3","verdict":"금지 소재 접촉","note":null}` // no final newline
		got, err := evalrun.ReadGold(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		want := []evalrun.Gold{
			{TurnID: "T-1", Verdict: persona.Kept, Note: "반말 유지"},
			{TurnID: "T-2", Verdict: persona.SpeechOff},
			{TurnID: "T-3", Verdict: persona.ForbiddenTopic},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("an empty file has no labels", func(t *testing.T) {
		got, err := evalrun.ReadGold(strings.NewReader(""))
		if err != nil || len(got) != 0 {
			t.Errorf("got %v, %v", got, err)
		}
	})

	ok := `{"turn_id":"T-1","verdict":"설정대로 말함"}` + "\n"
	bad := []struct {
		name   string
		in     string
		line   int
		reason string
	}{
		{"a malformed line is an error naming its line", ok + "{\"turn_id\": \n", 2, "not a JSON object"},
		{"an array line is not an object", ok + "\n[1,2]\n", 3, "not a JSON object"},
		{"an invalid verdict is an error", ok + `{"turn_id":"T-2","verdict":"잘 말함"}`, 2, `verdict "잘 말함" is not one of the five verdicts`},
		{"a verdict that is not a string is an error", `{"turn_id":"T-2","verdict":3}`, 1, "verdict must be a string"},
		{"a missing verdict is an error", `{"turn_id":"T-2"}`, 1, "verdict missing"},
		{"a missing turn_id is an error", `{"verdict":"설정대로 말함"}`, 1, "turn_id missing"},
		{"an empty turn_id is an error", `{"turn_id":"","verdict":"설정대로 말함"}`, 1, "turn_id empty"},
		{"a duplicate turn_id names both lines", ok + ok, 2, `duplicate turn_id "T-1" (first labelled on line 1)`},
		{"two values on one line are an error", `{"turn_id":"T-1","verdict":"설정대로 말함"} {}`, 1, "more than one JSON value"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalrun.ReadGold(strings.NewReader(tc.in))
			var le *evalrun.LineError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, %v; want a *LineError", got, err)
			}
			if le.Line != tc.line || !strings.Contains(le.Reason, tc.reason) {
				t.Errorf("got line %d %q, want line %d containing %q", le.Line, le.Reason, tc.line, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "gold line ") {
				t.Errorf("error %q does not name the gold line", err)
			}
		})
	}
}
