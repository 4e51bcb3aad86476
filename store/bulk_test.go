package store

import (
	"context"
	"database/sql"
	"testing"
)

// bulkState reads, under wmu, how many writers hold the bulk connection
// and that connection's page cache (0 when there is none).
func bulkState(t *testing.T, db *DB) (refs, cacheKiB int) {
	t.Helper()
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.bulk != nil {
		var n int
		if err := db.bulk.QueryRowContext(context.Background(), "PRAGMA cache_size").Scan(&n); err != nil {
			t.Fatal(err)
		}
		cacheKiB = -n
	}
	return db.bulkRefs, cacheKiB
}

// bulkAutoCheckpoint reads the bulk connection's wal_autocheckpoint, in
// pages (0 when there is no bulk connection).
func bulkAutoCheckpoint(t *testing.T, db *DB) int {
	t.Helper()
	db.wmu.Lock()
	defer db.wmu.Unlock()
	var n int
	if db.bulk != nil {
		if err := db.bulk.QueryRowContext(context.Background(), "PRAGMA wal_autocheckpoint").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// poolSettings holds every idle connection of db's pool at once and
// returns each one's wal_autocheckpoint and foreign_keys.
func poolSettings(t *testing.T, db *DB) [][2]int {
	t.Helper()
	ctx := context.Background()
	var out [][2]int
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range db.sql.Stats().Idle + 1 {
		c, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var auto, fk int
		if err := c.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]int{auto, fk})
	}
	return out
}

// While an Importer or RunWriter is open, every write transaction runs on
// one connection with a 32 MiB page cache (its batches find their pages
// cached); the last writer to end gives it back, also when it rolls back.
func TestImportersAndRunWritersShareOneBulkConnection(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	db.batchRows = 2
	turns, recs := synthSet(5)
	im, w := importing(t, ctx, db, "bulk", turns, recs, nil, nil)
	im.b.settle()
	w.b.settle()
	if refs, cache := bulkState(t, db); refs != 2 || cache != bulkCacheKiB {
		t.Fatalf("mid-import: %d writers, bulk cache %d KiB; want 2 and %d", refs, cache, bulkCacheKiB)
	}
	if auto := bulkAutoCheckpoint(t, db); auto != 8192 {
		t.Fatalf("mid-import: the bulk connection checkpoints at %d pages, want 8192 (128 MiB of 16 KiB pages)", auto)
	}
	if _, err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	if refs, cache := bulkState(t, db); refs != 1 || cache != bulkCacheKiB {
		t.Fatalf("after the import's Commit: %d writers, bulk cache %d KiB; want the run's 1", refs, cache)
	}
	if _, err := w.Commit(tallyOf(recs, 0)); err != nil {
		t.Fatal(err)
	}
	if refs, cache := bulkState(t, db); refs != 0 || cache != 0 {
		t.Fatalf("after every writer ended: %d writers, bulk cache %d KiB; want none", refs, cache)
	}
	for i, st := range poolSettings(t, db) {
		if st != [2]int{1000, 1} {
			t.Fatalf("pool connection %d: wal_autocheckpoint %d, foreign_keys %d; want SQLite's 1000 and on", i, st[0], st[1])
		}
	}

	w2, err := db.BeginRun(ctx, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Add(recs[0], &turns[0]); err != nil {
		t.Fatal(err)
	}
	if err := w2.Rollback(); err != nil {
		t.Fatal(err)
	}
	if refs, cache := bulkState(t, db); refs != 0 || cache != 0 {
		t.Fatalf("after a Rollback: %d writers, bulk cache %d KiB; want none", refs, cache)
	}
	if n := count(t, db, "verdict"); n != len(recs) {
		t.Fatalf("%d verdict rows, want the committed run's %d", n, len(recs))
	}
}
