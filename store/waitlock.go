package store

import (
	"context"
	"os"
	"time"
)

// Waiting writers (issue 13 item 2: review decisions made while an import
// runs). SQLite gives its write lock to whoever asks when it is free, and a
// writer kept out waits in its busy handler, sleeping up to 100 ms between
// tries. An import (of this or another process) commits batch after batch
// with little between them, so such a writer seldom found the lock free:
// decisions made during a 1,000,000-turn import of another process waited
// up to 0.9 s (p99 0.84 s, bench/store.sh).
//
// So a small write that may wait for the lock (inTxRetry: decisions,
// undo, gold labels, card edits, review queues) announces it: it holds a
// shared flock(2) on PATH-wait.lock from before BEGIN to after COMMIT
// (announceWait). A bulk writer, right after it committed a batch and
// before it begins the next, takes that file's exclusive lock without
// waiting: when it gets it nobody is waiting and it goes on at once;
// otherwise it tries again every yieldPoll, for at most yieldMax, while the
// waiting writes get the free lock (yieldToWaiters). An import is slowed
// only while someone waits, by at most yieldMax a batch. The bulk writer
// creates the file; a small write only opens it, so with no import running
// it costs nothing and leaves nothing; the last writer of a process to end
// removes it (bulkDone), and so does reclaim when no writer's lock file is
// left (one killed mid-import). A memory store, a read-only one and a
// system without flock have none, and writers there wait as before.

// Bounds of yieldToWaiters.
const (
	yieldPoll = time.Millisecond
	yieldMax  = 250 * time.Millisecond
)

// While writes keep waiting (a yield found one in the last chunkWindow),
// a bulk writer writes each batch in transactions of chunkRows rows and
// yields between them for yieldMax × chunkRows / batch rows: a write waits
// for a transaction of chunkRows rows instead of a whole batch, and the
// import is held back by at most as much per row as with whole batches.
// Measured (live single turns sent back to back with curl while another
// process imported 300,000 turns, three runs each): p99 233-345 ms → 83-84
// ms, max 235-457 → 110-335 ms; 3 times as many live turns were answered
// meanwhile, and the import took 37 % longer (26.9 → 36.9 s) for the turns
// it let in. An import with no write waiting is unchanged.
const (
	chunkRows   = 500
	chunkWindow = 2 * time.Second
)

func (db *DB) waitPath() string { return db.path + "-wait.lock" }

// announceWait takes the shared lock of a small write that may wait for
// SQLite's write lock; done releases it. Where there is no wait file (see
// above), or it cannot be opened, done does nothing.
func (db *DB) announceWait() (done func()) {
	if db.memory() || db.readOnly || !flockWorks {
		return func() {}
	}
	f, err := os.OpenFile(db.waitPath(), os.O_RDWR, 0)
	if err != nil {
		return func() {} // no bulk writer made it: none to let this write in
	}
	if shareFile(f) != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing releases the lock
}

// yieldToWaiters lets the small writes that announced they wait
// (announceWait) take SQLite's write lock before a bulk writer's next
// batch: it returns once none waits, after at most yieldMax, or when ctx
// ends. It must be called without the write lock (between two
// transactions). yielded says whether anyone was waiting.
func (db *DB) yieldToWaiters(ctx context.Context) (yielded bool) {
	return db.yieldFor(ctx, db.yieldMax())
}

// yieldFor is yieldToWaiters with bound in place of yieldMax. A yield that
// found a write waiting stamps db.waitedAt (batches are then written in
// chunks: writeBatch.write).
func (db *DB) yieldFor(ctx context.Context, bound time.Duration) (yielded bool) {
	if db.memory() || db.readOnly || !flockWorks {
		return false
	}
	defer func() {
		if yielded {
			db.waitedAt.Store(time.Now().UnixNano())
		}
	}()
	f, err := os.OpenFile(db.waitPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	deadline := time.Now().Add(bound)
	for {
		ok, err := lockFile(f)
		if err != nil || ok {
			return yielded // closing f releases the lock
		}
		yielded = true
		if db.onYield != nil {
			db.onYield()
		}
		if !time.Now().Before(deadline) {
			return true
		}
		t := time.NewTimer(yieldPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return true
		case <-t.C:
		}
	}
}

// waitersSeen reports whether a yield found a write waiting in the last
// chunkWindow: writes (a live stream, a reviewer's decisions) are then
// likely to wait for the next batch too.
func (db *DB) waitersSeen() bool {
	at := db.waitedAt.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < chunkWindow
}

// yieldMax is yieldMax, or the test's bound.
func (db *DB) yieldMax() time.Duration {
	if db.yieldBound != nil {
		return *db.yieldBound
	}
	return yieldMax
}

// removeWaitFile removes the wait file (bulkDone, reclaim). A write that
// announced itself on the removed file is then not seen by a bulk writer
// that creates a new one: it waits as it would without the file.
func (db *DB) removeWaitFile() {
	if db.memory() || db.readOnly || !flockWorks {
		return
	}
	os.Remove(db.waitPath())
}
