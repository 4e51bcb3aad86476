package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

func liveJudge(t testing.TB) *persona.Judge {
	t.Helper()
	j, err := persona.NewJudge([]persona.Card{{CharacterID: "C1", Name: "하나", HonorificRule: persona.Banmal, FirstPerson: "나",
		CanonEntities: []string{"도윤"}, ForbiddenTopics: []string{}, EntityRoles: []persona.EntityRole{{Role: "동생", Entity: "도윤"}}}},
		[]persona.LexiconRow{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func liveTurn(id, named string, asked bool, msg, reply string) LiveTurn {
	t := &persona.Turn{TurnID: id, SessionID: "S1", CharacterID: "C1", ModelID: "m", UserMessage: &msg, ReplyText: &reply,
		NamedEntities: []string{}, UserAskedRecall: asked}
	if named != "" {
		t.NamedEntities = []string{named}
	}
	return LiveTurn{Turn: t, Digest: live.Digest(t)}
}

// judgeLive sends turns to JudgeLive with persona/live as the step.
func judgeLive(t testing.TB, db *DB, ds int64, j *persona.Judge, turns ...LiveTurn) ([]LiveResult, int64) {
	t.Helper()
	res, run, err := tryLive(db, ds, j, turns...)
	if err != nil {
		t.Fatal(err)
	}
	return res, run
}

func tryLive(db *DB, ds int64, j *persona.Judge, turns ...LiveTurn) ([]LiveResult, int64, error) {
	return db.JudgeLive(context.Background(), ds, RunMeta{Profile: "seed"}, turns, func(i int, st *live.State) (persona.Record, live.Change, error) {
		rec, o, err := live.Step(j, st, turns[i].Turn)
		return rec, o.Change, err
	})
}

func liveDataset(t testing.TB, db *DB) int64 {
	t.Helper()
	id, err := db.ImportDataset(context.Background(), "live", nil, []persona.Card{{CharacterID: "C1", Name: "하나",
		HonorificRule: persona.Banmal, FirstPerson: "나"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func recordOf(t testing.TB, b []byte) persona.Record {
	t.Helper()
	var r persona.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return r
}

// The recall rule remembers a session across two calls and across a
// restart: T1 names 도윤 in one call; after closing and reopening the file,
// T2 asks about the brother without naming him and fails recall citing T1.
func TestLiveStateSurvivesTwoCallsAndARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evident.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ds := liveDataset(t, db)
	j := liveJudge(t)
	res, run := judgeLive(t, db, ds, j, liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."))
	if res[0].Repeat {
		t.Fatalf("T1: %+v", res[0])
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, run2 := judgeLive(t, db, ds, j, liveTurn("T2", "", true, "동생 이름이 뭐였지?", "글쎄, 몰라."))
	r := recordOf(t, res[0].Record)
	if r.Verdict != persona.RecallFailed || r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T1" {
		t.Fatalf("T2 verdict %s source %v, want %s citing T1", r.Verdict, r.RecallSourceTurn, persona.RecallFailed)
	}
	if run2 != run {
		t.Fatalf("second call grew run %d, want the live run %d", run2, run)
	}
	_, n, err := db.LiveState(context.Background(), "S1")
	if err != nil || n != 2 {
		t.Fatalf("session turns %d, %v; want 2", n, err)
	}
}

// A re-send of the same row gets the stored record byte for byte and writes
// nothing; a different row with the same turn_id, in another call or
// repeated inside one, is a *LiveRowError wrapping ErrLiveConflict naming
// its row, and the whole call is stored or not at all.
func TestLiveResendsAreIdempotentAndADifferentRowConflicts(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	first := liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어.")
	res, run := judgeLive(t, db, ds, j, first)
	stored := res[0].Record

	res, _ = judgeLive(t, db, ds, j, first, liveTurn("T3", "", false, "응", "그래."), liveTurn("T3", "", false, "응", "그래."))
	if !res[0].Repeat || !bytes.Equal(res[0].Record, stored) {
		t.Fatalf("re-send: repeat %v record %s, want the stored %s", res[0].Repeat, res[0].Record, stored)
	}
	if res[1].Repeat || !res[2].Repeat || !bytes.Equal(res[1].Record, res[2].Record) {
		t.Fatalf("in-call repeat: %+v / %+v, want judged then the same record", res[1], res[2])
	}
	for _, tc := range []struct {
		name  string
		turns []LiveTurn
		row   int
	}{
		{"a different row for a stored turn_id", []LiveTurn{liveTurn("T4", "", false, "a", "b."), liveTurn("T1", "", false, "가족은?", "없어.")}, 1},
		{"a different row repeated inside the call", []LiveTurn{liveTurn("T5", "", false, "응", "그래."), liveTurn("T5", "", false, "응", "아니.")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tryLive(db, ds, j, tc.turns...)
			var re *LiveRowError
			if !errors.As(err, &re) || re.Row != tc.row || !errors.Is(err, ErrLiveConflict) {
				t.Fatalf("err %v, want a conflict at row %d", err, tc.row)
			}
			if _, err := db.LiveRecord(context.Background(), tc.turns[0].Turn.TurnID); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the call's other row was stored: %v", err)
			}
		})
	}
	info, err := db.Run(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if info.Tally.Judged != 2 || info.Tally.ByVerdict[persona.Kept] != 2 {
		t.Fatalf("live run tally %+v, want 2 judged, 2 %s", info.Tally, persona.Kept)
	}
	recs, err := db.Records(context.Background(), run, Filter{})
	if err != nil || len(recs) != 2 || recs[0].TurnID != "T1" || recs[1].TurnID != "T3" {
		t.Fatalf("live run records %v, %v; want T1, T3", recs, err)
	}
	if live, err := db.IsLiveRun(context.Background(), run); err != nil || !live {
		t.Fatalf("IsLiveRun = %v, %v", live, err)
	}
	got, err := db.LiveRecord(context.Background(), "T1")
	if err != nil || !bytes.Equal(got, stored) {
		t.Fatalf("LiveRecord = %s, %v", got, err)
	}
	if _, err := db.LiveRecord(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LiveRecord of an unknown turn: %v, want ErrNotFound", err)
	}
}

// A row the step rejects (unknown character) fails the call at that row and
// stores nothing; a fatal error (an unknown dataset) stores nothing either.
func TestLiveRejectsAndFailuresLeaveNothingBehind(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	bad := liveTurn("X", "도윤", false, "?", "도윤.")
	bad.Turn.CharacterID = "NOPE"
	_, _, err := tryLive(db, ds, j, liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."), bad)
	var re *LiveRowError
	if !errors.As(err, &re) || re.Row != 1 || !errors.Is(err, persona.ErrUnknownCharacter) {
		t.Fatalf("unknown character: %v, want a row error at row 1", err)
	}
	if state, n, err := db.LiveState(context.Background(), "S1"); state != nil || n != 0 || err != nil {
		t.Fatalf("rejected call left session state %s (%d turns, %v)", state, n, err)
	}
	_, _, err = db.JudgeLive(context.Background(), 999, RunMeta{Profile: "seed"}, []LiveTurn{liveTurn("T9", "", false, "a", "b.")},
		func(int, *live.State) (persona.Record, live.Change, error) {
			return persona.Record{TurnID: "T9", Verdict: persona.Kept}, live.Change{}, nil
		})
	if err == nil || errors.As(err, &re) {
		t.Fatalf("JudgeLive against an unknown dataset: %v, want a fatal error", err)
	}
	var n int
	if err := db.sql.QueryRow("SELECT count(*) FROM live_turn").Scan(&n); err != nil || n != 0 {
		t.Fatalf("failed calls left %d rows (%v)", n, err)
	}
	if _, ok, err := db.LiveRunID(context.Background(), 999); ok || err != nil {
		t.Fatalf("LiveRunID(999) = %v, %v", ok, err)
	}
}

// Concurrent calls are written in groups, each call whole or not at all: 40
// goroutines each send a session's two turns (the second asks about the
// brother named by the first) in separate calls, and every tenth also sends
// a conflicting re-send of its first turn; every second turn fails recall
// citing its own first turn, and no conflicting row is stored.
func TestConcurrentLiveCallsAreEachWholeOrNotAtAll(t *testing.T) {
	db, _ := openFile(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	const n = 40
	errs := make(chan error, n)
	for g := range n {
		go func() {
			errs <- func() error {
				s := fmt.Sprintf("S%02d", g)
				a := liveTurn(s+"-1", "도윤", false, "가족은?", "동생 도윤이 있어.")
				a.Turn.SessionID = s
				a.Digest = live.Digest(a.Turn)
				if _, _, err := tryLive(db, ds, j, a); err != nil {
					return err
				}
				if g%10 == 0 {
					bad := liveTurn(s+"-1", "", false, "가족은?", "없어.")
					bad.Turn.SessionID = s
					bad.Digest = live.Digest(bad.Turn)
					extra := liveTurn(s+"-x", "", false, "응", "그래.")
					extra.Turn.SessionID = s
					extra.Digest = live.Digest(extra.Turn)
					if _, _, err := tryLive(db, ds, j, extra, bad); !errors.Is(err, ErrLiveConflict) {
						return fmt.Errorf("%s: conflict: %v", s, err)
					}
				}
				b := liveTurn(s+"-2", "", true, "동생 이름이 뭐였지?", "몰라.")
				b.Turn.SessionID = s
				b.Digest = live.Digest(b.Turn)
				res, _, err := tryLive(db, ds, j, b)
				if err != nil {
					return err
				}
				r := recordOf(t, res[0].Record)
				if r.RecallSourceTurn == nil || *r.RecallSourceTurn != s+"-1" {
					return fmt.Errorf("%s-2: recall source %v, want %s-1", s, r.RecallSourceTurn, s)
				}
				return nil
			}()
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	var turns, extras int
	if err := db.sql.QueryRow("SELECT count(*), count(*) FILTER (WHERE turn_id LIKE '%-x') FROM live_turn").Scan(&turns, &extras); err != nil {
		t.Fatal(err)
	}
	if turns != 2*n || extras != 0 {
		t.Fatalf("%d live turns (%d from conflicting calls), want %d and 0", turns, extras, 2*n)
	}
	runID, _, err := db.LiveRunID(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	info, err := db.Run(context.Background(), runID)
	if err != nil || info.Tally.Judged != 2*n {
		t.Fatalf("live run: %+v, %v; want %d judged", info.Tally, err, 2*n)
	}
}

// BenchmarkJudgeLiveConcurrent: single-turn calls from 50 goroutines on a
// file store (the HTTP benchmark without HTTP).
func BenchmarkJudgeLiveConcurrent(b *testing.B) {
	db, _ := openFile(b)
	ds := liveDataset(b, db)
	j := liveJudge(b)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				lt := liveTurn(fmt.Sprintf("T%d", i), "도윤", false, "가족은?", "동생 도윤이 있어.")
				lt.Turn.SessionID = fmt.Sprintf("S%d", i%500)
				lt.Digest = live.Digest(lt.Turn)
				if _, _, err := tryLive(db, ds, j, lt); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// The live run's rows are found by the screen's text filter (a live run has
// no search index: the rows are read).
func TestTheLiveRunIsSearchable(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	_, run := judgeLive(t, db, ds, liveJudge(t), liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."), liveTurn("T2", "", false, "응", "그래."))
	recs, err := db.Records(context.Background(), run, Filter{Text: "도윤이"})
	if err != nil || len(recs) != 1 || recs[0].TurnID != "T1" {
		t.Fatalf("text filter on the live run: %v, %v; want T1", recs, err)
	}
}
