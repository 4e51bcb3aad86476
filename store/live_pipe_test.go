package store

import (
	"errors"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

// A call of several turns is judged on a pipeline (turn_ids claimed first,
// records written as they come back), yet the error it reports is the first
// failing row's, as in one pass, and nothing of it is stored: a step error
// before a conflict wins, a conflict before a step error wins.
func TestTheFirstFailingRowOfAPipelinedCallIsTheOneReported(t *testing.T) {
	unknown := func(id string) LiveTurn {
		lt := liveTurn(id, "", false, "누구?", "몰라.")
		lt.Turn.CharacterID = "C9"
		lt.Digest = live.Digest(lt.Turn)
		return lt
	}
	for _, c := range []struct {
		name     string
		turns    []LiveTurn
		row      int
		conflict bool
	}{
		{"a step error before a conflict", []LiveTurn{liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."), unknown("T2"),
			liveTurn("T1", "", false, "다른", "행.")}, 1, false},
		{"a conflict before a step error", []LiveTurn{liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."),
			liveTurn("T1", "", false, "다른", "행."), unknown("T2")}, 1, true},
		{"a conflict with a stored turn after good rows", []LiveTurn{liveTurn("T5", "", false, "응", "그래."), liveTurn("T6", "", false, "응", "그래."),
			liveTurn("T0", "", false, "다른", "행.")}, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openMem(t)
			ds := liveDataset(t, db)
			j := liveJudge(t)
			judgeLive(t, db, ds, j, liveTurn("T0", "", false, "안녕", "안녕."))
			_, _, err := tryLive(db, ds, j, c.turns...)
			var re *LiveRowError
			if !errors.As(err, &re) || re.Row != c.row || errors.Is(err, ErrLiveConflict) != c.conflict ||
				errors.Is(err, persona.ErrUnknownCharacter) == c.conflict {
				t.Fatalf("error %v, want row %d (conflict %v)", err, c.row+1, c.conflict)
			}
			if n := sessionTurns(t, db, "S1"); n != 1 {
				t.Fatalf("S1 has %d turns after the failed call, want 1 (T0)", n)
			}
			if _, err := db.LiveRecord(t.Context(), "T1"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("T1 after the failed call: %v, want ErrNotFound", err)
			}
			// The session's kept state is the stored one: T3 asking about
			// the brother finds no mention (T1 named him in the failed call).
			if v, src := askRecall(t, db, ds, j, "T3"); v == persona.RecallFailed || src != "" {
				t.Fatalf("T3: %s citing %q, want no recall target", v, src)
			}
		})
	}
}

// A turn_id repeated inside a pipelined call, with the same row, answers the
// first occurrence's record (its verdict row is written after the repeat is
// seen) and is judged once.
func TestARepeatInsideAPipelinedCallAnswersTheFirstRecord(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	a := liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어.")
	res, run := judgeLive(t, db, ds, j, a, liveTurn("T2", "", false, "응", "그래."), a, liveTurn("T3", "", true, "동생 이름이 뭐였지?", "글쎄, 몰라."))
	if res[0].Repeat || !res[2].Repeat || string(res[2].Record) != string(res[0].Record) {
		t.Fatalf("repeat inside the call: %v %s / %v %s", res[0].Repeat, res[0].Record, res[2].Repeat, res[2].Record)
	}
	if r := recordOf(t, res[3].Record); r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T1" {
		t.Fatalf("T3 recall source %v, want T1", r.RecallSourceTurn)
	}
	info, err := db.Run(t.Context(), run)
	if err != nil || info.Tally.Judged != 3 {
		t.Fatalf("live run: %+v, %v; want 3 judged (T1 once)", info.Tally, err)
	}
	if n := sessionTurns(t, db, "S1"); n != 3 {
		t.Fatalf("S1 has %d turns, want 3", n)
	}
	if got, err := db.LiveRecord(t.Context(), "T1"); err != nil || string(got) != string(res[0].Record) {
		t.Fatalf("stored T1 %s, %v", got, err)
	}
}

// The record, bound as bytes, is stored as TEXT, the same bytes the call
// answered; the state's cited reply is TEXT too, and LiveState gives the
// state back.
func TestLiveRecordsAndStatesAreStoredAsText(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	res, run := judgeLive(t, db, ds, liveJudge(t), liveTurn("T1", "도윤", false, "가족은?", "동생 도윤이 있어."))
	var recType, rec, stateType string
	if err := db.sql.QueryRow("SELECT typeof(record), record FROM verdict WHERE run_id = ? AND turn_id = 'T1'", run).Scan(&recType, &rec); err != nil {
		t.Fatal(err)
	}
	if err := db.sql.QueryRow("SELECT typeof(reply_text) FROM live_cited WHERE session_id = 'S1'").Scan(&stateType); err != nil {
		t.Fatal(err)
	}
	if recType != "text" || stateType != "text" || rec != string(res[0].Record) {
		t.Fatalf("record stored as %s (%s), cited reply as %s; want text, the answered bytes %s", recType, rec, stateType, res[0].Record)
	}
	st, _, err := db.LiveState(t.Context(), "S1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := live.Resume(st)
	if _, ok := s.Mention("도윤"); err != nil || s.Header().Turns != 1 || !ok {
		t.Fatalf("stored state %s: %v", st, err)
	}
}
