package store

import (
	"fmt"
	"runtime"
	"testing"
)

// walFrames is the number of frames in db's WAL now (PRAGMA
// wal_checkpoint's log, which also copies them back: the WAL restarts only
// when a writer begins after that).
func walFrames(t *testing.T, db *DB) int {
	t.Helper()
	var busy, log, copied int
	if err := db.sql.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		t.Fatal(err)
	}
	return log
}

// The WAL restarts under steady live traffic ("The WAL's restart" in
// live.go): groups committed while the background checkpoint runs are left
// over in the WAL (here: two, from its done hook after its two passes —
// the first restarts the WAL, all of it copied by then; the second, which
// begins with the first's frames not copied, cannot), so the next group
// would find it not fully copied and append; instead it first copies the
// rest on its own connection (catchUpWAL) and then, beginning with every
// frame copied, writes the WAL from its start again — after it, the WAL
// holds its own frames only, fewer than the two groups' before.
func TestTheNextLiveGroupCatchesUpAndRestartsTheWAL(t *testing.T) {
	db, _ := openFile(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	q := liveQueueOf(db)
	during := make(chan error, 1)
	q.ckpt.done = func(log, copied int, err error) {
		if err == nil {
			_, _, err = tryLive(db, ds, j, liveTurn("X1", "", false, "응", "그래."))
		}
		if err == nil {
			_, _, err = tryLive(db, ds, j, bigCall("D", 100)...)
		}
		during <- err
	}
	caught := make(chan [2]int, 1)
	q.ckpt.caughtUp = func(log, copied int) { caught <- [2]int{log, copied} }

	judgeLive(t, db, ds, j, bigCall("A", liveCheckpointTurns+50)...)
	if err := <-during; err != nil {
		t.Fatalf("the background checkpoint or the group committed during it: %v", err)
	}
	for q.ckpt.running.Load() { // the checkpoint goroutine ends right after its done hook
		runtime.Gosched()
	}
	judgeLive(t, db, ds, j, liveTurn("E1", "", false, "또?", "응."))
	var c [2]int
	select {
	case c = <-caught:
	default:
		t.Fatal("the group after the background checkpoint did not catch up")
	}
	if c[0] == 0 || c[1] != c[0] {
		t.Fatalf("catch-up: WAL of %d frames, %d copied; want the two groups' frames, all of them", c[0], c[1])
	}
	// Not restarted, the WAL would hold X1's, D's and E1's frames.
	n := walFrames(t, db)
	if n == 0 || n >= c[0] {
		t.Fatalf("after the catch-up the WAL holds %d frames; want E1's alone, fewer than the %d before", n, c[0])
	}
	select {
	case c = <-caught:
		t.Fatalf("a second catch-up (%v) with no checkpoint between", c)
	default:
	}
}

// A background checkpoint starts after liveCheckpointGroups committed
// groups however few their turns (each single-turn group writes a page of
// each B-tree it touches), not only after liveCheckpointTurns turns. The
// start is decided in the committing call (running is set before it
// returns); the checkpoint itself waits here until released.
func TestSmallLiveGroupsStartACheckpointByTheirCount(t *testing.T) {
	db, _ := openFile(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	q := liveQueueOf(db)
	release, done := make(chan struct{}), make(chan error, 1)
	q.ckpt.start = func() { <-release }
	q.ckpt.done = func(_, _ int, err error) { done <- err }
	for n := 1; n <= liveCheckpointGroups; n++ {
		judgeLive(t, db, ds, j, liveTurn(fmt.Sprintf("T%d", n), "", false, "응", "그래."))
		if running := q.ckpt.running.Load(); running != (n == liveCheckpointGroups) {
			t.Fatalf("after %d single-turn groups a checkpoint running: %v; want one from group %d on", n, running, liveCheckpointGroups)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
