package runstore_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/batch"
	"evident/runstore"
	"evident/store"
)

// stored is everything a dataset and its run hold, for comparing two.
type stored struct {
	turns   []persona.Turn
	entries []store.Entry
	rejects []persona.Reject
	tally   persona.Tally
	fps     map[string]string
	profile string
	endings []string
}

func readStored(t *testing.T, db *store.DB, datasetID int64, run store.RunInfo) stored {
	t.Helper()
	ctx := context.Background()
	turns, err := db.Turns(ctx, datasetID)
	if err != nil {
		t.Fatal(err)
	}
	es, err := db.Entries(ctx, run.ID, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	rej, err := db.Rejects(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return stored{turns: turns, entries: es, rejects: rej, tally: run.Tally, fps: run.Fingerprints, profile: run.Profile, endings: run.Endings}
}

// TestRunJudgesOnce: runstore.Run imports and judges in one pass; what it
// stores is what Import followed by JudgeDataset (the judgement of the
// stored dataset) stores.
func TestRunJudgesOnce(t *testing.T) {
	ctx := context.Background()
	rejTurns := `{"turn_id":"A1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"그래."}
{"turn_id":"A2","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.
{"turn_id":"A3","session_id":"S","model_id":"m","reply_text":"좋아."}
{"turn_id":"A1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"또."}
{"turn_id":"A5","session_id":"S","character_id":"C9","model_id":"m","reply_text":"누구."}
{"turn_id":"A6","session_id":"S","character_id":"C1","model_id":"m","reply_text":"알겠어요."}
`
	cases := []struct {
		name   string
		tables func() runstore.Tables
		o      runstore.Options
	}{
		{"the demo", demoTables, runstore.Options{}},
		{"a log with rejected rows of every kind", func() runstore.Tables {
			return runstore.Tables{Turns: text("t.jsonl", rejTurns), Cards: text("c.jsonl", goodCards+`{"character_id":"C2"}`+"\n"), Lexicon: text("l.csv", lexicon)}
		}, runstore.Options{}},
		{"the demo with a model rewriting summaries (some failing check 10, some changing a rule field)", demoTables,
			runstore.Options{Summarizer: badSummarizer{}}},
	}
	for _, c := range cases {
		t.Run(c.name+": one pass stores the same dataset and run as importing, then judging the store", func(t *testing.T) {
			a := openMem(t)
			res, err := runstore.Run(ctx, a, c.tables(), c.o)
			if err != nil {
				t.Fatal(err)
			}
			b := openMem(t)
			imp, err := runstore.Import(ctx, b, c.tables(), c.o)
			if err != nil {
				t.Fatal(err)
			}
			run, err := runstore.JudgeDataset(ctx, b, imp.DatasetID, c.o, imp.Rejects)
			if err != nil {
				t.Fatal(err)
			}
			if res.Turns != imp.Turns || res.Cards != imp.Cards || res.Lexicon != imp.Lexicon || !reflect.DeepEqual(res.Rejects, imp.Rejects) {
				t.Errorf("one pass imported %d/%d/%d with %d rejects, two passes %d/%d/%d with %d", res.Turns, res.Cards, res.Lexicon,
					len(res.Rejects), imp.Turns, imp.Cards, imp.Lexicon, len(imp.Rejects))
			}
			got, want := readStored(t, a, res.DatasetID, res.Run), readStored(t, b, imp.DatasetID, run)
			if len(got.entries) == 0 {
				t.Fatal("no records")
			}
			if !reflect.DeepEqual(got.turns, want.turns) {
				t.Error("stored turns differ")
			}
			if !reflect.DeepEqual(got.entries, want.entries) {
				t.Error("stored records differ")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("one pass stored %+v\ntwo passes %+v", got, want)
			}
			for _, table := range []string{store.TableTurns, store.TableCards, store.TableLexicon} {
				if len(got.fps[table]) != 64 {
					t.Errorf("fingerprint of %s: %q", table, got.fps[table])
				}
			}
		})
		t.Run(c.name+": the checks stored with the run are batch.Check's over the stored run", func(t *testing.T) {
			db := openMem(t)
			res, err := runstore.Run(ctx, db, c.tables(), c.o)
			if err != nil {
				t.Fatal(err)
			}
			s, err := db.StoredSummary(ctx, res.Run.ID)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := runstore.SummaryChecks(s)
			if err != nil || sc == nil {
				t.Fatalf("stored checks %v, %v (%s)", sc, err, s.ChecksErr)
			}
			rep, err := runstore.Check(ctx, db, res.Run)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Failures) > runstore.MaxStoredFailures {
				t.Fatalf("%d failures: more than the stored cap, pick a smaller case", len(rep.Failures))
			}
			if sc.Failures != len(rep.Failures) || sc.SchemaChecked != rep.Records {
				t.Errorf("stored %d failures and %d schema checks, batch.Check %d failures over %d records", sc.Failures, sc.SchemaChecked, len(rep.Failures), rep.Records)
			}
			if !reflect.DeepEqual(sc.Report, *rep) {
				t.Errorf("stored checks\n%+v\nbatch.Check\n%+v", sc.Report, *rep)
			}
		})
	}
	t.Run("the model-rewrite case really fails checks, so the comparison above compares failures", func(t *testing.T) {
		db := openMem(t)
		res, err := runstore.Run(ctx, db, demoTables(), runstore.Options{Summarizer: badSummarizer{}})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := db.StoredSummary(ctx, res.Run.ID)
		sc, _ := runstore.SummaryChecks(s)
		if sc == nil || sc.Report.Fail[9] != 65 || sc.Failures != 65 { // every third of 195 records: a 반말 summary
			t.Fatalf("stored checks %+v", sc)
		}
	})
}

// badSummarizer rewrites every third record's summary into a 반말 sentence
// (check 10 fails) and, for every third of the others, also changes the
// verdict (batch's guard then keeps the rules' record).
type badSummarizer struct{}

func (badSummarizer) Summarize(_ context.Context, rec *persona.Record, cx persona.Context) persona.Summary {
	switch cx.Pos % 9 {
	case 0, 3, 6:
		rec.Summary = fmt.Sprintf("이건 %s 회차의 반말 요약이야.", strings.TrimPrefix(rec.TurnID, "T"))
		return persona.Summary{Source: persona.SummaryModel}
	case 1:
		rec.Verdict = persona.Kept
		rec.Summary = "바뀐 요약입니다."
		return persona.Summary{Source: persona.SummaryModel}
	}
	return persona.Summary{Source: persona.SummaryRule}
}

var _ batch.Summarizer = badSummarizer{}
