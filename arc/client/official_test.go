package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/session"
)

// official is a fake of the official ARC-AGI-3 server (arc_agi api.py), as
// much as the client's limits need: the game list, scorecards that expire
// after 15 min idle on the fake clock (then 400 SERVER_ERROR "game … not
// found" to commands and 404 to close), 64×64 frames, and hooks that answer
// one command in another way.
type official struct {
	t   *testing.T
	url string

	mu       sync.Mutex
	now      time.Time
	last     time.Time // the last command, on the fake clock
	closed   bool      // the scorecard was closed or expired
	cmds     []string  // every command received ("RESET", "ACTION1", …)
	gameIDs  []string  // game_id of every command
	levels   int       // levels_completed of the play
	override func(action string, w http.ResponseWriter) bool
}

const (
	offGame = "ls20-016295f7601e"
	offCard = "card-1"
	offGUID = "guid-1"
)

func newOfficial(t *testing.T) *official {
	t.Helper()
	f := &official{t: t, now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	h := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(h.Close)
	f.url = h.URL
	return f
}

// clock is the fake clock, for the client's Options.Now.
func (f *official) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *official) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

func (f *official) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

func writeBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *official) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last.IsZero() {
		f.last = f.now
	}
	if f.now.Sub(f.last) > 15*time.Minute {
		f.closed = true
	}
	switch p := r.URL.Path; {
	case p == api.PathGames:
		writeBody(w, 200, []api.GameInfo{{GameID: offGame, Title: "LS20"}, {GameID: "ft09-aaaa"}, {GameID: "ft09-bbbb"}})
	case p == api.PathScorecardOpen:
		writeBody(w, 200, api.OpenScorecardResponse{CardID: offCard})
	case p == api.PathScorecardClose:
		if f.closed {
			writeBody(w, 404, api.ErrorBody{Error: "SERVER_ERROR", Message: "scorecard " + offCard + " not found"})
			return
		}
		f.closed = true
		writeBody(w, 200, map[string]any{"card_id": offCard, "score": 0})
	case strings.HasPrefix(p, api.PathCmd):
		action := strings.TrimPrefix(p, api.PathCmd)
		var body struct {
			GameID string `json:"game_id"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		f.cmds = append(f.cmds, action)
		f.gameIDs = append(f.gameIDs, body.GameID)
		if f.override != nil && f.override(action, w) {
			return
		}
		if f.closed {
			writeBody(w, 400, api.ErrorBody{Error: "SERVER_ERROR", Message: "game " + body.GameID + " not found"})
			return
		}
		f.last = f.now
		id, _ := api.ActionID(action)
		row := make([]int, 64)
		grid := make([][]int, 64)
		for i := range grid {
			grid[i] = row
		}
		writeBody(w, 200, api.FrameResponse{GameID: body.GameID, GUID: offGUID, Frame: [][][]int{grid}, State: api.StateNotFinished,
			LevelsCompleted: f.levels, WinLevels: 3, ActionInput: api.ActionInput{ID: id}, AvailableActions: []int{1, 2, 3, 4}})
	default:
		writeBody(w, 404, api.ErrorBody{Error: "NOT_FOUND"})
	}
}

// offClient is a client of a fresh workspace with the fake's clock, its
// warnings in warn and its back-off waits recorded in sleeps.
type offClient struct {
	*client.Client
	ws     string
	warn   *bytes.Buffer
	sleeps *[]time.Duration
}

func newOffClient(t *testing.T, f *official, ws string) offClient {
	t.Helper()
	if ws == "" {
		ws = t.TempDir()
	}
	var warn bytes.Buffer
	var sleeps []time.Duration
	c, err := client.New(client.Options{Workspace: ws, Now: f.clock, Warn: &warn,
		API: client.APIOptions{Key: "k", Sleep: func(_ context.Context, d time.Duration) error {
			sleeps = append(sleeps, d)
			return nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	return offClient{c, ws, &warn, &sleeps}
}

func (c offClient) start(t *testing.T, f *official, id string) *client.Result {
	t.Helper()
	res, err := c.Start(context.Background(), f.url, id, api.OpenScorecardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (c offClient) move(t *testing.T, names ...string) *client.Result {
	t.Helper()
	var res *client.Result
	for _, n := range names {
		var err error
		if res, err = c.Move(context.Background(), session.Action{Name: n}, nil); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	return res
}

func TestExpiry(t *testing.T) {
	ctx := context.Background()
	t.Run("a command more than 10 min after the last one warns with the time left, and is sent", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		f.advance(11 * time.Minute)
		c.move(t, "ACTION1")
		if got := c.warn.String(); got != "warning: no command for 11m0s: the server closes scorecard card-1 after 15m0s without one (4m0s left)\n" {
			t.Fatalf("warning %q", got)
		}
		c.warn.Reset()
		f.advance(10 * time.Minute)
		c.move(t, "ACTION2")
		if c.warn.Len() != 0 {
			t.Fatalf("warning at exactly 10 min: %q", c.warn.String())
		}
	})
	t.Run("a command more than 15 min after the last one is refused as expired without being sent", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		c.move(t, "ACTION1")
		f.advance(16*time.Minute + 30*time.Second)
		_, err := c.Move(ctx, session.Action{Name: "ACTION2"}, nil)
		var ee *client.ExpiredError
		if !errors.Is(err, client.ErrScorecardExpired) || !errors.As(err, &ee) || ee.Idle != 16*time.Minute+30*time.Second || ee.Server != nil {
			t.Fatalf("err %v", err)
		}
		want := "the scorecard card-1 of game " + offGame + " has expired: no command for 16m30s (the last command was at 2026-12-01T10:00:00Z), " +
			"and the server closes a scorecard after 15m0s without one; nothing was sent, the game cannot go on"
		if err.Error() != want {
			t.Fatalf("message\n%s\nwant\n%s", err, want)
		}
		if got := strings.Join(f.commands(), " "); got != "RESET ACTION1" {
			t.Fatalf("commands sent: %s", got)
		}
		st, _ := c.ReadState()
		if !st.Expired {
			t.Fatal("the state is not marked expired")
		}
		if _, err := c.Move(ctx, session.Action{Name: "RESET"}, nil); !errors.Is(err, client.ErrScorecardExpired) || len(f.commands()) != 2 {
			t.Fatalf("a RESET after expiry: %v, %d commands", err, len(f.commands()))
		}
	})
	t.Run("the server's 400 game not found after idle is reported as expired with the idle gap", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		f.advance(12 * time.Minute)
		f.mu.Lock()
		f.closed = true // the server lost the game before the client's limit
		f.mu.Unlock()
		_, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
		var ee *client.ExpiredError
		var he *client.HTTPError
		if !errors.As(err, &ee) || ee.Idle != 12*time.Minute || !errors.As(err, &he) || he.Status != 400 {
			t.Fatalf("err %v", err)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "the server no longer knows game "+offGame+" (guid guid-1) after 12m0s (the last command was at 2026-12-01T10:00:00Z) without a command: its scorecard card-1 expired") ||
			!strings.HasSuffix(msg, "400 SERVER_ERROR: game "+offGame+" not found)") {
			t.Fatalf("message %s", msg)
		}
		if st, _ := c.ReadState(); !st.Expired || st.StepIndex != 0 {
			t.Fatalf("state %+v", st)
		}
	})
	t.Run("a 404 on close is a warning: the game is stopped, its session kept", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		f.advance(20 * time.Minute)
		sc, err := c.Stop(ctx)
		if err != nil || sc != nil {
			t.Fatalf("scorecard %s, err %v", sc, err)
		}
		want := "warning: the server has no scorecard card-1 to close (POST /api/scorecard/close: 404 SERVER_ERROR: scorecard card-1 not found, 20m0s after the last command): " +
			"it closes a scorecard after 15m0s idle or 3 days open; the game is marked stopped and its session is kept\n"
		if c.warn.String() != want {
			t.Fatalf("warning\n%s\nwant\n%s", c.warn.String(), want)
		}
		if st, _ := c.ReadState(); !st.Stopped {
			t.Fatal("not stopped")
		}
		if _, err := os.Stat(filepath.Join(c.ws, session.Dir, "level_01_attempt_01", session.InitialMetadataFile)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("start after an expired game moves its session and state aside and starts anew, twice", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		c.move(t, "ACTION1", "ACTION2")
		for n := 1; n <= 2; n++ {
			f.advance(16 * time.Minute)
			if _, err := c.Move(ctx, session.Action{Name: "ACTION3"}, nil); !errors.Is(err, client.ErrScorecardExpired) {
				t.Fatalf("err %v", err)
			}
			f.mu.Lock()
			f.closed, f.last = false, f.now
			f.mu.Unlock()
			c.warn.Reset()
			res := c.start(t, f, offGame)
			aside := filepath.Join(c.ws, fmt.Sprintf("client/session.expired-%d", n))
			if res.MovedAside != aside || res.Metadata.StepIndex != 0 || res.Recorded.Attempt != 1 {
				t.Fatalf("result %+v", res)
			}
			if _, err := os.Stat(filepath.Join(aside, "level_01_attempt_01", session.InitialMetadataFile)); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(c.ws, fmt.Sprintf("client/client_state.expired-%d.json", n))); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(c.warn.String(), "its session is kept in "+aside) {
				t.Fatalf("warning %q", c.warn.String())
			}
			att, err := session.ReadAttempt(filepath.Join(c.ws, session.Dir, "level_01_attempt_01"))
			if err != nil || len(att.Steps) != 0 {
				t.Fatalf("new session: %d steps, %v", len(att.Steps), err)
			}
		}
		old, err := session.ReadAttempt(filepath.Join(c.ws, "client/session.expired-1", "level_01_attempt_01"))
		if err != nil || len(old.Steps) != 2 {
			t.Fatalf("the first game's steps: %d, %v", len(old.Steps), err)
		}
	})
	t.Run("start in a workspace whose game is running and not idle is still refused", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		f.advance(14 * time.Minute)
		if _, err := c.Start(ctx, f.url, offGame, api.OpenScorecardRequest{}); !errors.Is(err, client.ErrStarted) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestOfficialErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, body string }{
		{"the code GAME_OVER", `{"error":"GAME_OVER","message":"only RESET"}`},
		{"a message saying game over", `{"error":"VALIDATION_ERROR","message":"game over"}`},
		{"baseline1's shape saying the game is over", `{"error":"The game is over."}`},
	} {
		t.Run("a 400 with "+tc.name+" is ErrGameOver, not an expiry", func(t *testing.T) {
			f := newOfficial(t)
			c := newOffClient(t, f, "")
			c.start(t, f, offGame)
			f.override = func(action string, w http.ResponseWriter) bool {
				if action == "RESET" {
					return false
				}
				w.WriteHeader(400)
				w.Write([]byte(tc.body))
				return true
			}
			_, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
			if !errors.Is(err, client.ErrGameOver) || errors.Is(err, client.ErrScorecardExpired) {
				t.Fatalf("err %v", err)
			}
		})
	}
	t.Run("a 429 with Retry-After in seconds or as an HTTP date (read on the fake clock) waits that long, then the command goes through", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		n := 0
		f.override = func(action string, w http.ResponseWriter) bool {
			if n++; n > 2 {
				return false
			}
			w.Header().Set("Retry-After", []string{"7", f.now.Add(30 * time.Second).Format(http.TimeFormat)}[n-1])
			writeBody(w, 429, api.ErrorBody{Error: "RATE_LIMIT_EXCEEDED"})
			return true
		}
		res := c.move(t, "ACTION1")
		if fmt.Sprint(*c.sleeps) != "[7s 30s]" || res.Metadata.StepIndex != 1 {
			t.Fatalf("waits %v, step_index %d", *c.sleeps, res.Metadata.StepIndex)
		}
		if got := strings.Join(f.commands(), " "); got != "RESET ACTION1 ACTION1 ACTION1" {
			t.Fatalf("commands %s", got)
		}
	})
}

func TestGameIDPrefix(t *testing.T) {
	ctx := context.Background()
	t.Run("the id without its version names the one game that has it, and the whole id is sent", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, "ls20")
		c.move(t, "ACTION1")
		st, _ := c.ReadState()
		if st.GameID != offGame || strings.Join(f.gameIDs, " ") != offGame+" "+offGame {
			t.Fatalf("state game %s, sent %q", st.GameID, f.gameIDs)
		}
	})
	for _, tc := range []struct{ name, id, want string }{
		{"an id that names two versions is ambiguous, both listed", "ft09", `client: game id "ft09" is ambiguous: it names ft09-aaaa, ft09-bbbb; give the whole id`},
		{"a prefix that stops inside the name is not accepted, the candidates are named", "ls2", `client: the server has no game "ls2" (a prefix must end where the id's "-version" starts); did you mean ls20-016295f7601e?`},
		{"an unknown id lists every game", "zz", `client: the server has no game "zz"; it has ls20-016295f7601e, ft09-aaaa, ft09-bbbb`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newOfficial(t)
			c := newOffClient(t, f, "")
			_, err := c.Start(ctx, f.url, tc.id, api.OpenScorecardRequest{})
			if err == nil || err.Error() != tc.want+" (server "+f.url+")" {
				t.Fatalf("err %v", err)
			}
			if len(f.commands()) != 0 {
				t.Fatal("a command was sent")
			}
		})
	}
}

