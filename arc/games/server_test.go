package games

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/arc/api"
	"evident/arc/session"
)

// srv is a Server on loopback with a settable clock.
type srv struct {
	t   *testing.T
	s   *Server
	url string
	mu  sync.Mutex
	now time.Time
	key string
}

func newSrv(t *testing.T, cfg Config) *srv {
	t.Helper()
	x := &srv{t: t, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg.Now = func() time.Time { x.mu.Lock(); defer x.mu.Unlock(); return x.now }
	x.s = NewServer(cfg)
	h := httptest.NewServer(x.s)
	t.Cleanup(h.Close)
	x.url = h.URL
	return x
}

func (x *srv) advance(d time.Duration) { x.mu.Lock(); x.now = x.now.Add(d); x.mu.Unlock() }

// do sends a request and returns the status, the body and the response.
func (x *srv) do(method, path string, body any) (int, []byte, *http.Response) {
	x.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, x.url+path, rd)
	if x.key != "" {
		req.Header.Set(api.HeaderAPIKey, x.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		x.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp
}

// ok sends a request that must succeed and decodes the answer into out.
func (x *srv) ok(method, path string, body, out any) {
	x.t.Helper()
	code, b, _ := x.do(method, path, body)
	if code != http.StatusOK {
		x.t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			x.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// errCode sends a request that must fail with status and error code.
func (x *srv) errCode(method, path string, body any, status int, code string) api.ErrorBody {
	x.t.Helper()
	got, b, _ := x.do(method, path, body)
	var e api.ErrorBody
	json.Unmarshal(b, &e)
	if got != status || e.Error != code || e.Message == "" {
		x.t.Fatalf("%s %s: %d %s, want %d %s", method, path, got, b, status, code)
	}
	return e
}

func (x *srv) card() string {
	var c api.OpenScorecardResponse
	x.ok("POST", api.PathScorecardOpen, api.OpenScorecardRequest{Tags: []string{"t"}}, &c)
	return c.CardID
}

func (x *srv) reset(game, card, guid string) api.FrameResponse {
	var r api.FrameResponse
	x.ok("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: game, CardID: card, GUID: guid}, &r)
	return r
}

func (x *srv) act(game, guid string, a session.Action) api.FrameResponse {
	var r api.FrameResponse
	x.ok("POST", api.PathCmd+a.Name, actionReq(game, guid, a), &r)
	return r
}

func actionReq(game, guid string, a session.Action) api.ActionRequest {
	req := api.ActionRequest{GameID: game, GUID: guid}
	if a.Name == "ACTION6" {
		req.X, req.Y = &a.X, &a.Y
	}
	return req
}

func TestServerAPI(t *testing.T) {
	x := newSrv(t, Config{})
	t.Run("GET /api/games lists the built-in games", func(t *testing.T) {
		var gs []api.GameInfo
		x.ok("GET", api.PathGames, nil, &gs)
		if len(gs) != 3 || gs[0].GameID != Trek.ID || gs[1].GameID != Lights.ID || gs[2].GameID != Vista.ID || gs[0].Title != "Trek" {
			t.Fatalf("games %+v", gs)
		}
	})
	t.Run("commands naming an unknown scorecard, game or guid are 400 SERVER_ERROR game … not found", func(t *testing.T) {
		e := x.errCode("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: Trek.ID}, 400, api.CodeServerError)
		if e.Message != "game trek-v1 not found" {
			t.Errorf("message %q", e.Message)
		}
		x.errCode("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: Trek.ID, CardID: "nope"}, 400, api.CodeServerError)
		x.errCode("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: "nope", CardID: x.card()}, 400, api.CodeServerError)
		x.errCode("POST", api.PathCmd+"ACTION9", api.ActionRequest{GameID: Trek.ID}, 404, api.CodeNotFound)
		x.errCode("POST", api.PathCmd+"ACTION1", api.ActionRequest{GameID: Trek.ID}, 400, api.CodeValidation)
		x.errCode("POST", api.PathCmd+"ACTION1", api.ActionRequest{GUID: "nope"}, 400, api.CodeValidation)
		x.errCode("POST", api.PathCmd+"ACTION1", api.ActionRequest{GameID: Trek.ID, GUID: "nope"}, 400, api.CodeServerError)
		x.errCode("GET", "/nowhere", nil, 404, api.CodeNotFound)
	})
	t.Run("a new game answers its first frame with the FrameResponse fields", func(t *testing.T) {
		r := x.reset(Trek.ID, x.card(), "")
		if r.GUID == "" || r.GameID != Trek.ID || r.State != api.StateNotFinished || r.LevelsCompleted != 0 || r.WinLevels != 3 ||
			len(r.Frame) != 1 || len(r.Frame[0]) != 64 || len(r.Frame[0][0]) != 64 || r.ActionInput.ID != 0 || len(r.AvailableActions) != 4 {
			t.Fatalf("response %+v", r)
		}
	})
	t.Run("the server sets an affinity cookie", func(t *testing.T) {
		_, _, resp := x.do("GET", api.PathGames, nil)
		if len(resp.Cookies()) != 1 || resp.Cookies()[0].Name != AffinityCookie {
			t.Fatalf("cookies %v", resp.Cookies())
		}
	})
}

func TestServerGameFlow(t *testing.T) {
	x := newSrv(t, Config{})
	card := x.card()
	t.Run("RESET with guid restarts the level after an action, the whole game when none was taken", func(t *testing.T) {
		r := x.reset(Trek.ID, card, "")
		first := r.Frame[0]
		guid := r.GUID
		for _, a := range Trek.Solution(0, 1) {
			r = x.act(Trek.ID, guid, a)
		}
		if r.LevelsCompleted != 1 || len(r.Frame) != 2 || r.State != api.StateNotFinished {
			t.Fatalf("after level 1: completed %d, %d frames, %s", r.LevelsCompleted, len(r.Frame), r.State)
		}
		level2 := r.Frame[1]
		x.act(Trek.ID, guid, session.Action{Name: "ACTION2"})
		r = x.reset(Trek.ID, card, guid)
		if r.LevelsCompleted != 1 || !sameFrame(r.Frame[0], level2) || r.GUID != guid {
			t.Fatal("RESET after an action did not restart level 2")
		}
		r = x.reset(Trek.ID, card, guid)
		if r.LevelsCompleted != 0 || !sameFrame(r.Frame[0], first) {
			t.Fatal("RESET without an action did not restart the game")
		}
	})
	t.Run("an action in GAME_OVER is 400 GAME_OVER; RESET starts a new attempt of the level", func(t *testing.T) {
		r := x.reset(Trek.ID, card, "")
		for i := 0; i < trekMaps[0].budget; i++ {
			r = x.act(Trek.ID, r.GUID, session.Action{Name: "ACTION3"})
		}
		if r.State != api.StateGameOver {
			t.Fatalf("state %s after the budget", r.State)
		}
		before := x.s.Stats().Actions
		x.errCode("POST", api.PathCmd+"ACTION1", actionReq(Trek.ID, r.GUID, session.Action{Name: "ACTION1"}), 400, api.CodeGameOver)
		if x.s.Stats().Actions != before {
			t.Error("a refused action was counted")
		}
		r = x.reset(Trek.ID, card, r.GUID)
		if r.State != api.StateNotFinished || r.LevelsCompleted != 0 {
			t.Fatalf("after RESET: %s", r.State)
		}
	})
	t.Run("the last level answers WIN, then only RESET is accepted and restarts the game", func(t *testing.T) {
		r := x.reset(Lights.ID, card, "")
		for l := 1; l <= Lights.Levels(); l++ {
			for _, a := range Lights.Solution(0, l) {
				r = x.act(Lights.ID, r.GUID, a)
			}
		}
		if r.State != api.StateWin || r.LevelsCompleted != 3 || len(r.Frame) != 1 {
			t.Fatalf("state %s, completed %d, %d frames", r.State, r.LevelsCompleted, len(r.Frame))
		}
		x.errCode("POST", api.PathCmd+"ACTION6", actionReq(Lights.ID, r.GUID, session.Action{Name: "ACTION6", X: 1, Y: 1}), 400, api.CodeGameWon)
		r = x.reset(Lights.ID, card, r.GUID)
		if r.State != api.StateNotFinished || r.LevelsCompleted != 0 {
			t.Fatalf("after RESET: %s %d", r.State, r.LevelsCompleted)
		}
	})
	t.Run("actions outside available_actions and bad clicks are refused", func(t *testing.T) {
		r := x.reset(Lights.ID, card, "")
		x.errCode("POST", api.PathCmd+"ACTION1", actionReq(Lights.ID, r.GUID, session.Action{Name: "ACTION1"}), 400, api.CodeNotAvailable)
		x.errCode("POST", api.PathCmd+"ACTION6", api.ActionRequest{GameID: Lights.ID, GUID: r.GUID}, 400, api.CodeValidation)
		x.errCode("POST", api.PathCmd+"ACTION6", actionReq(Lights.ID, r.GUID, session.Action{Name: "ACTION6", X: 64, Y: 0}), 400, api.CodeValidation)
		// A guid named with another game is an unknown game (arc_agi api.py cmd).
		x.errCode("POST", api.PathCmd+"ACTION6", actionReq(Trek.ID, r.GUID, session.Action{Name: "ACTION6", X: 1, Y: 1}), 400, api.CodeServerError)
		got := x.act(Lights.ID, r.GUID, session.Action{Name: "ACTION6", X: 1, Y: 1})
		if got.ActionInput.ID != 6 || string(got.ActionInput.Data) != `{"x":1,"y":1}` {
			t.Errorf("action_input %+v", got.ActionInput)
		}
	})
	t.Run("a vista slide answers one frame per tile and the full frame of the current level", func(t *testing.T) {
		r := x.reset(Vista.ID, card, "")
		var ff api.FullFrameResponse
		x.ok("GET", api.PathFullFrame+r.GUID, nil, &ff)
		if ff.Level != 1 || len(ff.Frame) != len(vistaMaps[0])*vistaTile || len(ff.Frame[0]) != len(vistaMaps[0][0])*vistaTile {
			t.Fatalf("full frame level %d %dx%d", ff.Level, len(ff.Frame[0]), len(ff.Frame))
		}
		plan := Vista.Solution(0, 1)
		r = x.act(Vista.ID, r.GUID, plan[0])
		if len(r.Frame) < 2 {
			t.Errorf("slide answered %d frames", len(r.Frame))
		}
		t2 := x.reset(Trek.ID, card, "")
		x.errCode("GET", api.PathFullFrame+t2.GUID, nil, 404, api.CodeNotFound)
		x.errCode("GET", api.PathFullFrame+"nope", nil, 404, api.CodeNotFound)
	})
}

func sameFrame(a, b [][]int) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestServerLimits(t *testing.T) {
	t.Run("a configured API key is required", func(t *testing.T) {
		x := newSrv(t, Config{APIKey: "k1"})
		x.errCode("GET", api.PathGames, nil, 401, api.CodeUnauthorized)
		x.key = "k1"
		x.ok("GET", api.PathGames, nil, nil)
	})
	t.Run("beyond the rate limit the answer is 429 RATE_LIMIT_EXCEEDED with Retry-After", func(t *testing.T) {
		x := newSrv(t, Config{RateLimit: 3})
		for i := 0; i < 3; i++ {
			x.ok("GET", api.PathGames, nil, nil)
		}
		x.advance(20 * time.Second)
		code, _, resp := x.do("GET", api.PathGames, nil)
		if code != 429 || resp.Header.Get("Retry-After") != "40" {
			t.Fatalf("%d, Retry-After %q", code, resp.Header.Get("Retry-After"))
		}
		x.advance(40 * time.Second)
		x.ok("GET", api.PathGames, nil, nil)
	})
	t.Run("a scorecard closes after idling: its plays are gone and it is 404", func(t *testing.T) {
		x := newSrv(t, Config{ScorecardIdle: time.Minute})
		card := x.card()
		r := x.reset(Trek.ID, card, "")
		x.advance(time.Minute)
		x.errCode("POST", api.PathCmd+"ACTION1", actionReq(Trek.ID, r.GUID, session.Action{Name: "ACTION1"}), 400, api.CodeServerError)
		x.errCode("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: Trek.ID, CardID: card}, 400, api.CodeServerError)
		x.errCode("GET", api.PathScorecard+card, nil, 404, api.CodeServerError)
	})
}

func TestServerDeterminism(t *testing.T) {
	t.Run("a restarted server never reuses a guid or card id of the one before", func(t *testing.T) {
		x, y := newSrv(t, Config{}), newSrv(t, Config{})
		ca, cb := x.card(), y.card()
		ga, gb := x.reset(Trek.ID, ca, "").GUID, y.reset(Trek.ID, cb, "").GUID
		if ca == cb || ga == gb || len(ga) != 36 || ga[14] != '4' {
			t.Fatalf("cards %s %s, guids %s %s: want distinct random v4 UUIDs", ca, cb, ga, gb)
		}
	})
	t.Run("two servers with the same seed answer the same bytes to the same commands", func(t *testing.T) {
		run := func(seed uint64) []string {
			x := newSrv(t, Config{Seed: seed})
			card := x.card()
			var bodies []string
			for _, g := range All() {
				_, b, _ := x.do("POST", api.PathCmd+"RESET", api.ResetRequest{GameID: g.ID, CardID: card})
				var r api.FrameResponse
				json.Unmarshal(b, &r)
				// guids are random (a restarted server must not reuse
				// them); everything else is the seed's.
				bodies = append(bodies, strings.ReplaceAll(string(b), r.GUID, "GUID"))
				for _, a := range append(g.Solution(seed, 1), g.Solution(seed, 2)...) {
					_, b, _ := x.do("POST", api.PathCmd+a.Name, actionReq(g.ID, r.GUID, a))
					bodies = append(bodies, strings.ReplaceAll(string(b), r.GUID, "GUID"))
				}
			}
			return bodies
		}
		a, b := run(11), run(11)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Fatal("same seed, different answers")
		}
		if c := run(12); strings.Join(a, "\n") == strings.Join(c, "\n") {
			t.Fatal("seeds 11 and 12 answer the same")
		}
	})
}
