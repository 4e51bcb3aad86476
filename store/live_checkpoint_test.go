package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

// bigCall is n turns of distinct sessions with long replies (some pages a
// turn), turn_ids prefixed by p.
func bigCall(p string, n int) []LiveTurn {
	out := make([]LiveTurn, n)
	for i := range out {
		lt := liveTurn(fmt.Sprintf("%s%d", p, i), "도윤", false, "가족은?", strings.Repeat("동생 도윤이 있어. ", 40))
		lt.Turn.SessionID = fmt.Sprintf("%sS%d", p, i%50)
		lt.Digest = live.Digest(lt.Turn)
		out[i] = lt
	}
	return out
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A live group commits without checkpointing (the database file does not
// grow: in WAL mode only a checkpoint writes it) and a background checkpoint
// after liveCheckpointTurns turns copies the WAL into the file; the
// connection is left with SQLite's default automatic checkpoint. When a
// checkpoint leaves the WAL over liveWALLimit pages, live groups checkpoint
// in their commit again (the file grows with the commit itself).
func TestLiveGroupsCheckpointInTheBackground(t *testing.T) {
	// Of 4 KiB pages (a store created before 16 KiB pages), so that
	// bigCall's 1,500 turns are over SQLite's 1,000-page checkpoint.
	path := filepath.Join(t.TempDir(), "evident.db")
	pageSizedFile(t, path, 4096)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.sql.SetMaxOpenConns(1) // one connection: the live group's is the one checked after
	ds := liveDataset(t, db)
	j := liveJudge(t)
	q := liveQueueOf(db)
	release := make(chan struct{})
	type result struct {
		log, copied int
		err         error
	}
	done := make(chan result, 1)
	q.ckpt.start = func() { <-release }
	q.ckpt.done = func(log, copied int, err error) { done <- result{log, copied, err} }
	judgeLive(t, db, ds, j, liveTurn("T0", "도윤", false, "가족은?", "동생 도윤이 있어."))
	before := fileSize(t, path)

	judgeLive(t, db, ds, j, bigCall("A", 1500)...) // over 1,000 pages: SQLite would checkpoint in the commit
	if after := fileSize(t, path); after != before {
		t.Fatalf("the database file grew from %d to %d bytes in the live commit: it checkpointed inline", before, after)
	}
	release <- struct{}{}
	r := <-done
	if r.err != nil || r.copied == 0 || r.log < r.copied {
		t.Fatalf("background checkpoint: log %d copied %d, %v; want frames copied", r.log, r.copied, r.err)
	}
	if after := fileSize(t, path); after <= before {
		t.Fatalf("the database file is %d bytes after the background checkpoint, want more than %d", after, before)
	}
	var auto int
	if err := db.sql.QueryRow("PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 1000 {
		t.Fatalf("the connection's wal_autocheckpoint after a live group: %d, %v; want 1000", auto, err)
	}
	if q.ckpt.inline.Load() {
		t.Fatal("inline checkpoints on after a checkpoint that left the WAL small")
	}

	// A WAL over the limit after a checkpoint: live commits checkpoint
	// themselves until one leaves it small.
	old := liveWALLimit
	liveWALLimit = 0
	defer func() { liveWALLimit = old }()
	judgeLive(t, db, ds, j, bigCall("B", liveCheckpointTurns+50)...)
	release <- struct{}{}
	if r := <-done; r.err != nil || !q.ckpt.inline.Load() {
		t.Fatalf("checkpoint over the limit: %v, inline %v; want inline on", r.err, q.ckpt.inline.Load())
	}
	before = fileSize(t, path)
	judgeLive(t, db, ds, j, bigCall("C", 1500)...) // over 1,000 pages; its background checkpoint waits
	if after := fileSize(t, path); after <= before {
		t.Fatalf("inline: the database file stayed %d bytes through the commit", after)
	}
	release <- struct{}{}
	<-done
	res, _ := judgeLive(t, db, ds, j, liveTurn("T9", "", true, "동생 이름이 뭐였지?", "글쎄, 몰라."))
	if r := recordOf(t, res[0].Record); r.Verdict != persona.RecallFailed {
		t.Fatalf("S1 after the checkpoints: %s", r.Verdict)
	}
}

// pageSizedFile creates an SQLite file at path whose pages are size bytes.
func pageSizedFile(t *testing.T, path string, size int) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA page_size = %d; CREATE TABLE made_by_test (x); DROP TABLE made_by_test", size)); err != nil {
		t.Fatal(err)
	}
}

func pageSize(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow("PRAGMA page_size").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A store file Open creates has 16 KiB pages; a file made before keeps
// its own (4 KiB, SQLite's default) and opens as before.
func TestANewStoreFileHas16KiBPages(t *testing.T) {
	db, _ := openFile(t)
	if n := pageSize(t, db); n != 16384 {
		t.Fatalf("new store: page_size %d, want 16384", n)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	pageSizedFile(t, path, 4096)
	old, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if n := pageSize(t, old); n != 4096 {
		t.Fatalf("store of 4 KiB pages: page_size %d after Open, want 4096", n)
	}
}
