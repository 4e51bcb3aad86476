package report

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"evident/crystal"
	"evident/crystal/embedder"
)

// countingCounter is wordCounter that counts the texts it is asked to
// count tokens of, by text.
type countingCounter struct {
	wordCounter
	mu    sync.Mutex
	asked map[string]int
}

func (c *countingCounter) TokenCounts(ctx context.Context, texts []string) ([]embedder.Cut, error) {
	c.mu.Lock()
	for _, t := range texts {
		c.asked[t]++
	}
	c.mu.Unlock()
	return c.wordCounter.TokenCounts(ctx, texts)
}

func TestScoreAsksForTheReferenceTruncationsOncePerItemForAllModels(t *testing.T) {
	items := []crystal.Item{{ID: "a", Answer: "yes", ReferenceSteps: []string{"short ref", "a reference step far too long to keep"}}}
	reply := crystal.Reply{Steps: []string{"one two three four five six seven"}, Answer: "yes"}
	runs := []Run{{Model: "m1", Replies: map[string]crystal.Reply{"a": reply}}, {Model: "m2", Replies: map[string]crystal.Reply{"a": reply}},
		{Model: "m3", Replies: map[string]crystal.Reply{"a": reply}}}
	c := &countingCounter{asked: map[string]int{}}
	tab, err := Score(context.Background(), items, runs, crystal.Config{Profile: crystal.ProfilePaper, Similarity: embedder.Cosine{Embedder: c}})
	if err != nil {
		t.Fatal(err)
	}
	if c.asked["short ref"] != 1 || c.asked[items[0].ReferenceSteps[1]] != 1 || c.asked[reply.Steps[0]] != 3 {
		t.Errorf("asked %v: want each reference step once, the predicted step once per model (3)", c.asked)
	}
	want := []crystal.StepTruncation{{Side: "pred", Step: 0, Kept: 6, Total: 9}, {Side: "ref", Step: 1, Kept: 6, Total: 10}}
	for _, row := range tab.Rows {
		if !reflect.DeepEqual(row.Report.PerItem[0].Truncated, want) || row.Report.TruncatedSteps != 2 {
			t.Errorf("%s: truncated %+v", row.Model, row.Report.PerItem[0].Truncated)
		}
	}
}
