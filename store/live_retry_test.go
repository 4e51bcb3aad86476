package store

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

// groupCall is a JudgeLive call as the queue holds it, for writing groups
// by hand (judgeLiveCalls), with persona/live as the step.
func groupCall(ds int64, j *persona.Judge, turns ...LiveTurn) *liveCall {
	return &liveCall{ctx: context.Background(), datasetID: ds, meta: RunMeta{Profile: "seed"}, turns: turns,
		done: make(chan struct{}), lead: make(chan struct{}), step: func(i int, st *live.State) (persona.Record, live.Change, error) {
			rec, o, err := live.Step(j, st, turns[i].Turn)
			return rec, o.Change, err
		}}
}

func inSession(lt LiveTurn, session string) LiveTurn {
	lt.Turn.SessionID = session
	lt.Digest = live.Digest(lt.Turn)
	return lt
}

// A group of calls is written without savepoints; when one of its calls
// fails (here the middle one: it judges a turn of S1, changing S1's kept
// state in place, then hits a conflicting re-send), the group is rolled
// back and written again with a savepoint a call. What the other calls
// store — their records, S1's state and turn count, the live run's tally —
// must be byte for byte what a store given the same calls one at a time
// (the failing one left out) holds. A group whose calls all succeed is
// written once.
func TestAGroupWithAFailingCallStoresTheOthersAsIfSentAlone(t *testing.T) {
	ctx := context.Background()
	j := liveJudge(t)
	t0 := liveTurn("T0", "도윤", false, "가족은?", "동생 도윤이 있어.")
	tc := inSession(liveTurn("Tc", "", false, "응", "그래."), "S2")
	t1 := liveTurn("T1", "", false, "뭐 해?", "그냥 있어.")
	t2 := liveTurn("T2", "", true, "동생 이름이 뭐였지?", "글쎄, 몰라.")

	ref := openMem(t)
	refDS := liveDataset(t, ref)
	var want [][]byte
	for _, lt := range []LiveTurn{t0, tc, t1, t2} {
		res, _ := judgeLive(t, ref, refDS, j, lt)
		want = append(want, res[0].Record)
	}

	db := openMem(t)
	ds := liveDataset(t, db)
	q := liveQueueOf(db)
	first := []*liveCall{groupCall(ds, j, t0), groupCall(ds, j, tc)}
	db.judgeLiveCalls(q, first)
	if first[0].err != nil || first[1].err != nil || q.retries.Load() != 0 {
		t.Fatalf("first group: errors %v / %v, %d retries; want none", first[0].err, first[1].err, q.retries.Load())
	}
	bad := inSession(liveTurn("Tc", "", false, "응", "아니."), "S2") // Tc again, another reply
	second := []*liveCall{
		groupCall(ds, j, t1),
		groupCall(ds, j, liveTurn("Tx", "", false, "또?", "응."), bad),
		groupCall(ds, j, t2),
	}
	db.judgeLiveCalls(q, second)
	var re *LiveRowError
	if !errors.As(second[1].err, &re) || re.Row != 1 || !errors.Is(second[1].err, ErrLiveConflict) {
		t.Fatalf("the middle call: %v, want a conflict at its row 2", second[1].err)
	}
	if second[0].err != nil || second[2].err != nil {
		t.Fatalf("the other calls: %v / %v, want none", second[0].err, second[2].err)
	}
	if n := q.retries.Load(); n != 1 {
		t.Fatalf("%d groups written again, want 1", n)
	}
	got := [][]byte{first[0].out[0].Record, first[1].out[0].Record, second[0].out[0].Record, second[2].out[0].Record}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("record %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if r := recordOf(t, got[3]); r.Verdict != persona.RecallFailed || r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T0" {
		t.Errorf("T2: %s citing %v, want recall_failed citing T0", r.Verdict, r.RecallSourceTurn)
	}
	for _, s := range []string{"S1", "S2"} {
		gs, gn, err := db.LiveState(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		ws, wn, err := ref.LiveState(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if gn != wn || !bytes.Equal(gs, ws) {
			t.Errorf("%s: %d turns, state %s; want %d, %s", s, gn, gs, wn, ws)
		}
	}
	// The states kept after the group are the stored ones: a turn judged
	// next from the cache gets the record the reference gets from its rows.
	t3 := liveTurn("T3", "", true, "동생은?", "몰라.")
	a, _ := judgeLive(t, db, ds, j, t3)
	b, _ := judgeLive(t, ref, refDS, j, t3)
	if !bytes.Equal(a[0].Record, b[0].Record) {
		t.Errorf("T3 after the group:\n got %s\nwant %s", a[0].Record, b[0].Record)
	}
	var gotTally, wantTally string
	var gotN, wantN int
	for _, x := range []struct {
		db *DB
		ds int64
		n  *int
		bv *string
	}{{db, ds, &gotN, &gotTally}, {ref, refDS, &wantN, &wantTally}} {
		run, _, err := x.db.LiveRunID(ctx, x.ds)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.db.sql.QueryRow("SELECT judged, by_verdict FROM run WHERE id = ?", run).Scan(x.n, x.bv); err != nil {
			t.Fatal(err)
		}
	}
	if gotN != 5 || gotN != wantN || gotTally != wantTally {
		t.Errorf("live run: %d judged %s; want 5, as the reference's %d %s", gotN, gotTally, wantN, wantTally)
	}
}

// Without savepoints a group writes each session's state once, at its end:
// three calls judging S1 (and one S2) in one group leave S1's row with the
// state and turn count that the same calls sent one at a time leave, and
// each call's record is the one it gets alone.
func TestAGroupWritesEachSessionsStateOnceWithAllItsTurns(t *testing.T) {
	ctx := context.Background()
	j := liveJudge(t)
	turns := []LiveTurn{
		liveTurn("T0", "도윤", false, "가족은?", "동생 도윤이 있어."),
		inSession(liveTurn("U0", "", false, "응", "그래."), "S2"),
		liveTurn("T1", "", false, "뭐 해?", "그냥 있어."),
		liveTurn("T2", "", true, "동생 이름이 뭐였지?", "글쎄, 몰라."),
	}
	ref := openMem(t)
	refDS := liveDataset(t, ref)
	var want [][]byte
	for _, lt := range turns {
		res, _ := judgeLive(t, ref, refDS, j, lt)
		want = append(want, res[0].Record)
	}
	db := openMem(t)
	ds := liveDataset(t, db)
	q := liveQueueOf(db)
	calls := []*liveCall{groupCall(ds, j, turns[0]), groupCall(ds, j, turns[1]), groupCall(ds, j, turns[2], turns[3])}
	db.judgeLiveCalls(q, calls)
	for i, c := range calls {
		if c.err != nil {
			t.Fatalf("call %d: %v", i, c.err)
		}
	}
	if n := q.retries.Load(); n != 0 {
		t.Fatalf("%d groups written again, want 0", n)
	}
	got := [][]byte{calls[0].out[0].Record, calls[1].out[0].Record, calls[2].out[0].Record, calls[2].out[1].Record}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("record %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	for _, s := range []string{"S1", "S2"} {
		gs, gn, err := db.LiveState(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		ws, wn, err := ref.LiveState(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if gn != wn || !bytes.Equal(gs, ws) {
			t.Errorf("%s: %d turns, state %s; want %d, %s", s, gn, gs, wn, ws)
		}
	}
	if n := sessionTurns(t, db, "S1"); n != 3 {
		t.Errorf("S1 has %d turns, want 3", n)
	}
}
