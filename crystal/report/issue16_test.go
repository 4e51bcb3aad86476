package report

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"evident/crystal"
	"evident/crystal/embedder"
)

// wordCounter is a test embedder with a 6-token limit: a text has one token
// per word plus 2 special tokens; every text gets the same vector.
type wordCounter struct{}

func (wordCounter) Name() string { return "words-6" }
func (wordCounter) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for k := range out {
		out[k] = []float32{1, 0}
	}
	return out, nil
}
func (wordCounter) TokenCounts(_ context.Context, texts []string) ([]embedder.Cut, error) {
	out := make([]embedder.Cut, len(texts))
	for k, t := range texts {
		n := len(strings.Fields(t)) + 2
		out[k] = embedder.Cut{Index: k, Kept: min(n, 6), Total: n}
	}
	return out, nil
}

func TestIssue16Report(t *testing.T) {
	ctx := context.Background()
	items := []crystal.Item{
		{ID: "a", Answer: "yes", ReferenceSteps: []string{"short ref", "a reference step far too long to keep"}},
		{ID: "b", Answer: "no", ReferenceSteps: nil},
	}
	runs := []Run{{Model: "m", Replies: map[string]crystal.Reply{
		"a": {Steps: []string{"one two three four five six seven"}, Answer: "yes"},
		"b": {Steps: []string{"x"}, Answer: "no"},
	}}}
	tab, err := Score(ctx, items, runs, crystal.Config{Profile: crystal.ProfilePaper, Similarity: embedder.Cosine{Embedder: wordCounter{}}})
	if err != nil {
		t.Fatal(err)
	}
	rep := tab.Rows[0].Report
	t.Run("each cut step is named in the item evidence with tokens kept of total", func(t *testing.T) {
		want := []crystal.StepTruncation{{Side: "pred", Step: 0, Kept: 6, Total: 9}, {Side: "ref", Step: 1, Kept: 6, Total: 10}}
		if !reflect.DeepEqual(rep.PerItem[0].Truncated, want) {
			t.Errorf("truncated = %+v, want %+v", rep.PerItem[0].Truncated, want)
		}
	})
	// Training reward: both answers right by check_answer_match, no word in
	// common and no reference for b: 0.6 each.
	t.Run("the report counts cut steps and items, in the JSON summary and the notes", func(t *testing.T) {
		if rep.TruncatedSteps != 2 || rep.TruncatedItems != 1 {
			t.Errorf("report counts %d steps %d items, want 2 and 1", rep.TruncatedSteps, rep.TruncatedItems)
		}
		s := tab.Summary().Models[0]
		if s.TruncatedSteps != 2 || s.TruncatedItems != 1 || s.Skipped != 1 {
			t.Errorf("summary %+v", s)
		}
		notes := strings.Join(tab.Notes(), "\n")
		for _, w := range []string{"m: 1 item without reference steps skipped", "2 steps in 1 item cut to the model's token limit", TrainNote + ": m 0.600"} {
			if !strings.Contains(notes, w) {
				t.Errorf("notes %q lack %q", notes, w)
			}
		}
	})
	t.Run("a skipped item's evidence has the flag and null step scores, not zeros", func(t *testing.T) {
		var buf bytes.Buffer
		if err := tab.WriteItems(&buf, items, runs); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		var a, b map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(lines[1]), &b); err != nil {
			t.Fatal(err)
		}
		if b["skipped"] != true {
			t.Errorf("skipped item: %s", lines[1])
		}
		for _, k := range []string{"precision", "recall", "f1", "order_score", "ordered_f1", "cpr"} {
			if v, ok := b[k]; !ok || v != nil {
				t.Errorf("skipped item %s = %v, want null", k, v)
			}
			if _, ok := a[k].(float64); !ok {
				t.Errorf("scored item %s = %v, want a number", k, a[k])
			}
		}
		if _, ok := a["truncated"].([]any); !ok {
			t.Errorf("scored item lacks truncated: %s", lines[0])
		}
	})
}
