package games

import (
	"fmt"
	"testing"
	"time"

	"evident/arc/api"
)

// TestServerBounds: issue 15 item 8 — plays, runs and scorecards are
// bounded, counted through Stats, and the oldest idle ones go first.
func TestServerBounds(t *testing.T) {
	t.Run("5,000 RESETs without guid on one scorecard keep DefaultMaxPlays plays and DefaultMaxRuns runs", func(t *testing.T) {
		x := newSrv(t, Config{})
		card := x.card()
		// The first play completes level 1: its run is the best and must
		// survive every eviction of runs.
		first := x.reset(Trek.ID, card, "")
		for _, a := range Trek.Solution(0, 1) {
			x.act(Trek.ID, first.GUID, a)
		}
		x.advance(time.Second)
		var last api.FrameResponse
		for range 5000 {
			last = x.reset(Trek.ID, card, "")
		}
		st := x.s.Stats()
		if st.Plays != DefaultMaxPlays || st.Runs != DefaultMaxRuns || st.Scorecards != 1 || st.Resets != 5001 {
			t.Fatalf("stats %+v, want %d plays, %d runs, 1 scorecard, 5001 resets", st, DefaultMaxPlays, DefaultMaxRuns)
		}
		// The first play was idle longest: forgotten, as an expired one is.
		e := x.errCode("POST", api.PathCmd+"ACTION1", actionReq(Trek.ID, first.GUID, Trek.Solution(0, 2)[0]), 400, api.CodeServerError)
		if e.Message != "game trek-v1 not found" {
			t.Errorf("message %q", e.Message)
		}
		x.act(Trek.ID, last.GUID, Trek.Solution(0, 1)[0])
		var sc api.EnvironmentScorecard
		x.ok("GET", api.PathScorecard+card, nil, &sc)
		if len(sc.Environments) != 1 || len(sc.Environments[0].Runs) != DefaultMaxRuns || sc.TotalLevelsCompleted != 1 ||
			sc.Environments[0].Runs[0].GUID != first.GUID || sc.Environments[0].Runs[DefaultMaxRuns-1].GUID != last.GUID {
			t.Fatalf("scorecard: %d environments, total levels %d", len(sc.Environments), sc.TotalLevelsCompleted)
		}
	})
	t.Run("5,000 full RESETs of one guid keep one play and DefaultMaxRuns runs", func(t *testing.T) {
		x := newSrv(t, Config{})
		card := x.card()
		guid := x.reset(Lights.ID, card, "").GUID
		for range 5000 {
			if r := x.reset(Lights.ID, card, guid); !r.FullReset || r.GUID != guid {
				t.Fatalf("reset %+v", r)
			}
		}
		if st := x.s.Stats(); st.Plays != 1 || st.Runs != DefaultMaxRuns {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("opening scorecards beyond MaxScorecards closes the one idle longest", func(t *testing.T) {
		x := newSrv(t, Config{MaxScorecards: 3})
		// Distinct times: ties between equally idle cards are broken by id,
		// and ids are not ordered.
		a := x.card()
		x.advance(time.Second)
		b := x.card()
		x.advance(time.Second)
		c := x.card()
		x.advance(time.Second)
		x.reset(Trek.ID, a, "") // a is used again: b is now idle longest
		x.advance(time.Second)
		d := x.card()
		if st := x.s.Stats(); st.Scorecards != 3 || st.Plays != 1 {
			t.Fatalf("stats %+v", st)
		}
		x.errCode("GET", api.PathScorecard+b, nil, 404, api.CodeServerError)
		for _, id := range []string{a, c, d} {
			x.ok("GET", api.PathScorecard+id, nil, nil)
		}
		for range 5000 {
			x.card()
		}
		if st := x.s.Stats(); st.Scorecards != 3 || st.Plays != 0 {
			t.Fatalf("after 5,000 opens: stats %+v", st)
		}
	})
	t.Run("idle scorecards expire with their plays and runs", func(t *testing.T) {
		x := newSrv(t, Config{})
		card := x.card()
		for range 10 {
			x.reset(Vista.ID, card, "")
		}
		x.advance(DefaultScorecardIdle)
		x.card()
		if st := x.s.Stats(); st.Scorecards != 1 || st.Plays != 0 || st.Runs != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("the rate limiter forgets keys without a request in the last minute", func(t *testing.T) {
		x := newSrv(t, Config{RateLimit: 600})
		for i := range 3 * maxRateKeys {
			if i%maxRateKeys == 0 {
				x.advance(time.Minute)
			}
			x.key = fmt.Sprintf("key-%d", i)
			x.do("GET", api.PathHealthcheck, nil)
		}
		x.s.mu.Lock()
		n := len(x.s.window)
		x.s.mu.Unlock()
		if n > maxRateKeys+1 {
			t.Fatalf("%d keys tracked, want at most %d", n, maxRateKeys+1)
		}
	})
}
