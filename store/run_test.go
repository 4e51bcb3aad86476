package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"evident/persona"
)

var testMeta = RunMeta{Profile: "seed", Endings: []string{"요", "죠", "니다", "십시오"},
	Fingerprints:  map[string]string{"chat_turn": strings.Repeat("a", 64), "character_card": strings.Repeat("b", 64)},
	PromptVersion: "summary-v1"}

func TestRuns(t *testing.T) {
	ctx := context.Background()
	s := loadSeed(t)

	t.Run("every record reads back deeply equal to the record written", func(t *testing.T) {
		db := openMem(t)
		run := writeRun(t, db, testMeta, s.records, s.turns)
		got, err := db.Records(ctx, run.ID, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s.records) {
			for i := range got {
				if !reflect.DeepEqual(got[i], s.records[i]) {
					t.Errorf("record %d:\n got %#v\nwant %#v", i, got[i], s.records[i])
				}
			}
			t.FailNow()
		}
		// Synthetic records cover what the seed may not: int counts, empty lists.
		_, recs := synthSet(20)
		run2 := writeRun(t, db, testMeta, recs, nil)
		got, err = db.Records(ctx, run2.ID, Filter{})
		if err != nil || !reflect.DeepEqual(got, recs) {
			t.Fatalf("synthetic records differ (%v)", err)
		}
	})

	t.Run("a committed run lists with its meta and tally", func(t *testing.T) {
		db := openMem(t)
		start := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
		fixedClock(db, start)
		ds, err := db.ImportDataset(ctx, "seed", s.turns, s.cards, s.lexicon)
		if err != nil {
			t.Fatal(err)
		}
		meta := testMeta
		meta.DatasetID = ds
		first := writeRun(t, db, meta, s.records, s.turns)
		second := writeRun(t, db, RunMeta{Profile: "extended"}, s.records[:2], nil)
		runs, err := db.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || runs[0].ID != second.ID || runs[1].ID != first.ID {
			t.Fatalf("runs %+v, want newest first", runs)
		}
		got := runs[1]
		if !reflect.DeepEqual(got.RunMeta, meta) {
			t.Errorf("meta %+v, want %+v", got.RunMeta, meta)
		}
		want := tallyOf(s.records, 0)
		for _, v := range persona.Verdicts {
			if got.Tally.ByVerdict[v] != want.ByVerdict[v] {
				t.Errorf("%s: %d, want %d", v, got.Tally.ByVerdict[v], want.ByVerdict[v])
			}
		}
		if got.Tally.Judged != len(s.records) || !got.StartedAt.Before(got.FinishedAt) || got.StartedAt.Before(start) {
			t.Errorf("run %+v", got)
		}
		if r, err := db.Run(ctx, first.ID); err != nil || !reflect.DeepEqual(r, got) {
			t.Errorf("Run(%d) = %+v, %v", first.ID, r, err)
		}
		// What Commit returns is what the readers return.
		if !reflect.DeepEqual(first, got) || !reflect.DeepEqual(second, runs[0]) {
			t.Errorf("Commit returned\n%+v\n%+v\nreaders say\n%+v\n%+v", first, second, got, runs[0])
		}
		if r, err := db.LatestRun(ctx); err != nil || r.ID != second.ID || r.DatasetID != 0 {
			t.Errorf("LatestRun = %+v, %v", r, err)
		}
	})

	t.Run("with no run yet LatestRun is ErrNotFound", func(t *testing.T) {
		db := openMem(t)
		if _, err := db.LatestRun(ctx); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	})

	invisible := func(t *testing.T, db *DB, id int64) {
		t.Helper()
		if runs, err := db.Runs(ctx); err != nil || len(runs) != 0 {
			t.Errorf("Runs = %v, %v", runs, err)
		}
		if _, err := db.Run(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Run(%d): %v, want ErrNotFound", id, err)
		}
		if _, err := db.Records(ctx, id, Filter{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Records(%d): %v, want ErrNotFound", id, err)
		}
		if _, err := db.LatestRun(ctx); !errors.Is(err, ErrNotFound) {
			t.Errorf("LatestRun: %v, want ErrNotFound", err)
		}
	}

	t.Run("a rolled back run is invisible and leaves no rows", func(t *testing.T) {
		db := openMem(t)
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.records {
			if err := w.Add(s.records[i], &s.turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Rollback(); err != nil {
			t.Fatal(err)
		}
		invisible(t, db, w.ID())
		if n := count(t, db, "verdict") + count(t, db, "run"); n != 0 {
			t.Fatalf("%d rows left", n)
		}
		if err := w.Add(s.records[0], nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("Add after Rollback: %v, want ErrClosed", err)
		}
	})

	t.Run("a run not yet committed is invisible to other readers", func(t *testing.T) {
		db, _ := openFile(t)
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		for i := range s.records {
			if err := w.Add(s.records[i], &s.turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		invisible(t, db, w.ID())
	})

	t.Run("a run on a dataset that does not exist is refused", func(t *testing.T) {
		db := openMem(t)
		if _, err := db.BeginRun(ctx, RunMeta{DatasetID: 99, Profile: "seed"}); err == nil {
			t.Fatal("BeginRun accepted an unknown dataset")
		}
	})

	t.Run("a tally that disagrees with the records is refused and nothing is stored", func(t *testing.T) {
		db := openMem(t)
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.records {
			w.Add(s.records[i], nil)
		}
		tally := tallyOf(s.records, 0)
		tally.Judged--
		if _, err := w.Commit(tally); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Commit: %v, want ErrInvalid", err)
		}
		invisible(t, db, w.ID())
	})

	t.Run("a failed Add ends the run: Commit rolls back with Add's error", func(t *testing.T) {
		db := openMem(t)
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		w.Add(s.records[0], nil)
		addErr := w.Add(s.records[0], nil) // same turn_id twice
		if addErr == nil {
			t.Fatal("a duplicate turn_id was added")
		}
		if _, err := w.Commit(tallyOf(s.records[:1], 0)); err == nil || err.Error() != addErr.Error() {
			t.Fatalf("Commit: %v, want %v", err, addErr)
		}
		invisible(t, db, w.ID())
	})

	t.Run("a record with an invented verdict is refused", func(t *testing.T) {
		db := openMem(t)
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		r := s.records[0]
		r.Verdict = "대체로 괜찮음"
		if err := w.Add(r, nil); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Add: %v, want ErrInvalid", err)
		}
	})

	t.Run("rejected rows are stored with the run in order", func(t *testing.T) {
		db := openMem(t)
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		rejects := []persona.Reject{
			{File: "turns.jsonl", Line: 3, TurnID: sp("T-1"), Reason: "duplicate turn_id"},
			{File: "turns.jsonl", Line: 9, Reason: "malformed JSON"},
		}
		for _, r := range rejects {
			if err := w.Reject(r); err != nil {
				t.Fatal(err)
			}
		}
		w.Add(s.records[0], nil)
		run, err := w.Commit(tallyOf(s.records[:1], 2))
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Rejects(ctx, run.ID)
		if err != nil || !reflect.DeepEqual(got, rejects) {
			t.Fatalf("rejects %+v, %v", got, err)
		}
		if run.Tally.Rejected != 2 {
			t.Fatalf("tally %+v", run.Tally)
		}
	})
}

// TestKilled runs a child test process that writes an import or a run and is
// killed (SIGKILL) before committing; the database must hold nothing of it.
func TestKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for _, mode := range []string{"run", "import"} {
		t.Run("a process killed mid-"+mode+" leaves no half-written "+mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "evident.db")
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
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if fi, err := os.Stat(path + "-wal"); err == nil {
				t.Logf("the killed %s left a %d-byte WAL", mode, fi.Size())
			}
			db, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, table := range []string{"dataset", "chat_turn", "run", "verdict"} {
				if n := count(t, db, table); n != 0 {
					t.Errorf("%s has %d rows after the kill", table, n)
				}
			}
			// The database is usable afterwards.
			if _, err := db.Decide(context.Background(), Decision{Queue: QueueEnding, Key: "쇼", Value: "add", Who: "t"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestKilledHelper is the child of TestKilled; it does nothing in a normal
// test run.
func TestKilledHelper(t *testing.T) {
	path := os.Getenv("EVIDENT_STORE_KILL_DB")
	if path == "" {
		t.Skip("child process of TestKilled")
	}
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	const n = 20000 // enough to spill uncommitted pages into the WAL
	turns, recs := synthSet(n)
	switch os.Getenv("EVIDENT_STORE_KILL_MODE") {
	case "run":
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			fmt.Println("begin:", err)
			os.Exit(2)
		}
		for i := range recs {
			if err := w.Add(recs[i], &turns[i]); err != nil {
				fmt.Println("add:", err)
				os.Exit(2)
			}
		}
		w.b.settle() // the fourth batch is written behind: let it land
	case "importrun": // TestKilledImportRun
		im, err := db.BeginImport(ctx, "killed")
		if err != nil {
			fmt.Println("begin:", err)
			os.Exit(2)
		}
		w, err := im.BeginRun(testMeta)
		if err != nil {
			fmt.Println("begin run:", err)
			os.Exit(2)
		}
		for i := range turns {
			if err := im.AddTurn(&turns[i]); err != nil {
				fmt.Println("add:", err)
				os.Exit(2)
			}
			if err := w.Add(recs[i], &turns[i]); err != nil {
				fmt.Println("add:", err)
				os.Exit(2)
			}
		}
		im.b.settle()
		w.b.settle()
	case "import":
		im, err := db.BeginImport(ctx, "killed")
		if err != nil {
			fmt.Println("begin:", err)
			os.Exit(2)
		}
		for i := range turns {
			if err := im.AddTurn(&turns[i]); err != nil {
				fmt.Println("add:", err)
				os.Exit(2)
			}
		}
		im.b.settle()
	}
	fmt.Println("ready")
	time.Sleep(time.Minute) // killed here
	os.Exit(3)
}

func TestConcurrentReader(t *testing.T) {
	t.Run("a reader never sees part of a run while a writer adds records (WAL)", func(t *testing.T) {
		ctx := context.Background()
		db, path := openFile(t)
		// A second handle, as another process (the web screen) would have.
		reader, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer reader.Close()

		turns, recs := synthSet(3000)
		writeRun(t, db, testMeta, recs[:1000], turns[:1000])

		var stop atomic.Bool
		var reads, partial atomic.Int64
		var wg sync.WaitGroup
		errc := make(chan error, 4)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					runs, err := reader.Runs(ctx)
					if err != nil {
						errc <- err
						return
					}
					for _, r := range runs {
						got, err := reader.Records(ctx, r.ID, Filter{})
						if err != nil {
							errc <- err
							return
						}
						counts, err := reader.CountByVerdict(ctx, r.ID, Filter{})
						if err != nil {
							errc <- err
							return
						}
						total := 0
						for _, n := range counts {
							total += n
						}
						if len(got) != r.Tally.Judged || total != r.Tally.Judged {
							partial.Add(1)
						}
					}
					reads.Add(1)
				}
			}()
		}

		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		pending := recs[1000:]
		for i := range pending {
			if err := w.Add(pending[i], &turns[1000+i]); err != nil {
				t.Fatal(err)
			}
			if i == len(pending)/2 {
				// Mid-run: the reader still sees exactly the first run.
				runs, err := reader.Runs(ctx)
				if err != nil || len(runs) != 1 || runs[0].Tally.Judged != 1000 {
					t.Fatalf("mid-run the reader sees %+v, %v", runs, err)
				}
				before := reads.Load()
				for reads.Load() < before+3 {
					time.Sleep(time.Millisecond)
				}
			}
		}
		run, err := w.Commit(tallyOf(pending, 0))
		if err != nil {
			t.Fatal(err)
		}
		before := reads.Load()
		for reads.Load() < before+3 {
			time.Sleep(time.Millisecond)
		}
		stop.Store(true)
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		if partial.Load() != 0 {
			t.Fatalf("%d reads saw a partial run", partial.Load())
		}
		got, err := reader.Records(ctx, run.ID, Filter{})
		if err != nil || len(got) != len(pending) {
			t.Fatalf("after commit the reader sees %d records (%v)", len(got), err)
		}
		t.Logf("%d reads during the write", reads.Load())
	})
}
