package store

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// sideTexts are replies of hand-picked shape for the sidecar tests: each
// query below has a known set of matching rows (by seq).
var sideTexts = []string{"먹쇠가 왔어.", "등대 앞에서 보자.", "응", "등대지기 먹쇠", "Coffee 한 잔"}

// sideQueries maps a query to the seqs whose reply or summary holds it
// (the summaries of synth hold "번 회차", never these).
var sideQueries = map[string][]int{
	"먹쇠":     {0, 3},
	"등대":     {1, 3},
	"등대지기":   {3},
	"coffee": {4},
	"없는말":    nil,
}

// writeSideRun stores one run of sideTexts into db.
func writeSideRun(t *testing.T, db *DB) RunInfo {
	t.Helper()
	turns, recs := synthSet(len(sideTexts))
	for i, text := range sideTexts {
		turns[i].ReplyText = sp(text)
		recs[i].Evidence[0].Value = text
	}
	return writeRun(t, db, testMeta, recs, turns)
}

// searchSeqs runs each of sideQueries on the run and fails on a wrong answer.
func searchSeqs(t *testing.T, db *DB, runID int64, when string) {
	t.Helper()
	for q, want := range sideQueries {
		es, err := db.Entries(context.Background(), runID, Filter{Text: q})
		if err != nil {
			t.Fatalf("%s: search %q: %v", when, q, err)
		}
		if got := seqsOf(es); !slices.Equal(got, want) {
			t.Errorf("%s: search %q: seqs %v, want %v", when, q, got, want)
		}
	}
}

// placeOf reads where the run's index lives and whether it is complete.
func placeOf(t *testing.T, db *DB, runID int64) (string, bool) {
	t.Helper()
	var place string
	var at *string
	if err := db.sql.QueryRow("SELECT place, indexed_at FROM run_search WHERE run_id = ?", runID).Scan(&place, &at); err != nil {
		t.Fatal(err)
	}
	return place, at != nil
}

// sideTerms counts the trigrams of the sidecar's index (what the
// indexer wrote), read through the sidecar's own pool.
func sideTerms(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.side.w.QueryRow("SELECT count(*) FROM verdict_fts_vocab").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAFileStoreKeepsItsSearchIndexInTheSidecar: a run written to a file
// store is listed the moment it commits, not indexed yet (its searches read
// rows and give the hand-checked rows); IndexRunText then indexes it in
// PATH-search, not in the store's own verdict_fts, and its searches give
// the same rows, also after the store is opened again and when it is
// opened read-only.
func TestAFileStoreKeepsItsSearchIndexInTheSidecar(t *testing.T) {
	db, path := openFile(t)
	run := writeSideRun(t, db)
	if place, indexed := placeOf(t, db, run.ID); place != "side" || indexed {
		t.Fatalf("run_search at Commit: place %q, indexed %v; want side, not indexed yet", place, indexed)
	}
	if n := sideTerms(t, db); n != 0 {
		t.Fatalf("%d trigrams in the sidecar at Commit, want none (the index is written after)", n)
	}
	searchSeqs(t, db, run.ID, "committed, not indexed")
	if err := db.IndexRunText(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	if place, indexed := placeOf(t, db, run.ID); place != "side" || !indexed {
		t.Fatalf("run_search after IndexRunText: place %q, indexed %v; want side, indexed", place, indexed)
	}
	if _, err := os.Stat(SidePath(path)); err != nil {
		t.Fatalf("no sidecar: %v", err)
	}
	var mainTerms int
	if err := db.sql.QueryRow("SELECT count(*) FROM verdict_fts_vocab").Scan(&mainTerms); err != nil {
		t.Fatal(err)
	}
	if mainTerms != 0 || sideTerms(t, db) == 0 {
		t.Fatalf("trigrams: %d in the store's index, %d in the sidecar's; want none and some", mainTerms, sideTerms(t, db))
	}
	searchSeqs(t, db, run.ID, "as written")
	db.Close()

	db2, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if ok, err := db2.TextIndexed(context.Background(), run.ID); !ok || err != nil {
		t.Fatalf("reopened: TextIndexed = %v, %v; want the sidecar kept", ok, err)
	}
	searchSeqs(t, db2, run.ID, "reopened")

	ro, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ok, err := ro.TextIndexed(context.Background(), run.ID); !ok || err != nil {
		t.Fatalf("read-only: TextIndexed = %v, %v; want the sidecar attached", ok, err)
	}
	searchSeqs(t, ro, run.ID, "read-only")
}

// TestALostOrForeignSidecarIsRebuilt: when the sidecar is deleted, or is
// another store's, the store's runs indexed there count as not indexed
// (their searches read rows, with the same answers), a read-only open does
// not use the foreign one, and IndexPending indexes them again into a
// fresh sidecar.
func TestALostOrForeignSidecarIsRebuilt(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"deleted", "another store's"} {
		t.Run(how, func(t *testing.T) {
			db, path := openFile(t)
			run := writeSideRun(t, db)
			db.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(SidePath(path) + suffix)
			}
			if how == "another store's" {
				other, otherPath := openFile(t)
				writeSideRun(t, other)
				other.Close()
				b, err := os.ReadFile(SidePath(otherPath))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(SidePath(path), b, 0o600); err != nil {
					t.Fatal(err)
				}
				ro, err := OpenReadOnly(ctx, path)
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := ro.TextIndexed(ctx, run.ID); ok || err != nil {
					t.Fatalf("read-only with a foreign sidecar: TextIndexed = %v, %v; want false", ok, err)
				}
				searchSeqs(t, ro, run.ID, "read-only, foreign sidecar")
				ro.Close()
			}

			db2, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer db2.Close()
			if place, indexed := placeOf(t, db2, run.ID); place != "side" || indexed {
				t.Fatalf("after the sidecar was %s: place %q, indexed %v; want side, not indexed", how, place, indexed)
			}
			if n := sideTerms(t, db2); n != 0 {
				t.Fatalf("the new sidecar holds %d trigrams; want it emptied", n)
			}
			searchSeqs(t, db2, run.ID, "not indexed")
			var calls [][3]int64
			if _, err := db2.IndexPending(ctx, func(id int64, i, n int) { calls = append(calls, [3]int64{id, int64(i), int64(n)}) }); err != nil {
				t.Fatal(err)
			}
			if want := [][3]int64{{run.ID, 0, 1}, {0, 1, 1}}; !slices.Equal(calls, want) {
				t.Fatalf("IndexPending told %v, want %v", calls, want)
			}
			if place, indexed := placeOf(t, db2, run.ID); place != "side" || !indexed {
				t.Fatalf("after IndexPending: place %q, indexed %v; want side, indexed", place, indexed)
			}
			searchSeqs(t, db2, run.ID, "indexed again")
		})
	}
}

