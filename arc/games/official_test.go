package games

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"evident/arc/api"
	"evident/arc/session"
)

// schemas compiles the JSON Schemas of testdata/ (written from the official
// pydantic models; see testdata/README.md).
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	out := map[string]*jsonschema.Schema{}
	for _, name := range []string{"anon_key", "environment_info", "open_scorecard", "frame_data", "environment_scorecard", "legacy_scorecard", "error"} {
		path, err := filepath.Abs(filepath.Join("testdata", name+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

// valid checks body against schema and returns it decoded as a generic
// value.
func valid(t *testing.T, s *jsonschema.Schema, what string, body []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, body)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("%s: %v\n%.400s", what, err, body)
	}
	return v
}

// call sends a request with the toolkit's headers and returns status and body.
func (x *srv) call(method, path string, body any) (int, []byte) {
	x.t.Helper()
	code, b, _ := x.do(method, path, body)
	return code, b
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestToolkitSequence replays the requests of the official toolkit's client
// (arcprize/ARC-AGI arc_agi: base.py _get_anonymous_api_key, _fetch_from_api,
// create_scorecard, _fetch_metadata via make("trek"), remote_wrapper.py
// reset and step with reasoning json.dumps'ed to a string, get_scorecard,
// close_scorecard) and validates every answer against the official models.
func TestToolkitSequence(t *testing.T) {
	sch := schemas(t)
	x := newSrv(t, Config{})
	code, b := x.call("GET", api.PathAnonKey, nil)
	if code != 200 {
		t.Fatalf("anonkey: %d %s", code, b)
	}
	valid(t, sch["anon_key"], "anonkey", b)
	var key api.AnonKeyResponse
	json.Unmarshal(b, &key)
	x.key = key.APIKey

	code, b = x.call("GET", api.PathGames, nil)
	var list []json.RawMessage
	if code != 200 || json.Unmarshal(b, &list) != nil || len(list) != 3 {
		t.Fatalf("games: %d %s", code, b)
	}
	for i, g := range list {
		valid(t, sch["environment_info"], "games entry", g)
		var info api.EnvironmentInfo
		json.Unmarshal(g, &info)
		if want := All()[i]; info.GameID != want.ID || info.Title != want.Title || !reflect.DeepEqual(info.BaselineActions, want.Baselines) ||
			!reflect.DeepEqual(info.Tags, want.Tags) || info.DefaultFPS != 5 {
			t.Fatalf("games entry %d: %s", i, g)
		}
	}

	code, b = x.call("POST", api.PathScorecardOpen, map[string]any{"tags": []string{"wrapper"}})
	if code != 200 {
		t.Fatalf("open: %d %s", code, b)
	}
	valid(t, sch["open_scorecard"], "open", b)
	var open api.OpenScorecardResponse
	json.Unmarshal(b, &open)

	t.Run("GET /api/games/{id} matches the id or its prefix before a dash", func(t *testing.T) {
		for _, id := range []string{"trek", "trek-v1"} {
			code, b := x.call("GET", api.PathGames+"/"+id, nil)
			var info api.EnvironmentInfo
			valid(t, sch["environment_info"], id, b)
			if json.Unmarshal(b, &info); code != 200 || info.GameID != Trek.ID {
				t.Fatalf("%s: %d %s", id, code, b)
			}
		}
		for _, id := range []string{"tr", "trek-v2", "nope"} {
			code, b := x.call("GET", api.PathGames+"/"+id, nil)
			valid(t, sch["error"], id, b)
			var e api.ErrorBody
			if json.Unmarshal(b, &e); code != 404 || e.Error != api.CodeServerError || e.Message != "game "+id+" not found" {
				t.Fatalf("%s: %d %s", id, code, b)
			}
		}
	})
	t.Run("the healthcheck answers okay as text", func(t *testing.T) {
		code, b, resp := x.do("GET", api.PathHealthcheck, nil)
		if code != 200 || string(b) != "okay" || resp.Header.Get("Content-Type") != "text/plain" {
			t.Fatalf("%d %q %q", code, b, resp.Header.Get("Content-Type"))
		}
	})

	frame := func(what string, code int, b []byte) api.FrameResponse {
		t.Helper()
		if code != 200 {
			t.Fatalf("%s: %d %s", what, code, b)
		}
		valid(t, sch["frame_data"], what, b)
		var r api.FrameResponse
		json.Unmarshal(b, &r)
		return r
	}
	// remote_wrapper.py reset: {card_id, game_id} (the full id from the
	// metadata), then step: {game_id, guid[, x, y][, reasoning]}.
	code, b = x.call("POST", api.PathCmd+"RESET", map[string]any{"card_id": open.CardID, "game_id": Trek.ID})
	r := frame("RESET", code, b)
	if !r.FullReset || r.State != api.StateNotFinished || r.LevelsCompleted != 0 {
		t.Fatalf("opening RESET: %s", b)
	}
	guid := r.GUID
	reasoning, _ := json.Marshal(`{"why": "try left"}`)
	step := func(name string) api.FrameResponse {
		t.Helper()
		code, b := x.call("POST", api.PathCmd+name, map[string]any{"game_id": Trek.ID, "guid": guid, "reasoning": json.RawMessage(reasoning)})
		return frame(name, code, b)
	}
	t.Run("reasoning sent as a JSON string comes back as the same string", func(t *testing.T) {
		r := step("ACTION3")
		if string(r.ActionInput.Reasoning) != string(reasoning) || r.ActionInput.ID != 3 || r.FullReset {
			t.Fatalf("action_input %s %s, full_reset %v", r.ActionInput.Reasoning, r.ActionInput.Data, r.FullReset)
		}
	})
	r = step("RESET")
	if r.FullReset || r.LevelsCompleted != 0 {
		t.Fatalf("a RESET after an action restarts the level: full_reset %v", r.FullReset)
	}
	for _, a := range Trek.Solution(0, 1) {
		r = step(a.Name)
	}
	if r.LevelsCompleted != 1 {
		t.Fatalf("levels_completed %d", r.LevelsCompleted)
	}
	step("ACTION2")

	// Hand-checked: one run; ACTION3, the level RESET and the 14 moves of
	// Trek's level 1 are 16 actions on level 1 (baseline 18): (18/16)²·100
	// = 126.56, capped at 115. ACTION2 is level 2's one action. Run score
	// (115·1 + 0·2 + 0·3)/6 = 19.17, capped at 100·1/6 = 16.67.
	checkCard := func(t *testing.T, b []byte) {
		t.Helper()
		var sc api.EnvironmentScorecard
		json.Unmarshal(b, &sc)
		if len(Trek.Solution(0, 1)) != 14 {
			t.Fatal("the hand check assumes a 14-move solution of trek level 1")
		}
		one, three := 1, 3
		resets, completed := 1, false
		wantRun := api.EnvironmentScore{GUID: guid, Score: 100.0 / 6, LevelsCompleted: 1, Actions: 17, Resets: &resets,
			State: api.StateNotFinished, Completed: &completed, LevelScores: []float64{115, 0, 0}, LevelActions: []int{16, 1, 0},
			LevelBaselineActions: []int{18, 52, 44}}
		if len(sc.Environments) != 1 || len(sc.Environments[0].Runs) != 1 || !near(sc.Score, 100.0/6) {
			t.Fatalf("scorecard %s", b)
		}
		run := sc.Environments[0].Runs[0]
		if !near(run.Score, wantRun.Score) {
			t.Fatalf("run score %v", run.Score)
		}
		run.Score = wantRun.Score
		e := sc.Environments[0]
		if !reflect.DeepEqual(run, wantRun) || e.ID != Trek.ID || !near(e.Score, 100.0/6) || e.Actions != 17 || e.Resets != 1 ||
			e.LevelsCompleted != 1 || e.Completed || e.LevelCount != 3 {
			t.Fatalf("environment %s", b)
		}
		if len(sc.TagsScores) != 1 || sc.TagsScores[0].ID != "keyboard" || !near(sc.TagsScores[0].Score, 100.0/6) ||
			*sc.TagsScores[0].NumberOfLevels != three || *sc.TagsScores[0].NumberOfEnvironments != one || sc.TagsScores[0].Actions != 17 {
			t.Fatalf("tags_scores %s", b)
		}
		if sc.CardID != open.CardID || !reflect.DeepEqual(sc.Tags, []string{"wrapper", "agent"}) || sc.TotalEnvironments != 1 ||
			sc.TotalEnvironmentsCompleted != 0 || sc.TotalLevelsCompleted != 1 || sc.TotalLevels != 3 || sc.TotalActions != 17 {
			t.Fatalf("totals %s", b)
		}
	}
	t.Run("GET /api/scorecard/{card_id} is the official EnvironmentScorecard, scored by hand", func(t *testing.T) {
		code, b := x.call("GET", api.PathScorecard+open.CardID, nil)
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		valid(t, sch["environment_scorecard"], "scorecard", b)
		if bytes.Contains(b, []byte(`"cards"`)) {
			t.Errorf("GET has the older agents' cards: %s", b)
		}
		checkCard(t, b)
	})
	t.Run("close answers the same scorecard; then GET and close are 404", func(t *testing.T) {
		code, b := x.call("POST", api.PathScorecardClose, map[string]any{"card_id": open.CardID})
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		valid(t, sch["environment_scorecard"], "close", b)
		checkCard(t, b)
		code, b = x.call("GET", api.PathScorecard+open.CardID, nil)
		valid(t, sch["error"], "GET after close", b)
		if code != 404 || !strings.Contains(string(b), "card_id `"+open.CardID+"` not found") {
			t.Fatalf("GET after close: %d %s", code, b)
		}
		code, b = x.call("POST", api.PathScorecardClose, map[string]any{"card_id": open.CardID})
		valid(t, sch["error"], "second close", b)
		if code != 404 || !strings.Contains(string(b), `"VALIDATION_ERROR"`) {
			t.Fatalf("second close: %d %s", code, b)
		}
		code, b = x.call("POST", api.PathCmd+"ACTION1", map[string]any{"game_id": Trek.ID, "guid": guid})
		valid(t, sch["error"], "action after close", b)
		if code != 400 || !strings.Contains(string(b), `"message":"game trek-v1 not found"`) {
			t.Fatalf("action after close: %d %s", code, b)
		}
	})
}

// TestOlderAgentsSequence replays the requests of the older official agents
// (ARC-AGI-3-Agents before the toolkit, git b06c432^: main.py lists the
// games, swarm.py opens a scorecard, agent.py do_action_request sends RESET
// {game_id, card_id} and actions {game_id, x, y, guid, reasoning object},
// get_scorecard GETs /api/scorecard/{card_id}/{game_id}, swarm.py
// close_scorecard validates the close answer as structs.py Scorecard).
func TestOlderAgentsSequence(t *testing.T) {
	sch := schemas(t)
	x := newSrv(t, Config{})
	code, b := x.call("GET", api.PathGames, nil)
	var games []api.GameInfo
	if code != 200 || json.Unmarshal(b, &games) != nil || games[1].GameID != Lights.ID {
		t.Fatalf("games %d %s", code, b)
	}
	_, b = x.call("POST", api.PathScorecardOpen, map[string]any{"tags": []string{"agent", "random"}})
	var open api.OpenScorecardResponse
	json.Unmarshal(b, &open)
	code, b = x.call("POST", api.PathCmd+"RESET", map[string]any{"game_id": Lights.ID, "card_id": open.CardID})
	if code != 200 {
		t.Fatalf("RESET: %d %s", code, b)
	}
	valid(t, sch["frame_data"], "RESET", b)
	var r api.FrameResponse
	json.Unmarshal(b, &r)
	for _, a := range Lights.Solution(0, 1) {
		code, b = x.call("POST", api.PathCmd+a.Name, map[string]any{"game_id": Lights.ID, "x": a.X, "y": a.Y, "guid": r.GUID,
			"reasoning": map[string]any{"thought": "flip"}})
		valid(t, sch["frame_data"], a.Name, b)
		var got api.FrameResponse
		if json.Unmarshal(b, &got); code != 200 || string(got.ActionInput.Reasoning) != `{"thought":"flip"}` {
			t.Fatalf("%s: %d %s", a.Name, code, b)
		}
	}
	t.Run("GET /api/scorecard/{card_id}/{game_id} is the older agents' scorecard", func(t *testing.T) {
		code, b := x.call("GET", api.PathScorecard+open.CardID+"/"+Lights.ID, nil)
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		valid(t, sch["legacy_scorecard"], "legacy", b)
		var got api.LegacyScorecard
		json.Unmarshal(b, &got)
		// Lights level 1 in its 2 clicks: one level, two actions, no reset.
		want := api.LegacyScorecard{CardID: open.CardID, Won: 0, Played: 1, TotalActions: 2, LevelsCompleted: 1, Score: 1, Cards: map[string]api.Card{
			Lights.ID: {GameID: Lights.ID, TotalPlays: 1, GUIDs: []string{r.GUID}, Scores: []int{1}, LevelsCompleted: []int{1},
				States: []string{api.StateNotFinished}, Actions: []int{2}, ActionsByLevel: [][][2]int{{{1, 2}}}, Resets: []int{0}, TotalActions: 2}}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
		for _, k := range []string{`"won"`, `"played"`, `"total_actions"`, `"score"`} {
			if !bytes.Contains(b, []byte(k)) {
				t.Errorf("no %s in %s", k, b)
			}
		}
		code, b = x.call("GET", api.PathScorecard+open.CardID+"/"+Trek.ID, nil)
		valid(t, sch["legacy_scorecard"], "legacy, game not played", b)
		if code != 200 || !strings.Contains(string(b), `"cards":{}`) || !strings.Contains(string(b), `"played":1`) {
			t.Fatalf("a game not played: %d %s", code, b)
		}
	})
	t.Run("the close answer validates as the older agents' Scorecard and carries their cards", func(t *testing.T) {
		code, b := x.call("POST", api.PathScorecardClose, map[string]any{"card_id": open.CardID})
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		valid(t, sch["environment_scorecard"], "close", b)
		// structs.py Scorecard reads these keys and ignores the others.
		var all map[string]json.RawMessage
		json.Unmarshal(b, &all)
		input := map[string]json.RawMessage{}
		for _, k := range []string{"games", "cards", "source_url", "tags", "opaque", "card_id", "api_key"} {
			if v, ok := all[k]; ok {
				input[k] = v
			}
		}
		in, _ := json.Marshal(input)
		valid(t, sch["legacy_scorecard"], "close as the older Scorecard", in)
		if !strings.Contains(string(all["cards"]), `"total_plays":1`) {
			t.Fatalf("cards %s", all["cards"])
		}
	})
}

func TestScorecardExpiry(t *testing.T) {
	sch := schemas(t)
	for _, c := range []struct {
		name  string
		cfg   Config
		steps []time.Duration // clock advances between commands
	}{
		{"15 minutes without a command close it", Config{}, []time.Duration{DefaultScorecardIdle}},
		{"3 days open close it however busy it is", Config{ScorecardIdle: 48 * time.Hour}, []time.Duration{40 * time.Hour, 32 * time.Hour}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := newSrv(t, c.cfg)
			card := x.card()
			r := x.reset(Trek.ID, card, "")
			for i, d := range c.steps {
				if i > 0 {
					x.act(Trek.ID, r.GUID, session.Action{Name: "ACTION1"})
				}
				x.advance(d - time.Nanosecond)
				code, b := x.call("GET", api.PathScorecard+card, nil)
				if code != 200 {
					t.Fatalf("closed early, step %d: %d %s", i, code, b)
				}
				x.advance(time.Nanosecond)
			}
			code, b := x.call("POST", api.PathCmd+"ACTION1", actionReq(Trek.ID, r.GUID, session.Action{Name: "ACTION1"}))
			valid(t, sch["error"], "action", b)
			if code != 400 || !strings.Contains(string(b), `{"error":"SERVER_ERROR","message":"game trek-v1 not found"}`) {
				t.Fatalf("action after expiry: %d %s", code, b)
			}
			for _, req := range []struct{ method, path string }{{"GET", api.PathScorecard + card}, {"POST", api.PathScorecardClose}} {
				code, b := x.call(req.method, req.path, api.CloseScorecardRequest{CardID: card})
				valid(t, sch["error"], req.path, b)
				if code != http.StatusNotFound {
					t.Fatalf("%s %s after expiry: %d %s", req.method, req.path, code, b)
				}
			}
		})
	}
}

func TestServerLimitsOfficial(t *testing.T) {
	x := newSrv(t, Config{APIKey: "k1"})
	t.Run("the healthcheck and anonkey need no key; the anonymous key is refused when a key is configured", func(t *testing.T) {
		if code, _ := x.call("GET", api.PathHealthcheck, nil); code != 200 {
			t.Fatal(code)
		}
		code, b := x.call("GET", api.PathAnonKey, nil)
		if code != 200 || !strings.Contains(string(b), AnonymousAPIKey) {
			t.Fatalf("%d %s", code, b)
		}
		x.key = AnonymousAPIKey
		x.errCode("GET", api.PathGames, nil, 401, api.CodeUnauthorized)
	})
	t.Run("reasoning over 16 KiB is 400 VALIDATION_ERROR", func(t *testing.T) {
		x.key = "k1"
		r := x.reset(Trek.ID, x.card(), "")
		big, _ := json.Marshal(strings.Repeat("x", MaxReasoningBytes))
		x.errCode("POST", api.PathCmd+"ACTION1", map[string]any{"game_id": Trek.ID, "guid": r.GUID, "reasoning": json.RawMessage(big)}, 400, api.CodeValidation)
	})
}
