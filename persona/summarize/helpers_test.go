package summarize

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"evident/persona"
	"evident/persona/batch"
)

const seedDir = "../testdata/seed"

func seedInput(t testing.TB, name string) batch.Input {
	t.Helper()
	in, err := batch.FileInput(filepath.Join(seedDir, name))
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
	_, err := batch.Judge(context.Background(), seedInput(t, "turns.jsonl"), batch.Config{Judge: j,
		Summarize: func(_ context.Context, rec *persona.Record, cx persona.Context) batch.Summary {
			mu.Lock()
			defer mu.Unlock()
			tu := *cx.Turn
			cx.Turn = &tu
			out[rec.TurnID] = judged{rec: *rec, cx: cx}
			return batch.Summary{Source: batch.SummaryRule}
		}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
