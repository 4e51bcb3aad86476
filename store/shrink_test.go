package store

import (
	"context"
	"strings"
	"testing"
)

// pageFigures returns db's page count and free-list count.
func pageFigures(t *testing.T, db *DB) (pages, free int64) {
	t.Helper()
	if err := db.sql.QueryRow("SELECT p.page_count, f.freelist_count FROM pragma_page_count() p, pragma_freelist_count() f").Scan(&pages, &free); err != nil {
		t.Fatal(err)
	}
	return pages, free
}

// rolledBack imports n turns with 2 KB replies and their run into db, then
// rolls both back.
func rolledBack(t *testing.T, db *DB, name string, n int) {
	t.Helper()
	turns, recs := synthSet(n)
	long := strings.Repeat("긴 답장이야. ", 170) // 2,040 bytes
	for i := range turns {
		turns[i].TurnID = name + turns[i].TurnID
		recs[i].TurnID = turns[i].TurnID
		turns[i].ReplyText = &long
	}
	im, w := importing(t, context.Background(), db, name, turns, recs, nil, nil)
	if err := w.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := im.Rollback(); err != nil {
		t.Fatal(err)
	}
}

func TestShrinkAfterRollback(t *testing.T) {
	t.Run("a store a rolled-back import left mostly free gives its pages back", func(t *testing.T) {
		db, _ := openFile(t)
		before, _ := pageFigures(t, db)
		rolledBack(t, db, "big", 3000) // about 6 MB of replies alone
		pages, free := pageFigures(t, db)
		if free != 0 || pages > before+8 {
			t.Fatalf("after the rollback: %d pages, %d free; want no free pages and about the %d of the empty store", pages, free, before)
		}
		if n := count(t, db, "chat_turn"); n != 0 {
			t.Fatalf("%d chat_turn rows left", n)
		}
	})
	t.Run("a store with more live pages than the bound keeps its free pages for the next import", func(t *testing.T) {
		old := vacuumLiveMax
		vacuumLiveMax = 64 << 10
		t.Cleanup(func() { vacuumLiveMax = old })
		db, _ := openFile(t)
		turns, recs := synthSet(2000)
		im, w := importing(t, context.Background(), db, "kept", turns, recs, nil, nil)
		if _, _, err := im.CommitWithRun(w, tallyOf(recs, 0)); err != nil {
			t.Fatal(err)
		}
		kept, _ := pageFigures(t, db)
		rolledBack(t, db, "big", 3000)
		pages, free := pageFigures(t, db)
		if free*db.pageSizeForTest(t) < vacuumFreeMin || pages <= kept {
			t.Fatalf("after the rollback: %d pages, %d free (the kept import alone %d); want the rolled-back import's pages free", pages, free, kept)
		}
		if n := count(t, db, "chat_turn"); n != 2000 {
			t.Fatalf("%d chat_turn rows, want the kept import's 2000", n)
		}
	})
	t.Run("a store with too few free pages is not vacuumed", func(t *testing.T) {
		db, _ := openFile(t)
		db.batchRows = 5 // so that the rows are written before the rollback
		rolledBack(t, db, "small", 20)
		if _, free := pageFigures(t, db); free == 0 {
			t.Fatal("no free pages after a small rollback: vacuumed although under vacuumFreeMin")
		}
	})
}

func (db *DB) pageSizeForTest(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := db.sql.QueryRow("PRAGMA page_size").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
