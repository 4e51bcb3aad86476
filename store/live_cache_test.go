package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

// askRecall judges, in session S1, a turn asking about the brother without
// naming him and returns its verdict and recall source ("" when none).
func askRecall(t *testing.T, db *DB, ds int64, j *persona.Judge, id string) (persona.Verdict, string) {
	t.Helper()
	res, _ := judgeLive(t, db, ds, j, liveTurn(id, "", true, "동생 이름이 뭐였지?", "글쎄, 몰라."))
	r := recordOf(t, res[0].Record)
	src := ""
	if r.RecallSourceTurn != nil {
		src = *r.RecallSourceTurn
	}
	return r.Verdict, src
}

func sessionTurns(t *testing.T, db *DB, session string) int {
	t.Helper()
	_, n, err := db.LiveState(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Two DB handles on one file (two servers on one store) judge the same
// session in turn: each sees the turns the other judged, though each keeps
// the session's state in memory after its own call. A keeps S1 after T1
// (nothing named); B judges T2 naming 도윤; A's T3 asking about the brother
// must cite T2, which only the stored row knows.
func TestTwoHandlesOnOneFileSeeEachOthersSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evident.db")
	a, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ds := liveDataset(t, a)
	j := liveJudge(t)

	judgeLive(t, a, ds, j, liveTurn("T1", "", false, "안녕", "안녕."))
	if n, _ := a.LiveCacheStats(); n != 1 {
		t.Fatalf("A keeps %d sessions after T1, want 1 (the test checks a kept state is not served stale)", n)
	}
	judgeLive(t, b, ds, j, liveTurn("T2", "도윤", false, "가족은?", "동생 도윤이 있어."))
	if v, src := askRecall(t, a, ds, j, "T3"); v != persona.RecallFailed || src != "T2" {
		t.Fatalf("A's T3 after B's T2: verdict %s source %q, want %s citing T2", v, src, persona.RecallFailed)
	}
	// And back: B kept S1 at 2 turns; A's T3 made it 3 and B must see it.
	judgeLive(t, a, ds, j, liveTurn("T4", "", false, "그래", "응."))
	judgeLive(t, b, ds, j, liveTurn("T5", "", false, "응", "그래."))
	if n := sessionTurns(t, b, "S1"); n != 5 {
		t.Fatalf("S1 has %d turns, want 5 (T1..T5 from both handles)", n)
	}
	st, _, err := b.LiveState(context.Background(), "S1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := live.Resume(st)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := s.Mention("도윤")
	c, _ := s.Cited(f.ByArrival)
	if s.Header().Turns != 5 || !ok || c.TurnID != "T2" || f.ByArrival != 1 {
		t.Fatalf("stored state %s, want 5 turns with 도윤 first named by T2 at seq 1", st)
	}
}

// A call that fails after a turn changed its session's kept state in place
// leaves no trace in memory either: the next call is judged against the
// stored state. S1 is kept after T0; the failing call judges T1 (naming
// 도윤) and then an unknown character; T3 asking about the brother finds no
// earlier mention.
func TestAFailedCallLeavesTheKeptStateAsStored(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	judgeLive(t, db, ds, j, liveTurn("T0", "", false, "안녕", "안녕."))
	bad := liveTurn("T2", "", false, "누구?", "몰라.")
	bad.Turn.CharacterID = "C9"
	bad.Digest = live.Digest(bad.Turn)
	_, _, err := tryLive(db, ds, j, liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."), bad)
	var re *LiveRowError
	if !errors.As(err, &re) || re.Row != 1 || !errors.Is(err, persona.ErrUnknownCharacter) {
		t.Fatalf("call with an unknown character: %v, want a row 2 error", err)
	}
	if v, src := askRecall(t, db, ds, j, "T3"); v == persona.RecallFailed || src != "" {
		t.Fatalf("T3 after the failed call: verdict %s source %q, want no recall target (T1 was never stored)", v, src)
	}
	if n := sessionTurns(t, db, "S1"); n != 2 {
		t.Fatalf("S1 has %d turns, want 2 (T0, T3)", n)
	}
}

// The cache holds at most its cap: 200 sessions of one turn each under a
// cap of about 20 states keep at most the cap's bytes, the most recently
// judged sessions; an evicted session is read back from the store and
// still recalls; with the cache off nothing is kept and recall still works.
func TestTheLiveStateCacheIsBoundedByItsCap(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	turn := func(k int, named string, asked bool) LiveTurn {
		msg, reply := "가족은?", "동생 도윤이 있어."
		if asked {
			msg, reply = "동생 이름이 뭐였지?", "글쎄, 몰라."
		}
		lt := liveTurn(fmt.Sprintf("T%d-%v", k, asked), named, asked, msg, reply)
		lt.Turn.SessionID = fmt.Sprintf("S%03d", k)
		lt.Digest = live.Digest(lt.Turn)
		return lt
	}
	judgeLive(t, db, ds, j, turn(0, "도윤", false))
	_, one := db.LiveCacheStats()
	if one <= liveEntryOverhead {
		t.Fatalf("one kept state counts %d bytes, want its JSON plus %d", one, liveEntryOverhead)
	}
	cap := 20*one + one/2
	db.SetLiveCache(cap)
	for k := 1; k < 200; k++ {
		judgeLive(t, db, ds, j, turn(k, "도윤", false))
		if n, used := db.LiveCacheStats(); used > cap || n > 21 {
			t.Fatalf("after %d sessions the cache holds %d sessions, %d bytes; cap %d bytes (20 states)", k+1, n, used, cap)
		}
	}
	if n, _ := db.LiveCacheStats(); n != 20 {
		t.Fatalf("the cache holds %d sessions, want 20 (the cap)", n)
	}
	q := liveQueueOf(db)
	q.cache.mu.Lock()
	_, newest := q.cache.m["S199"]
	_, oldest := q.cache.m["S000"]
	q.cache.mu.Unlock()
	if !newest || oldest {
		t.Fatalf("kept S199 %v, S000 %v: want the most recently judged kept, the first evicted", newest, oldest)
	}
	res, _ := judgeLive(t, db, ds, j, turn(0, "", true)) // S000 was evicted
	if r := recordOf(t, res[0].Record); r.Verdict != persona.RecallFailed || r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T0-false" {
		t.Fatalf("evicted session's recall: %s %v, want %s citing T0-false", r.Verdict, r.RecallSourceTurn, persona.RecallFailed)
	}

	db.SetLiveCache(0)
	if n, used := db.LiveCacheStats(); n != 0 || used != 0 {
		t.Fatalf("cache off: %d sessions, %d bytes kept", n, used)
	}
	res, _ = judgeLive(t, db, ds, j, turn(5, "", true))
	if r := recordOf(t, res[0].Record); r.Verdict != persona.RecallFailed || r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T5-false" {
		t.Fatalf("recall with the cache off: %s %v", r.Verdict, r.RecallSourceTurn)
	}
	if n, _ := db.LiveCacheStats(); n != 0 {
		t.Fatalf("cache off keeps %d sessions", n)
	}
}

// The same inside one group (three calls written in one transaction, as
// concurrent callers are): the failing middle call changed S1's state in
// place before failing; the third call, and the state kept after the
// group, are judged against what the first call stored.
func TestAFailedCallInAGroupLeavesTheOthersTheStoredState(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	judgeLive(t, db, ds, j, liveTurn("T0", "", false, "안녕", "안녕."))
	bad := liveTurn("T2", "", false, "누구?", "몰라.")
	bad.Turn.CharacterID = "C9"
	bad.Digest = live.Digest(bad.Turn)
	call := func(turns ...LiveTurn) *liveCall {
		return &liveCall{ctx: context.Background(), datasetID: ds, meta: RunMeta{Profile: "seed"}, turns: turns,
			done: make(chan struct{}), lead: make(chan struct{}), step: func(i int, st *live.State) (persona.Record, live.Change, error) {
				rec, o, err := live.Step(j, st, turns[i].Turn)
				return rec, o.Change, err
			}}
	}
	calls := []*liveCall{
		call(liveTurn("T1a", "", false, "응", "그래.")),
		call(liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."), bad),
		call(liveTurn("T3", "", true, "동생 이름이 뭐였지?", "글쎄, 몰라.")),
	}
	db.judgeLiveCalls(liveQueueOf(db), calls)
	if calls[0].err != nil || calls[1].err == nil || calls[2].err != nil {
		t.Fatalf("group errors %v / %v / %v, want only the middle call's", calls[0].err, calls[1].err, calls[2].err)
	}
	if r := recordOf(t, calls[2].out[0].Record); r.Verdict == persona.RecallFailed || r.RecallSourceTurn != nil {
		t.Fatalf("T3 in the group: %s citing %v, want no recall target (T1 was never stored)", r.Verdict, r.RecallSourceTurn)
	}
	if v, src := askRecall(t, db, ds, j, "T4"); v == persona.RecallFailed || src != "" {
		t.Fatalf("T4 after the group: verdict %s source %q, want no recall target", v, src)
	}
	if n := sessionTurns(t, db, "S1"); n != 4 {
		t.Fatalf("S1 has %d turns, want 4 (T0, T1a, T3, T4)", n)
	}
}
