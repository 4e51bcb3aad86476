package store

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"
)

// A batch's rows go in rowsPerInsert at a time (writeBatch.write): what
// reads back must be what one row at a time wrote, whatever the batch's
// length, and an error must still name its row.
func TestMultiRowInserts(t *testing.T) {
	ctx := context.Background()

	t.Run("rows written in groups of 32 read back as they were given, across batches and remainders", func(t *testing.T) {
		db, _ := openFile(t)
		db.batchRows = 70 // two groups of 32 and 6 rows one at a time, per batch
		turns, recs := synthSet(150)
		im, w := importing(t, ctx, db, "groups", turns, recs, nil, nil)
		id, err := im.Commit()
		if err != nil {
			t.Fatal(err)
		}
		run, err := w.Commit(tallyOf(recs, 0))
		if err != nil {
			t.Fatal(err)
		}
		gotTurns, err := db.Turns(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotTurns, turns) {
			t.Fatalf("%d turns read back differ from the %d imported", len(gotTurns), len(turns))
		}
		got, err := db.Records(ctx, run.ID, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, recs) {
			t.Fatalf("%d records read back differ from the %d added", len(got), len(recs))
		}
		var seqs int
		if err := db.sql.QueryRow("SELECT count(*) FROM verdict WHERE run_id = ? AND seq BETWEEN 0 AND 149", run.ID).Scan(&seqs); err != nil || seqs != 150 {
			t.Fatalf("%d verdict rows numbered 0..149 (%v), want 150", seqs, err)
		}
	})

	t.Run("a turn_id repeated inside a group of 32 fails naming its row, and nothing stays", func(t *testing.T) {
		db, _ := openFile(t)
		db.batchRows = 64
		turns, _ := synthSet(128)
		turns[80].TurnID = turns[5].TurnID // row 81, in the second batch's first group
		im, err := db.BeginImport(ctx, "dup")
		if err != nil {
			t.Fatal(err)
		}
		var addErr error
		for i := range turns {
			if addErr = im.AddTurn(&turns[i]); addErr != nil {
				break
			}
		}
		_, err = im.Commit()
		if addErr != nil {
			err = addErr
		}
		if err == nil || !strings.Contains(err.Error(), `"T00005" (row 81)`) || !strings.Contains(err.Error(), "UNIQUE") {
			t.Fatalf("repeat inside a group: %v, want the UNIQUE error naming row 81", err)
		}
		if n := count(t, db, "chat_turn") + count(t, db, "dataset"); n != 0 {
			t.Fatalf("%d rows left", n)
		}
	})

	t.Run("foreign keys are checked again once a batch is written", func(t *testing.T) {
		db, _ := openFile(t)
		db.batchRows = 40
		turns, _ := synthSet(45)
		im, err := db.BeginImport(ctx, "fk")
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		for i := range turns {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		im.b.settle() // the first batch is written, on the bulk connection
		if n := count(t, db, "chat_turn"); n != 40 {
			t.Fatalf("%d rows committed, want the first batch's 40", n)
		}
		// Another write while the import is open runs on the same
		// connection: a row of a dataset that does not exist is refused.
		err = db.inTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO chat_turn (dataset_id, seq, turn_id, session_id, character_id, model_id, user_asked_recall)
    VALUES (999, 0, 'x', 's', 'c', 'm', 0)`)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
			t.Fatalf("a row of no dataset on the bulk connection: %v, want the FOREIGN KEY error", err)
		}
	})
}
