package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"evident/persona"
)

// lockFiles lists the writer lock files beside a database file.
func lockFiles(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, kind := range []string{"import", "run"} {
		for id := 1; id <= 5; id++ {
			p := fmt.Sprintf("%s-%s-%d.lock", path, kind, id)
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

func TestBoundedImport(t *testing.T) {
	ctx := context.Background()
	turns, recs := synthSet(10)
	s := loadSeed(t)

	t.Run("an import written in batches is invisible until its last batch lands", func(t *testing.T) {
		db, path := openFile(t)
		db.batchRows = 4
		im, err := db.BeginImport(ctx, "batched")
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		for i := range turns {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		// 10 rows in batches of 4: two batches committed (the second
		// written behind: settle waits for it), two rows held.
		im.b.settle()
		if n := count(t, db, "chat_turn"); n != 8 {
			t.Fatalf("%d chat_turn rows committed mid-import, want 8", n)
		}
		if got := lockFiles(t, path); len(got) != 1 || !strings.HasSuffix(got[0], "-import-1.lock") {
			t.Fatalf("lock files %q, want the import's", got)
		}
		if ds, err := db.Datasets(ctx); err != nil || len(ds) != 0 {
			t.Fatalf("Datasets mid-import: %v, %v", ds, err)
		}
		if _, err := db.Dataset(ctx, im.ID()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Dataset mid-import: %v, want ErrNotFound", err)
		}
		if _, err := db.DatasetTable(ctx, im.ID(), TableTurns); !errors.Is(err, ErrNotFound) {
			t.Fatalf("DatasetTable mid-import: %v, want ErrNotFound", err)
		}
		if _, err := db.BeginRun(ctx, RunMeta{DatasetID: im.ID(), Profile: "seed"}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("BeginRun on the incomplete dataset: %v, want ErrNotFound", err)
		}
		if err := db.UpdateCard(ctx, im.ID(), s.cards[0]); !errors.Is(err, ErrNotFound) {
			t.Fatalf("UpdateCard mid-import: %v, want ErrNotFound", err)
		}
		id, err := im.Commit()
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Turns(ctx, id)
		if err != nil || len(got) != 10 || got[0].TurnID != "T00000" || got[9].TurnID != "T00009" {
			t.Fatalf("after commit %d turns, %v", len(got), err)
		}
		if ds, err := db.Datasets(ctx); err != nil || len(ds) != 1 || ds[0].Turns != 10 {
			t.Fatalf("Datasets after commit: %+v, %v", ds, err)
		}
		if got := lockFiles(t, path); len(got) != 0 {
			t.Fatalf("lock files left after commit: %q", got)
		}
	})

	t.Run("Rollback deletes the committed batches, also after the context was cancelled", func(t *testing.T) {
		db, path := openFile(t)
		db.batchRows = 3
		cctx, cancel := context.WithCancel(ctx)
		im, err := db.BeginImport(cctx, "cancelled")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.cards {
			if err := im.AddCard(c); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 7 {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, db, "chat_turn") + count(t, db, "character_card"); n < 6 {
			t.Fatalf("only %d rows committed before the cancel", n)
		}
		cancel()
		if err := im.AddTurn(&turns[7]); err != nil {
			t.Logf("add after cancel: %v", err)
		}
		if err := im.Rollback(); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"dataset", "chat_turn", "character_card"} {
			if n := count(t, db, table); n != 0 {
				t.Errorf("%s has %d rows after the rollback", table, n)
			}
		}
		if got := lockFiles(t, path); len(got) != 0 {
			t.Fatalf("lock files left after rollback: %q", got)
		}
	})

	t.Run("a turn_id repeated from an earlier batch fails when its batch is written, and nothing stays", func(t *testing.T) {
		db := openMem(t)
		db.batchRows = 2
		im, err := db.BeginImport(ctx, "dup")
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 1, 2} {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		// This row fills the second batch, which is written behind: its
		// error comes with a call after the write ended (settle waits for
		// that).
		if err := im.AddTurn(&turns[0]); err != nil {
			t.Fatalf("the row that fills a batch written behind: %v, want nil", err)
		}
		im.b.settle()
		err = im.AddTurn(&turns[3])
		if err == nil || !strings.Contains(err.Error(), `"T00000" (row 4)`) || !strings.Contains(err.Error(), "UNIQUE") {
			t.Fatalf("repeat from an earlier batch: %v, want the UNIQUE error naming row 4", err)
		}
		if _, cerr := im.Commit(); cerr == nil || cerr.Error() != err.Error() {
			t.Fatalf("Commit: %v, want %v", cerr, err)
		}
		if n := count(t, db, "chat_turn") + count(t, db, "dataset"); n != 0 {
			t.Fatalf("%d rows left", n)
		}
	})

	t.Run("a live writer of another handle is left alone by Open and BeginImport", func(t *testing.T) {
		db, path := openFile(t)
		db.batchRows = 2
		im, err := db.BeginImport(ctx, "alive")
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		for i := range 5 {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		im.b.settle()                 // the second batch is written behind: let it land
		other, err := Open(ctx, path) // reclaims dead writers only
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		oim, err := other.BeginImport(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		if err := oim.Rollback(); err != nil {
			t.Fatal(err)
		}
		if n := count(t, other, "chat_turn"); n != 4 {
			t.Fatalf("the live import has %d committed rows after the other handle's reclaim, want 4", n)
		}
		id, err := im.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if d, err := other.Dataset(ctx, id); err != nil || d.Turns != 5 {
			t.Fatalf("the other handle sees %+v, %v", d, err)
		}
	})

	t.Run("an in-memory writer that ended without its rows deleted is reclaimed", func(t *testing.T) {
		db := openMem(t)
		db.batchRows = 2
		im, err := db.BeginImport(ctx, "dropped")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		// As a Rollback whose deletes failed: the lock is gone, the rows stay.
		im.b.settle()
		im.done = true
		im.lk.release()
		if n := count(t, db, "chat_turn"); n != 4 {
			t.Fatalf("%d rows before the reclaim", n)
		}
		if _, err := db.ImportDataset(ctx, "next", turns[:1], nil, nil); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db, "chat_turn"); n != 1 {
			t.Fatalf("%d chat_turn rows after the next import, want its 1", n)
		}
	})

	t.Run("a run written in batches is invisible until Commit, and a rollback leaves nothing", func(t *testing.T) {
		db, path := openFile(t)
		db.batchRows = 3
		for _, commit := range []bool{true, false} {
			w, err := db.BeginRun(ctx, testMeta)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Reject(persona.Reject{File: "turns.jsonl", Line: 2, Reason: "malformed JSON"}); err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				if err := w.Add(recs[i], &turns[i]); err != nil {
					t.Fatal(err)
				}
			}
			w.b.settle()
			if n := count(t, db, "verdict"); n < 8 {
				t.Fatalf("%d verdict rows committed mid-run", n)
			}
			if _, err := db.Run(ctx, w.ID()); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Run mid-run: %v, want ErrNotFound", err)
			}
			if _, err := db.Records(ctx, w.ID(), Filter{}); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Records mid-run: %v, want ErrNotFound", err)
			}
			if runs, err := db.Runs(ctx); err != nil || len(runs) > 1 || (len(runs) == 1 && runs[0].ID == w.ID()) {
				t.Fatalf("Runs mid-run: %+v, %v", runs, err)
			}
			if _, err := db.RunRecords(ctx, w.ID()); !errors.Is(err, ErrNotFound) {
				t.Fatalf("RunRecords mid-run: %v", err)
			}
			if !commit {
				if err := w.Rollback(); err != nil {
					t.Fatal(err)
				}
				continue
			}
			run, err := w.Commit(tallyOf(recs, 1))
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.Records(ctx, run.ID, Filter{})
			if err != nil || len(got) != 10 {
				t.Fatalf("%d records after commit, %v", len(got), err)
			}
			if rj, err := db.Rejects(ctx, run.ID); err != nil || len(rj) != 1 {
				t.Fatalf("rejects %+v, %v", rj, err)
			}
		}
		if n := count(t, db, "run"); n != 1 {
			t.Fatalf("%d runs, want the committed one", n)
		}
		if n := count(t, db, "verdict"); n != 10 {
			t.Fatalf("%d verdict rows, want the committed run's 10", n)
		}
		if got := lockFiles(t, path); len(got) != 0 {
			t.Fatalf("lock files left: %q", got)
		}
	})
}

// TestKilledBatches: a writer killed (SIGKILL) after some batches were
// committed leaves them invisible to every reader, its lock file free, and
// the next Open deletes them and the lock file.
func TestKilledBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	old := vacuumFreeMin
	vacuumFreeMin = 64 << 10 // the killed writers leave 2-4 MB: vacuumed below
	t.Cleanup(func() { vacuumFreeMin = old })
	for _, mode := range []string{"import", "run"} {
		t.Run("a killed "+mode+"'s committed batches are invisible and the next Open removes them", func(t *testing.T) {
			path := t.TempDir() + "/evident.db"
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "EVIDENT_STORE_KILL_DB="+path, "EVIDENT_STORE_KILL_MODE="+mode)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "ready") {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child said %q, %v", line, err)
			}
			cmd.Process.Kill()
			cmd.Wait()
			table, rows := "chat_turn", "dataset"
			if mode == "run" {
				table, rows = "verdict", "run"
			}
			ro, err := OpenReadOnly(context.Background(), path) // reads, reclaims nothing
			if err != nil {
				t.Fatal(err)
			}
			if n := count(t, ro, table); n != 20000 {
				t.Fatalf("%d %s rows committed by the killed %s, want its 4 batches of 5,000", n, table, mode)
			}
			if ds, err := ro.Datasets(context.Background()); err != nil || len(ds) != 0 {
				t.Fatalf("datasets %+v, %v", ds, err)
			}
			if rs, err := ro.Runs(context.Background()); err != nil || len(rs) != 0 {
				t.Fatalf("runs %+v, %v", rs, err)
			}
			ro.Close()
			if got := lockFiles(t, path); len(got) != 1 {
				t.Fatalf("lock files %q, want the dead writer's", got)
			}
			db, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if n := count(t, db, table) + count(t, db, rows); n != 0 {
				t.Fatalf("%d rows left after the reclaim", n)
			}
			if got := lockFiles(t, path); len(got) != 0 {
				t.Fatalf("lock files left after the reclaim: %q", got)
			}
			// The store held nothing else: its freed pages went back to the
			// file system (shrinkAfterRollback), as after a rollback.
			if pages, free := pageFigures(t, db); free != 0 {
				t.Fatalf("%d of %d pages free after the reclaim, want the store vacuumed", free, pages)
			}
		})
	}
}

