package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"testing"
	"time"
)

// A small write that waits for SQLite's lock (announceWait) holds a bulk
// writer back between two batches (yieldToWaiters) until it is done, and
// only then; the store's two handles stand for two processes.
func TestABulkWriterLetsAWaitingWriteIn(t *testing.T) {
	if !flockWorks {
		t.Skip("no flock on this system: writers wait as before")
	}
	ctx := context.Background()
	never := time.Hour // the test ends a yield by state, never by its bound

	t.Run("with nobody waiting it goes on at once", func(t *testing.T) {
		db, _ := openFile(t)
		db.yieldBound = &never
		if db.yieldToWaiters(ctx) {
			t.Fatal("yielded with nobody waiting")
		}
	})

	t.Run("a waiting write holds it until the write is done", func(t *testing.T) {
		db, path := openFile(t)
		db.yieldBound = &never
		other, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		db.yieldToWaiters(ctx) // as an import's first batch does, it makes the file
		done := other.announceWait()
		found := make(chan struct{})
		var once sync.Once
		db.onYield = func() { once.Do(func() { close(found) }) }
		res := make(chan bool, 1)
		go func() { res <- db.yieldToWaiters(ctx) }()
		<-found // it saw the waiting write
		select {
		case y := <-res:
			t.Fatalf("yieldToWaiters returned %v while the write still waits", y)
		default:
		}
		done()
		if y := <-res; !y {
			t.Fatal("yieldToWaiters says nobody waited")
		}
	})

	t.Run("a write that stays holds it back at most the bound", func(t *testing.T) {
		db, path := openFile(t)
		zero := time.Duration(0)
		db.yieldBound = &zero
		other, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		db.yieldToWaiters(ctx)
		done := other.announceWait()
		defer done()
		if !db.yieldToWaiters(ctx) {
			t.Fatal("yieldToWaiters says nobody waited")
		}
	})

	t.Run("an import waits after a batch for a decision that waits", func(t *testing.T) {
		db, path := openFile(t)
		db.batchRows = 2
		db.yieldBound = &never
		other, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		found := make(chan struct{})
		var once sync.Once
		db.onYield = func() { once.Do(func() { close(found) }) }
		im, err := db.BeginImport(ctx, "yield")
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		db.yieldToWaiters(ctx) // the file an earlier batch made
		done := other.announceWait()
		turns, _ := synthSet(2)
		for i := range turns {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
		<-found // the batch committed, and its writer waits
		if n := count(t, db, "chat_turn"); n != 2 {
			t.Fatalf("%d rows committed before the yield, want the batch's 2", n)
		}
		// The decision gets the lock the import left free.
		if _, err := other.Decide(ctx, Decision{Queue: QueueForbidden, Key: "k", Value: "v", Who: "me"}); err != nil {
			t.Fatal(err)
		}
		done()
		im.b.settle()
		if err := im.b.settled.err; err != nil {
			t.Fatal(err)
		}
		if _, err := im.Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(db.waitPath()); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the wait file after the import ended: %v, want it removed", err)
		}
	})

	t.Run("a write with no import running makes no file, and reclaim removes one a killed import left", func(t *testing.T) {
		db, path := openFile(t)
		if _, err := db.Decide(ctx, Decision{Queue: QueueForbidden, Key: "k", Value: "v", Who: "me"}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(db.waitPath()); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a decision with no import running: wait file %v, want none", err)
		}
		db.yieldToWaiters(ctx) // an import's batch made it, then its process was killed
		db.Close()
		again, err := Open(ctx, path) // reclaims
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		if _, err := os.Stat(again.waitPath()); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("after reopening: wait file %v, want it removed", err)
		}
	})
}

// A live call's group announces itself as a decision does: another
// process's import that just committed a batch waits for the group's
// transaction to end before it begins the next.
func TestALiveGroupHoldsAnImportBackWhileItWrites(t *testing.T) {
	if !flockWorks {
		t.Skip("no flock on this system: writers wait as before")
	}
	ctx := context.Background()
	never := time.Hour
	bulk, path := openFile(t)
	ds := liveDataset(t, bulk)
	bulk.yieldBound = &never
	live, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	bulk.yieldToWaiters(ctx) // an import's first batch makes the wait file
	inTx, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	live.onLiveTx = func() { once.Do(func() { close(inTx); <-release }) }
	called := make(chan error, 1)
	go func() {
		_, _, err := tryLive(live, ds, liveJudge(t), liveTurn("T1", "", false, "응", "그래."))
		called <- err
	}()
	<-inTx // the group's transaction has begun
	found := make(chan struct{})
	var seen sync.Once
	bulk.onYield = func() { seen.Do(func() { close(found) }) }
	yielded := make(chan bool, 1)
	go func() { yielded <- bulk.yieldToWaiters(ctx) }()
	<-found // the import sees the group
	select {
	case y := <-yielded:
		t.Fatalf("yieldToWaiters returned %v while the live group writes", y)
	default:
	}
	close(release)
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	if y := <-yielded; !y {
		t.Fatal("yieldToWaiters says nobody waited")
	}
}

// While writes keep waiting, an import writes each batch in transactions of
// chunkRows rows with a yield after each, so a waiting write waits for a
// chunk, not a whole batch.
func TestAnImportWritesInChunksWhileWritesKeepWaiting(t *testing.T) {
	if !flockWorks {
		t.Skip("no flock on this system: writers wait as before")
	}
	ctx := context.Background()
	never := time.Hour
	db, path := openFile(t)
	db.batchRows, db.chunkBound, db.yieldBound = 6, 2, &never
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	im, err := db.BeginImport(ctx, "chunks")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	db.yieldToWaiters(ctx) // the wait file an earlier batch made
	// seen gets the rows committed when a yield finds a write waiting.
	seen := make(chan int, 16)
	last := -1
	db.onYield = func() {
		var n int
		if err := db.sql.QueryRow("SELECT count(*) FROM chat_turn").Scan(&n); err != nil {
			n = -2
		}
		if n != last {
			last = n
			seen <- n
		}
	}
	turns, _ := synthSet(12)
	add := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := im.AddTurn(&turns[i]); err != nil {
				t.Fatal(err)
			}
		}
	}

	done := other.announceWait()
	defer func() { done() }() // on a failure too, before im.Rollback waits for the writer
	add(0, 6)                 // the first batch, with no write seen waiting before it: one transaction
	if n := <-seen; n != 6 {
		t.Fatalf("the first yield came after %d rows, want the whole batch of 6", n)
	}
	done()
	im.b.settle()               // the first batch's yield has ended
	done = other.announceWait() // writes keep waiting
	add(6, 12)
	if n := <-seen; n != 8 {
		t.Fatalf("the next yield came after %d rows, want 8: the first chunk (2 rows) of the second batch", n)
	}
	done()
	if _, err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "chat_turn"); n != 12 {
		t.Fatalf("%d rows after the commit, want 12", n)
	}
}