func TestBaseline1Rules(t *testing.T) {
	ctx := context.Background()
	t.Run("RESET before the attempt's first action is refused with baseline1's message, sent with Force", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		_, err := c.Move(ctx, session.Action{Name: "RESET"}, nil)
		if !errors.Is(err, client.ErrResetBeforeAction) || err.Error() != "RESET is not allowed before taking any action in the current attempt." || len(f.commands()) != 1 {
			t.Fatalf("err %v, %d commands", err, len(f.commands()))
		}
		res, err := c.MoveWith(ctx, session.Action{Name: "RESET"}, client.MoveOptions{Force: true})
		if err != nil || res.Recorded.Attempt != 2 {
			t.Fatalf("forced: %+v, %v", res, err)
		}
		c.move(t, "ACTION1", "RESET")
	})
	t.Run("RESET right after a completed level is refused (it would wipe the game to level 1)", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		f.levels = 1
		if res := c.move(t, "ACTION1"); res.Next.Level != 2 || res.Next.Step != 0 {
			t.Fatalf("next %+v", res.Next)
		}
		if _, err := c.Move(ctx, session.Action{Name: "RESET"}, nil); !errors.Is(err, client.ErrResetBeforeAction) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("the level's actions count step_index from its first attempt, RESETs included, and stop at 1,500", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		c.move(t, "ACTION1", "RESET", "ACTION2")
		if n, err := c.LevelActions(); n != 3 || err != nil {
			t.Fatalf("level 1: %d, %v", n, err)
		}
		f.levels = 1
		c.move(t, "ACTION3") // completes level 1 at step_index 4
		c.move(t, "ACTION1", "ACTION2")
		if n, err := c.LevelActions(); n != 2 || err != nil {
			t.Fatalf("level 2: %d, %v", n, err)
		}
		// Pretend the level already took 1,498 actions: the latest
		// metadata's step_index is what counts.
		setStepIndex(t, filepath.Join(c.ws, session.Dir, "level_02_attempt_01", session.StepMetadataFile(2)), 4+1498)
		c.move(t, "ACTION1") // the 1,499th
		setStepIndex(t, filepath.Join(c.ws, session.Dir, "level_02_attempt_01", session.StepMetadataFile(3)), 4+1500)
		sent := len(f.commands())
		_, err := c.Move(ctx, session.Action{Name: "RESET"}, nil)
		want := "Current level action limit reached: 1500 actions on level 2 across all attempts (limit: 1500)."
		if !errors.Is(err, client.ErrLevelActionLimit) || err.Error() != want || len(f.commands()) != sent {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a missing first attempt of the level is named", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		c.move(t, "ACTION1", "RESET")
		first := filepath.Join(c.ws, session.Dir, "level_01_attempt_01")
		if err := os.Rename(first, first+".moved"); err != nil {
			t.Fatal(err)
		}
		_, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
		if err == nil || err.Error() != "client: missing metadata for the first attempt of the current level: "+filepath.Join(first, session.InitialMetadataFile) {
			t.Fatalf("err %v", err)
		}
	})
}

// setStepIndex rewrites the step_index of a recorded metadata file.
func setStepIndex(t *testing.T, path string, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := session.ParseMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	m.StepIndex = n
	out, err := m.MarshalFile()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStateFile(t *testing.T) {
	t.Run("a state file that is not JSON is an error naming it, and nothing is sent", func(t *testing.T) {
		f := newOfficial(t)
		c := newOffClient(t, f, "")
		c.start(t, f, offGame)
		path := filepath.Join(c.ws, client.StateFile)
		if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := c.Move(context.Background(), session.Action{Name: "ACTION1"}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "client: "+path+": ") || len(f.commands()) != 1 {
			t.Fatalf("err %v", err)
		}
	})
}
