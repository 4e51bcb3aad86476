package located

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	for _, c := range []struct {
		name string
		e    Error
		want string
	}{
		{"file, line and column read as a compiler's", Error{File: "refs.jsonl", Line: 2, Column: 5, Reason: "bad JSON"}, "refs.jsonl:2:5: bad JSON"},
		{"file and line", Error{File: "refs.jsonl", Line: 2, Reason: "no id"}, "refs.jsonl:2: no id"},
		{"a file without a line concerns the whole file", Error{File: "refs.jsonl", Reason: "no items"}, "refs.jsonl: no items"},
		{"a column without a line is left out", Error{File: "f", Column: 3, Reason: "x"}, "f: x"},
		{"no file: persona/ingest's row form", Error{Line: 12, Column: 5, Field: "named_entities", Reason: "want array"}, "line 12, column 5: named_entities: want array"},
		{"no file, a unit: evalrun's gold form", Error{Unit: "gold", Line: 7, Reason: `duplicate turn_id "T-1"`}, `gold line 7: duplicate turn_id "T-1"`},
		{"nothing but a reason", Error{Reason: "empty input"}, "empty input"},
		{"a field without a position", Error{Field: "verdict", Reason: "unknown"}, "verdict: unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.e.Error(); got != c.want {
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
}

func TestAsAndLineFindTheErrorThroughWrapping(t *testing.T) {
	sentinel := errors.New("crystal input")
	err := fmt.Errorf("reading: %w", &Error{File: "p.jsonl", Line: 3, Reason: "no id", Err: sentinel})
	e, ok := As(err)
	if !ok || e.Line != 3 || e.File != "p.jsonl" {
		t.Fatalf("As = %+v, %v", e, ok)
	}
	if !errors.Is(err, sentinel) {
		t.Error("the wrapped sentinel is not found")
	}
	if Line(err) != 3 || Line(errors.New("plain")) != 0 || Line(&Error{Reason: "whole input"}) != 0 {
		t.Error("Line does not read the position")
	}
}
