package report

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"evident/crystal"
)

func TestReadItems(t *testing.T) {
	want := []crystal.Item{
		{ID: "b", Question: "Q1", Answer: "B", Options: []string{"x", "y"}, ReferenceSteps: []string{"s1", "s2"}},
		{ID: "a", Question: "Q2", Answer: "12", ReferenceSteps: []string{}},
	}
	for _, c := range []struct{ name, in string }{
		{"an object keyed by id keeps the file's key order", `{"b": {"question": "Q1", "answer": "B", "options": ["x", "y"], "reference_steps": ["s1", "s2"]},
		  "a": {"question": "Q2", "answer": 12}}`},
		{"a JSON array of items with ids is read", `[{"id": "b", "question": "Q1", "answer": "B", "choices": ["x", "y"], "reference_steps": ["s1", "s2"]},
		  {"id": "a", "question": "Q2", "answer": "12", "reference_steps": []}]`},
		{"JSON Lines with blank lines and extra fields are read", "\ufeff{\"id\": \"b\", \"question\": \"Q1\", \"answer\": \"B\", \"options\": [\"x\", \"y\"], \"reference_steps\": [\"s1\", \"s2\"], \"source\": \"MMVP\"}\n\n" +
			`{"id": "a", "question": "Q2", "answer": 12}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadItems(strings.NewReader(c.in), "refs")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
	t.Run("a single item object is one line of JSON Lines, not a keyed object", func(t *testing.T) {
		got, err := ReadItems(strings.NewReader(`{"id": "q", "answer": "1", "reference_steps": ["s"]}`), "refs")
		if err != nil || len(got) != 1 || got[0].ID != "q" {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	for _, c := range []struct{ name, in, want string }{
		{"a duplicate id is refused", "{\"id\": \"q\"}\n{\"id\": \"q\"}\n", `duplicate id "q"`},
		{"an item without id is refused with its line", "{\"id\": \"q\"}\n{\"answer\": \"x\"}\n", "refs:2: no id"},
		{"a non-string step is refused", `{"q": {"reference_steps": [1]}}`, `item "q"`},
		{"an id that differs from its key is refused", `{"q": {"id": "r", "reference_steps": []}}`, "differs from its key"},
		{"invalid JSON names the line", "{\"id\": \"q\"}\n{nope}\n", "refs:2"},
		{"an empty file is refused", "  \n", "no items"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadItems(strings.NewReader(c.in), "refs")
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrInput mentioning %q", err, c.want)
			}
		})
	}
}

func TestReadPredictions(t *testing.T) {
	in := `{"id": "q1", "model": "m", "reasoning_steps": ["a", 2, null], "answer": 7}
{"id": "q2", "model": "m", "reply": "` + "```json\\n{\\\"reasoning_steps\\\": [\\\"b\\\"], \\\"answer\\\": \\\"yes\\\",}\\n```" + `"}
{"id": "q3", "model": "m", "reply": "I cannot tell."}
{"id": "q1", "reasoning_steps": [], "answer": "A"}
`
	preds, err := ReadPredictions(strings.NewReader(in), "preds", "fallback")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("parsed fields get the reply parser's coercions", func(t *testing.T) {
		r := preds[0].Reply
		if !reflect.DeepEqual(r.Steps, []string{"a", "2"}) || r.Answer != "7" || r.Unparseable {
			t.Errorf("reply %+v", r)
		}
	})
	t.Run("a raw reply in code fences with a trailing comma is repaired", func(t *testing.T) {
		r := preds[1].Reply
		if !r.Repaired || r.Answer != "yes" || !reflect.DeepEqual(r.Steps, []string{"b"}) {
			t.Errorf("reply %+v", r)
		}
	})
	t.Run("a prose reply is flagged unparseable, not an error", func(t *testing.T) {
		r := preds[2].Reply
		if !r.Unparseable || r.Answer != crystal.InsufficientInformation {
			t.Errorf("reply %+v", r)
		}
	})
	t.Run("a record without model takes the default model", func(t *testing.T) {
		if preds[3].Model != "fallback" {
			t.Errorf("model %q", preds[3].Model)
		}
	})
	t.Run("predictions are grouped by model in first-appearance order", func(t *testing.T) {
		runs := Group(preds)
		if len(runs) != 2 || runs[0].Model != "m" || len(runs[0].Replies) != 3 || runs[1].Model != "fallback" {
			t.Errorf("runs %+v", runs)
		}
	})
	for _, c := range []struct{ name, in, want string }{
		{"a repeated model and id is refused", "{\"id\": \"q\", \"model\": \"m\", \"answer\": \"1\"}\n{\"id\": \"q\", \"model\": \"m\", \"answer\": \"2\"}\n", "already answered"},
		{"a record with neither reply nor fields is refused", `{"id": "q", "model": "m"}`, "neither"},
		{"a record without id is refused", `{"model": "m", "answer": "1"}`, "preds:1: no id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadPredictions(strings.NewReader(c.in), "preds", "d")
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrInput mentioning %q", err, c.want)
			}
		})
	}
}
