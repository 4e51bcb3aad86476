package crystal

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseReply(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		steps       []string
		answer      string
		unparseable bool
		repaired    bool
	}{
		{"a clean JSON object is read as is",
			`{"reasoning_steps": ["The bar for 2019 is tallest.", "It reaches 40."], "answer": "40 units"}`,
			[]string{"The bar for 2019 is tallest.", "It reaches 40."}, "40 units", false, false},
		{"a json code fence is stripped",
			"```json\n{\"reasoning_steps\": [\"A is red.\"], \"answer\": \"A\"}\n```",
			[]string{"A is red."}, "A", false, true},
		{"a fence on the same line as the object is stripped",
			"```json{\"reasoning_steps\": [\"a\"], \"answer\": \"B\"}```",
			[]string{"a"}, "B", false, true},
		{"prose around the object is cut away",
			"Sure! Here it is: {\"reasoning_steps\": [\"x\"], \"answer\": \"B\"} Hope this helps.",
			[]string{"x"}, "B", false, true},
		{"trailing commas are dropped",
			`{"reasoning_steps": ["a", "b",], "answer": "C",}`,
			[]string{"a", "b"}, "C", false, true},
		{"a comma before a bracket inside a string is kept",
			`{"reasoning_steps": ["lists end with ,]",], "answer": "D"}`,
			[]string{"lists end with ,]"}, "D", false, true},
		{"a raw newline inside a string becomes a space",
			"{\"reasoning_steps\": [\"line one\nline two\"], \"answer\": \"E\"}",
			[]string{"line one line two"}, "E", false, true},
		{"other control characters are dropped",
			"{\"reasoning_steps\": [\"be\x01ll\"], \"answer\":\x02 \"F\"}",
			[]string{"bell"}, "F", false, true},
		{"non-string steps become their JSON text and null steps are dropped",
			`{"reasoning_steps": [3, 2.50, true, null, {"k": "v"}, ["x"]], "answer": 7}`,
			[]string{"3", "2.50", "true", `{"k":"v"}`, `["x"]`}, "7", false, false},
		{"a string reasoning_steps becomes one step",
			`{"reasoning_steps": "only one", "answer": "yes"}`,
			[]string{"only one"}, "yes", false, false},
		{"a list answer is joined",
			`{"reasoning_steps": [], "answer": ["A", "C"]}`,
			[]string{}, "A, C", false, false},
		{"missing fields give no steps and an empty answer",
			`{"other": 1}`,
			[]string{}, "", false, false},
		{"garbage is unparseable and answers insufficient information",
			"I cannot see the image, sorry.",
			[]string{}, InsufficientInformation, true, false},
		{"a closing brace before the opening one is unparseable",
			"} oops {",
			[]string{}, InsufficientInformation, true, false},
		{"a broken object is unparseable",
			`{"reasoning_steps": ["a" "b"], "answer": }`,
			[]string{}, InsufficientInformation, true, false},
		{"a top-level array is unparseable",
			`["a", "b"]`,
			[]string{}, InsufficientInformation, true, false},
		{"the empty reply is unparseable",
			"",
			[]string{}, InsufficientInformation, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseReply(tt.in)
			if !reflect.DeepEqual(got.Steps, tt.steps) || got.Answer != tt.answer ||
				got.Unparseable != tt.unparseable || got.Repaired != tt.repaired {
				t.Errorf("ParseReply(%q) = steps %q answer %q unparseable %v repaired %v; want %q %q %v %v (notes %q)",
					tt.in, got.Steps, got.Answer, got.Unparseable, got.Repaired,
					tt.steps, tt.answer, tt.unparseable, tt.repaired, got.Notes)
			}
		})
	}
}

func TestParseReplyNotesCoercions(t *testing.T) {
	got := ParseReply(`{"reasoning_steps": [1, null], "answer": null}`)
	want := []string{`step 0 not a string: became "1"`, "step 1 null: dropped", `answer null: ""`}
	if !reflect.DeepEqual(got.Notes, want) {
		t.Errorf("notes = %q, want %q", got.Notes, want)
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"reasoning_steps": ["a", "b"], "answer": "B"}`,
		"```json\n{\"reasoning_steps\": [\"a\",], \"answer\": \"C\",}\n```",
		`{"reasoning_steps": [1, null, {"x": [true]}], "answer": 2.5}`,
		"{\"reasoning_steps\": [\"a\\\x01b\"], \"answer\": \"\x7f\"}",
		`{"answer": "\ud800"}`,
		"not json at all",
		"{{}}}",
		"\xff{\"answer\":\"\xfe\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := ParseReply(in)
		if r.Steps == nil {
			t.Fatalf("Steps is nil for %q", in)
		}
		if r.Unparseable {
			if len(r.Steps) != 0 || r.Answer != InsufficientInformation || r.Repaired {
				t.Fatalf("unparseable reply %q gave %+v", in, r)
			}
			return
		}
		for _, s := range append([]string{r.Answer}, r.Steps...) {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q from %q", s, in)
			}
		}
		// What was read writes back as a clean reply that reads the same.
		b, err := json.Marshal(map[string]any{"reasoning_steps": r.Steps, "answer": r.Answer})
		if err != nil {
			t.Fatal(err)
		}
		again := ParseReply(string(b))
		if again.Unparseable || again.Repaired || again.Answer != r.Answer || !reflect.DeepEqual(again.Steps, r.Steps) {
			t.Fatalf("round trip of %q: %+v became %+v", in, r, again)
		}
		if !strings.Contains(in, "{") {
			t.Fatalf("reply without '{' was parsed: %q", in)
		}
	})
}
