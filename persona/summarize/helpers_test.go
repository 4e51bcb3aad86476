package summarize

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/ingest"
)

const seedDir = "../testdata/seed"

func seedInput(t testing.TB, name string) ingest.Source {
	t.Helper()
	in, err := ingest.File(filepath.Join(seedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// seedJudge returns the judge and cards of the seed fixture (persona/testdata/seed).
func seedJudge(t testing.TB) (*persona.Judge, []persona.Card) {
	t.Helper()
	cards, _, err := batch.LoadCards(seedInput(t, "cards.json"))
	if err != nil {
		t.Fatal(err)
	}
	j, _, err := batch.NewJudge(seedInput(t, "cards.json"), seedInput(t, "lexicon.csv"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return j, cards
}

// judged is one rule record with the check context batch gave it.
type judged struct {
	rec persona.Record
	cx  persona.Context
}

// seedRecords judges the seed fixture and returns every rule record with its
// check context, by turn_id.
func seedRecords(t testing.TB, j *persona.Judge) map[string]judged {
	t.Helper()
	var mu sync.Mutex
	out := map[string]judged{}
	_, err := batchJudge(context.Background(), seedInput(t, "turns.jsonl"), batchConfig{Judge: j,
		Summarize: func(_ context.Context, rec *persona.Record, cx persona.Context) persona.Summary {
			mu.Lock()
			defer mu.Unlock()
			tu := *cx.Turn
			cx.Turn = &tu
			out[rec.TurnID] = judged{rec: *rec, cx: cx}
			return persona.Summary{Source: persona.SummaryRule}
		}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// batchConfig is the callback form these tests were written against;
// batchJudge maps it onto batch.Run and batch.Outputs.
type batchConfig struct {
	Judge                *persona.Judge
	Out                  io.Writer
	Workers              int
	Summarize            func(ctx context.Context, rec *persona.Record, cx persona.Context) persona.Summary
	SummarizeConcurrency int
	Summarized           func(rec *persona.Record, t *persona.Turn, s persona.Summary) error
}

func batchJudge(ctx context.Context, in ingest.Source, cfg batchConfig) (persona.Tally, error) {
	r := batch.Run{Judge: cfg.Judge, Turns: in, Workers: cfg.Workers, SummarizeConcurrency: cfg.SummarizeConcurrency}
	if cfg.Summarize != nil {
		r.Summarizer = batch.SummarizerFunc(cfg.Summarize)
	}
	o := batch.Outputs{Lines: cfg.Out}
	if cfg.Summarized != nil {
		o.Record = func(j *batch.Judged) error { return cfg.Summarized(&j.Record, &j.Turn, j.Summary) }
	}
	return r.Do(ctx, o)
}
