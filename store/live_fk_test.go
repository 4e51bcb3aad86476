package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// The live writer's connection does not check foreign keys (liveInTx), so
// liveRun checks the dataset itself: a live call for a dataset that does
// not exist, or whose import has not committed, fails with ErrNotFound and
// stores nothing.
func TestALiveCallNeedsACompleteDataset(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	liveDataset(t, db)
	j := liveJudge(t)
	im, err := db.BeginImport(ctx, "importing")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for _, ds := range []int64{999, im.ID()} {
		_, _, err := tryLive(db, ds, j, liveTurn(fmt.Sprintf("T%d", ds), "", false, "응", "그래."))
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("dataset %d: %v, want ErrNotFound", ds, err)
		}
	}
	if n := count(t, db, "run") + count(t, db, "live_run") + count(t, db, "live_turn") + count(t, db, "verdict"); n != 0 {
		t.Fatalf("%d run, live_run, live_turn and verdict rows stored, want 0", n)
	}
}

// A call's verdict rows go in rowsPerInsert at a time: a call of 70 turns
// (two groups of 32 and 6 rows one at a time) stores 70 rows in order, each
// the record the call answered; and the connection given back to the pool
// checks foreign keys again.
func TestALargeLiveCallIsStoredRowForRow(t *testing.T) {
	db, _ := openFile(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	var turns []LiveTurn
	for i := range 70 {
		turns = append(turns, liveTurn(fmt.Sprintf("T%02d", i), "", false, "응", fmt.Sprintf("%d번째 대답이야.", i)))
	}
	res, run := judgeLive(t, db, ds, j, turns...)
	rows, err := db.sql.Query("SELECT seq, turn_id, record FROM verdict WHERE run_id = ? ORDER BY seq", run)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var seq int
		var id, rec string
		if err := rows.Scan(&seq, &id, &rec); err != nil {
			t.Fatal(err)
		}
		if seq != n || id != turns[n].Turn.TurnID || rec != string(res[n].Record) {
			t.Fatalf("row %d: seq %d, turn %s, record %s; want seq %d, %s, %s", n, seq, id, rec, n, turns[n].Turn.TurnID, res[n].Record)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != 70 {
		t.Fatalf("%d verdict rows (%v), want 70", n, err)
	}
	if got := recordOf(t, res[69].Record); got.TurnID != "T69" || got.SessionID != "S1" {
		t.Fatalf("last record %+v", got)
	}

	// The call returned with the queue idle: its connection is back in the
	// pool. Hold every idle connection at once and ask each.
	db.wmu.Lock()
	held := liveQueueOf(db).conn
	db.wmu.Unlock()
	if held != nil {
		t.Fatal("the live queue still holds its connection after the call")
	}
	for i, st := range poolSettings(t, db) {
		if st != [2]int{1000, 1} {
			t.Fatalf("pool connection %d: wal_autocheckpoint %d, foreign_keys %d; want 1000 and on", i, st[0], st[1])
		}
	}
}

// A call of repeats only (turns judged against another dataset before)
// answers the stored records and leaves no empty live run behind; the
// dataset's live run is created by its first new turn.
func TestACallOfRepeatsCreatesNoLiveRun(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	ds1, ds2 := liveDataset(t, db), liveDataset(t, db)
	j := liveJudge(t)
	turn := liveTurn("R1", "", false, "응", "그래.")
	first, _ := judgeLive(t, db, ds1, j, turn)
	res, run := judgeLive(t, db, ds2, j, turn)
	if !res[0].Repeat || string(res[0].Record) != string(first[0].Record) || run != 0 {
		t.Fatalf("the re-send against dataset %d: repeat %v, run %d; want the stored record, no run", ds2, res[0].Repeat, run)
	}
	if _, ok, err := db.LiveRunID(ctx, ds2); err != nil || ok {
		t.Fatalf("dataset %d has a live run (%v) after a call of repeats", ds2, err)
	}
	if n := count(t, db, "run"); n != 1 {
		t.Fatalf("%d runs, want dataset %d's one live run", n, ds1)
	}
	// A new turn still creates it.
	if _, run := judgeLive(t, db, ds2, j, liveTurn("R2", "", false, "응", "그래.")); run == 0 {
		t.Fatal("a new turn against the second dataset made no live run")
	}
	if _, ok, err := db.LiveRunID(ctx, ds2); err != nil || !ok {
		t.Fatalf("no live run for dataset %d after its first new turn (%v)", ds2, err)
	}
}