// TestADamagedSidecarIsReplaced: a sidecar that is not a SQLite database
// (random bytes, zeros) does not keep the store from opening: it is
// replaced by an empty one, the runs indexed there read rows (same answers)
// and IndexPending indexes them again; a read-only open reads rows.
func TestADamagedSidecarIsReplaced(t *testing.T) {
	ctx := context.Background()
	for name, junk := range map[string][]byte{"random bytes": []byte("\x8f\x11 not sqlite at all, \x00\x01 but long enough to look at: " + strings.Repeat("x", 5000)), "zeros": make([]byte, 100)} {
		t.Run(name, func(t *testing.T) {
			db, path := openFile(t)
			run := writeSideRun(t, db)
			db.Close()
			for _, suffix := range []string{"-wal", "-shm"} {
				os.Remove(SidePath(path) + suffix)
			}
			if err := os.WriteFile(SidePath(path), junk, 0o600); err != nil {
				t.Fatal(err)
			}
			ro, err := OpenReadOnly(ctx, path)
			if err != nil {
				t.Fatalf("OpenReadOnly with a damaged sidecar: %v", err)
			}
			searchSeqs(t, ro, run.ID, "read-only, damaged sidecar")
			ro.Close()
			db2, err := Open(ctx, path)
			if err != nil {
				t.Fatalf("Open with a damaged sidecar: %v", err)
			}
			defer db2.Close()
			searchSeqs(t, db2, run.ID, "sidecar replaced")
			if _, err := db2.IndexPending(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if ok, err := db2.TextIndexed(ctx, run.ID); !ok || err != nil {
				t.Fatalf("after IndexPending: TextIndexed = %v, %v", ok, err)
			}
			searchSeqs(t, db2, run.ID, "indexed again")
		})
	}
}

// TestAnInMemoryStoreIndexesInItsOwnTable: a store without a file has no
// sidecar; its runs are indexed in verdict_fts (place main).
func TestAnInMemoryStoreIndexesInItsOwnTable(t *testing.T) {
	db := openMem(t)
	run := writeSideRun(t, db)
	if place, indexed := placeOf(t, db, run.ID); place != "main" || !indexed {
		t.Fatalf("run_search: place %q, indexed %v; want main, indexed", place, indexed)
	}
	searchSeqs(t, db, run.ID, "in memory")
}

// TestARunThatFillsItsLastBatchCommitsWhole: when a run's rows fill its
// batches exactly, the last one is still being written behind when Commit
// starts (no rows are left for Commit's own batch); Commit waits for it
// before the run becomes visible (this panicked once, when Commit stopped
// an index writer under it), and the run is whole and indexable.
func TestARunThatFillsItsLastBatchCommitsWhole(t *testing.T) {
	db, _ := openFile(t)
	db.batchRows = len(sideTexts)
	run := writeSideRun(t, db)
	if n := count(t, db, "verdict"); n != len(sideTexts) {
		t.Fatalf("%d verdict rows after Commit, want %d", n, len(sideTexts))
	}
	searchSeqs(t, db, run.ID, "after a commit with no rows left")
	if err := db.IndexRunText(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	searchSeqs(t, db, run.ID, "indexed")
}

// TestOneIndexerPerRun: while one IndexRunText holds a run's index lock
// (another process, here a lock taken as it would), a second returns
// ErrIndexBusy at once and IndexPending leaves the run to it; once the lock
// is free the run is indexed.
func TestOneIndexerPerRun(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	run := writeSideRun(t, db)
	lk, ok, err := db.tryLock("index", run.ID, true)
	if err != nil || !ok {
		t.Fatalf("taking the index lock: %v, %v", ok, err)
	}
	if err := db.IndexRunText(ctx, run.ID); !errors.Is(err, ErrIndexBusy) {
		t.Fatalf("IndexRunText under another's lock: %v, want ErrIndexBusy", err)
	}
	if busy, err := db.IndexPending(ctx, nil); busy != 1 || err != nil {
		t.Fatalf("IndexPending under another's lock: %d busy, %v; want 1, nil (the run left to it)", busy, err)
	}
	if _, indexed := placeOf(t, db, run.ID); indexed {
		t.Fatal("indexed while another indexer held the lock")
	}
	lk.release()
	if busy, err := db.IndexPending(ctx, nil); busy != 0 || err != nil {
		t.Fatalf("IndexPending after the lock was released: %d busy, %v", busy, err)
	}
	if _, indexed := placeOf(t, db, run.ID); !indexed {
		t.Fatal("not indexed after the lock was released")
	}
	searchSeqs(t, db, run.ID, "indexed")
}