// TestDecisionsDuringImport: review decisions made while an import writes
// are all saved (issue 13: 20 of 100 failed with SQLITE_BUSY when the
// import was one transaction). The import keeps producing turns until the
// hundredth decision is saved, so every decision meets it mid-write.
func TestDecisionsDuringImport(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	db.batchRows = 500
	var stop atomic.Bool
	started := make(chan struct{})
	const most = 2_000_000
	var produced int
	var wg sync.WaitGroup
	var importErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		var tu persona.Turn
		_, importErr = db.ImportStream(ctx, "busy", nil, nil, func() (*persona.Turn, error) {
			if stop.Load() || produced == most {
				return nil, io.EOF
			}
			if produced == 2*db.batchRows {
				close(started) // two batches are in
			}
			tu = persona.Turn{TurnID: fmt.Sprintf("T%07d", produced), SessionID: "S", CharacterID: "C", ModelID: "m",
				ReplyText: sp("답장이야.")}
			produced++
			return &tu, nil
		})
	}()
	<-started
	var failed []error
	for i := range 100 {
		if _, err := db.Decide(ctx, Decision{Queue: QueueForbidden, Key: fmt.Sprintf("T%d", i), Value: "confirm", Who: "editor"}); err != nil {
			failed = append(failed, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if importErr != nil {
		t.Fatal(importErr)
	}
	if len(failed) > 0 {
		t.Fatalf("%d of 100 decisions failed, first: %v", len(failed), failed[0])
	}
	ds, err := db.Decisions(ctx, QueueForbidden)
	if err != nil || len(ds) != 100 {
		t.Fatalf("%d decisions saved, %v", len(ds), err)
	}
	if produced == most {
		t.Fatal("the import ended before the decisions did")
	}
	t.Logf("the import wrote %d turns meanwhile", produced)
}
