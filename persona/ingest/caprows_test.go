package ingest

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestCapRowsRejectsLongRowsOnly: a row over the cap is a reject at its
// line naming its size and the cap, before it is decoded; the rows around
// it, and a row of exactly the cap, are read as they are, on every read.
func TestCapRowsRejectsLongRowsOnly(t *testing.T) {
	short := turnJSONL("t1", "")
	long := turnJSONL("t2", `"reply_text":"`+strings.Repeat("가", 100)+`"`)
	exact := turnJSONL("t3", "")
	text := short + "\n" + long + "\n" + exact + "\n"
	open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }
	src := CapRows(NewTable("turns.jsonl", JSONL, open), len(exact), "judge it with evident judge")
	for pass := range 2 {
		rows, err := src.Open()
		if err != nil {
			t.Fatal(err)
		}
		raws, err := rows.ReadRows(nil, 10, 1<<20)
		rows.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if len(raws) != 3 {
			t.Fatalf("pass %d: %d rows", pass, len(raws))
		}
		want := "line 2, column 1: row of " + strconv.Itoa(len(long)) + " bytes, over the cap of " + strconv.Itoa(len(exact)) + ": judge it with evident judge"
		if raws[1].Err == nil || raws[1].Err.Error() != want || raws[1].JSON != nil {
			t.Errorf("pass %d: long row %+v, want the reject %q", pass, raws[1], want)
		}
		for _, i := range []int{0, 2} {
			if raws[i].Err != nil {
				t.Fatalf("pass %d: row %d: %v", pass, i, raws[i].Err)
			}
			if _, err := DecodeTurn(raws[i]); err != nil {
				t.Errorf("pass %d: row %d: %v", pass, i, err)
			}
		}
	}
}
