package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"evident/persona"
)

// Importer.CommitWithRun makes a dataset and the run judged as it was
// written visible in one transaction: both or neither, whatever fails.
func TestCommitWithRun(t *testing.T) {
	ctx := context.Background()
	cards := []persona.Card{{CharacterID: "C1", Name: "하나", HonorificRule: persona.Banmal, FirstPerson: "나"}}
	lexicon := []persona.LexiconRow{{Term: "선거", Topic: "현실 정치"}}
	begin := func(t *testing.T, db *DB, ctx context.Context, n int) (*Importer, *RunWriter, []persona.Record) {
		t.Helper()
		turns, recs := synthSet(n)
		im, w := importing(t, ctx, db, "both", turns, recs, cards, lexicon)
		return im, w, recs
	}
	nothing := func(t *testing.T, db *DB) {
		t.Helper()
		for _, table := range []string{"dataset", "run", "chat_turn", "verdict", "character_card", "topic_lexicon"} {
			if n := count(t, db, table); n != 0 {
				t.Fatalf("%d %s rows left, want none", n, table)
			}
		}
	}

	t.Run("both become visible, with the fingerprints of the stored tables", func(t *testing.T) {
		db, _ := openFile(t)
		db.batchRows = 7
		im, w, recs := begin(t, db, ctx, 40)
		sum := im.TurnsFingerprint()
		id, run, err := im.CommitWithRun(w, tallyOf(recs, 0))
		if err != nil {
			t.Fatal(err)
		}
		if run.DatasetID != id || run.Tally.Judged != 40 {
			t.Fatalf("run %+v of dataset %d", run, id)
		}
		ds, err := db.Dataset(ctx, id)
		if err != nil || ds.Turns != 40 || ds.Cards != 1 || ds.Lexicon != 1 {
			t.Fatalf("dataset %+v, %v", ds, err)
		}
		stored, err := db.Run(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Fingerprints[TableTurns] != sum {
			t.Errorf("turns fingerprint %q, want the import's %q", stored.Fingerprints[TableTurns], sum)
		}
		for _, table := range []string{TableCards, TableLexicon} {
			src, err := db.DatasetTable(ctx, id, table)
			if err == nil {
				err = src.ReadThrough()
			}
			if err != nil {
				t.Fatal(err)
			}
			want, ok := src.Fingerprint()
			if !ok || stored.Fingerprints[table] != want {
				t.Errorf("%s fingerprint %q, the stored table's %q (%v)", table, stored.Fingerprints[table], want, ok)
			}
		}
	})

	t.Run("a last transaction that fails leaves neither the dataset nor the run", func(t *testing.T) {
		db, _ := openFile(t)
		db.batchRows = 7
		im, w, recs := begin(t, db, ctx, 40)
		boom := errors.New("boom")
		runCommitHooks = append(runCommitHooks, func(context.Context, *sql.Tx, int64) error { return boom })
		defer func() { runCommitHooks = runCommitHooks[:len(runCommitHooks)-1] }()
		if _, _, err := im.CommitWithRun(w, tallyOf(recs, 0)); !errors.Is(err, boom) {
			t.Fatalf("CommitWithRun: %v, want boom", err)
		}
		nothing(t, db)
	})

	t.Run("a tally that disagrees, or an ended context, leaves nothing", func(t *testing.T) {
		db, _ := openFile(t)
		im, w, recs := begin(t, db, ctx, 5)
		if _, _, err := im.CommitWithRun(w, tallyOf(recs[:4], 0)); err == nil {
			t.Fatal("a tally of 4 records for 5 was accepted")
		}
		nothing(t, db)

		cctx, cancel := context.WithCancel(ctx)
		im, w, recs = begin(t, db, cctx, 5)
		cancel()
		if _, _, err := im.CommitWithRun(w, tallyOf(recs, 0)); !errors.Is(err, context.Canceled) {
			t.Fatalf("CommitWithRun after the context ended: %v, want context.Canceled", err)
		}
		nothing(t, db)
	})
}
