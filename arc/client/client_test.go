package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
)

// local is the local game server on loopback, wrapped to watch requests.
type local struct {
	srv      *games.Server
	url      string
	inflight atomic.Int32
	overlap  atomic.Bool
	delay    time.Duration
	mu       sync.Mutex
	cookies  []string // AWSALB value seen on each command ("" when absent)
	keys     []string
}

func newLocal(t *testing.T, delay time.Duration) *local {
	t.Helper()
	l := &local{srv: games.NewServer(games.Config{}), delay: delay}
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, api.PathCmd) {
			if l.inflight.Add(1) > 1 {
				l.overlap.Store(true)
			}
			defer l.inflight.Add(-1)
			time.Sleep(l.delay)
			v := ""
			if c, err := r.Cookie("AWSALB"); err == nil {
				v = c.Value
			}
			l.mu.Lock()
			l.cookies = append(l.cookies, v)
			l.keys = append(l.keys, r.Header.Get(api.HeaderAPIKey))
			l.mu.Unlock()
			if v == "" {
				http.SetCookie(w, &http.Cookie{Name: "AWSALB", Value: "node-3", Path: "/"})
			}
		}
		l.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	l.url = h.URL
	return l
}

func newClient(t *testing.T, ws string, opts ...func(*client.Options)) *client.Client {
	t.Helper()
	o := client.Options{Workspace: ws}
	for _, f := range opts {
		f(&o)
	}
	c, err := client.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t *testing.T, l *local, game string) (*client.Client, string) {
	t.Helper()
	ws := t.TempDir()
	c := newClient(t, ws)
	if _, err := c.Start(context.Background(), l.url, game, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	return c, ws
}

func move(t *testing.T, c *client.Client, names ...string) *client.Result {
	t.Helper()
	var res *client.Result
	for _, n := range names {
		a, err := client.ParseAction(n)
		if err != nil {
			t.Fatal(err)
		}
		if res, err = c.Move(context.Background(), a, nil); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	return res
}

func actionNames(as []session.Action) []string {
	var out []string
	for _, a := range as {
		b, _ := a.MarshalJSON()
		out = append(out, string(b))
	}
	return out
}

func TestStartAndMove(t *testing.T) {
	l := newLocal(t, 0)
	c, ws := start(t, l, games.Trek.ID)
	ctx := context.Background()

	t.Run("start records level 1 attempt 1 and writes the state file", func(t *testing.T) {
		att, err := session.ReadAttempt(filepath.Join(ws, session.Dir, "level_01_attempt_01"))
		if err != nil || len(att.Steps) != 0 || att.InitialMetadata.StepIndex != 0 || att.InitialMetadata.State != api.StateNotFinished {
			t.Fatalf("attempt %+v, %v", att, err)
		}
		st, err := c.ReadState()
		if err != nil || st.GameID != games.Trek.ID || st.CardID == "" || st.GUID == "" || st.StepIndex != 0 || st.WinLevels != 3 || st.BaseURL != l.url {
			t.Fatalf("state %+v, %v", st, err)
		}
	})
	t.Run("a second start in the same workspace is refused", func(t *testing.T) {
		if _, err := c.Start(ctx, l.url, games.Trek.ID, api.OpenScorecardRequest{}); !errors.Is(err, client.ErrStarted) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("start names the games when the id is unknown", func(t *testing.T) {
		_, err := newClient(t, t.TempDir()).Start(ctx, l.url, "nope", api.OpenScorecardRequest{})
		if err == nil || !strings.Contains(err.Error(), games.Vista.ID) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a move is the next step of the attempt", func(t *testing.T) {
		res := move(t, c, "ACTION1")
		if res.Status != session.Running || res.Recorded.Level != 1 || res.Recorded.Attempt != 1 || res.Recorded.Step != 1 ||
			res.Final != filepath.Join(ws, session.Dir, "level_01_attempt_01", "step_0001_final.txt") || res.State.StepIndex != 1 {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("RESET after an action opens attempt 2 of the same level", func(t *testing.T) {
		res := move(t, c, "RESET")
		if res.Recorded.Level != 1 || res.Recorded.Attempt != 2 || res.Recorded.Step != 0 || !strings.HasSuffix(res.Final, "level_01_attempt_02/initial_frame.txt") {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("the completing step is recorded in its attempt and as the next level's initial frame", func(t *testing.T) {
		res := move(t, c, actionNames(games.Trek.Solution(0, 1))...)
		if res.Status != session.LevelCompleted || res.Next.Level != 2 || res.Next.Attempt != 1 || len(res.Intermediates) != 1 {
			t.Fatalf("result %+v", res)
		}
		last, err := os.ReadFile(res.Final)
		if err != nil {
			t.Fatal(err)
		}
		initial, _ := os.ReadFile(filepath.Join(res.Next.Dir, session.InitialFrameFile))
		if string(last) != string(initial) {
			t.Error("level 2's initial frame is not the completing step's final frame")
		}
		if _, err := session.Read(c.SessionRoot()); err != nil {
			t.Fatalf("the session does not read back: %v", err)
		}
	})
	t.Run("status reports the state and the current attempt without sending anything", func(t *testing.T) {
		before := l.srv.Stats().Requests
		s, err := c.Status()
		if err != nil || s.Position.Level != 2 || s.Position.Step != 0 || s.State.LevelsCompleted != 1 ||
			!strings.HasSuffix(s.Frame, "level_02_attempt_01/initial_frame.txt") || l.srv.Stats().Requests != before {
			t.Fatalf("status %+v, %v", s, err)
		}
	})
	t.Run("actions outside available_actions are not sent", func(t *testing.T) {
		before := l.srv.Stats().Requests
		_, err := c.Move(ctx, session.Action{Name: "ACTION6", X: 1, Y: 1}, nil)
		if !errors.Is(err, client.ErrNotAvailable) || l.srv.Stats().Requests != before {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("cookies set by the server come back on every later command, across client instances", func(t *testing.T) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.cookies[0] != "" {
			t.Fatalf("first command carried a cookie %q", l.cookies[0])
		}
		for i, v := range l.cookies[1:] {
			if v != "node-3" {
				t.Fatalf("command %d carried %q", i+2, v)
			}
		}
	})
	t.Run("stop closes the scorecard, then moves fail with ErrStopped", func(t *testing.T) {
		sc, err := c.Stop(ctx)
		var card api.ClosedScorecard
		if err != nil || json.Unmarshal(sc, &card) != nil || len(card.Environments) != 1 || card.Environments[0].LevelsCompleted != 1 {
			t.Fatalf("scorecard %s, %v", sc, err)
		}
		if _, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil); !errors.Is(err, client.ErrStopped) {
			t.Fatalf("move after stop: %v", err)
		}
		if _, err := c.Stop(ctx); !errors.Is(err, client.ErrStopped) {
			t.Fatalf("second stop: %v", err)
		}
	})
	t.Run("a stopped workspace with a session cannot start another game", func(t *testing.T) {
		if _, err := c.Start(ctx, l.url, games.Trek.ID, api.OpenScorecardRequest{}); !errors.Is(err, client.ErrSessionNotEmpty) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("commands in a workspace without a game fail with ErrNotStarted", func(t *testing.T) {
		c := newClient(t, t.TempDir())
		if _, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil); !errors.Is(err, client.ErrNotStarted) {
			t.Fatalf("err %v", err)
		}
		if _, err := c.Status(); !errors.Is(err, client.ErrNotStarted) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestGameOver(t *testing.T) {
	l := newLocal(t, 0)
	c, ws := start(t, l, games.Trek.ID)
	ctx := context.Background()
	var res *client.Result
	for i := 0; i < 24; i++ {
		res = move(t, c, "ACTION3")
	}
	t.Run("running out of budget records a GAME_OVER step", func(t *testing.T) {
		if res.Status != session.GameOver || res.State.State != api.StateGameOver {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("an action in GAME_OVER is refused without being sent, with baseline1's message", func(t *testing.T) {
		before := l.srv.Stats().Requests
		_, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
		if !errors.Is(err, client.ErrGameOver) || l.srv.Stats().Requests != before || err.Error() != "Only RESET is allowed when the game is in GAME_OVER state." {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("the server's 400 in GAME_OVER is surfaced as ErrGameOver", func(t *testing.T) {
		// Make the client believe the game runs, so that it sends.
		path := filepath.Join(ws, client.StateFile)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(b), `"state": "GAME_OVER"`, `"state": "NOT_FINISHED"`, 1)), 0o600)
		before := l.srv.Stats()
		_, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
		var he *client.HTTPError
		if !errors.Is(err, client.ErrGameOver) || !errors.As(err, &he) || he.Status != 400 || l.srv.Stats().Requests != before.Requests+1 ||
			l.srv.Stats().Actions != before.Actions {
			t.Fatalf("err %v", err)
		}
		if !strings.Contains(err.Error(), "ACTION1 refused") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("RESET is accepted and opens attempt 2", func(t *testing.T) {
		res := move(t, c, "RESET")
		if res.Recorded.Attempt != 2 || res.State.State != api.StateNotFinished {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestLock(t *testing.T) {
	t.Run("the watch detects overlapping commands (control)", func(t *testing.T) {
		l := newLocal(t, 20*time.Millisecond)
		a, _ := client.NewAPI(l.url, client.APIOptions{})
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.Act(context.Background(), "g", "nope", session.Action{Name: "ACTION1"}, nil)
			}()
		}
		wg.Wait()
		if !l.overlap.Load() {
			t.Fatal("two concurrent raw requests did not overlap")
		}
	})
	t.Run("concurrent moves from separate clients of one workspace never interleave", func(t *testing.T) {
		l := newLocal(t, 0)
		_, ws := start(t, l, games.Trek.ID)
		l.delay = 3 * time.Millisecond
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				c := newClient(t, ws)
				_, err := c.Move(context.Background(), session.Action{Name: []string{"ACTION3", "ACTION4"}[i%2]}, nil)
				errs <- err
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if l.overlap.Load() {
			t.Fatal("two moves were in flight at once")
		}
		att, err := session.ReadAttempt(filepath.Join(ws, session.Dir, "level_01_attempt_01"))
		if err != nil || len(att.Steps) != n {
			t.Fatalf("%d steps, %v", len(att.Steps), err)
		}
		for i, st := range att.Steps {
			if st.Metadata.StepIndex != i+1 {
				t.Fatalf("step %d has step_index %d", i+1, st.Metadata.StepIndex)
			}
		}
	})
	t.Run("a held lock makes another command wait, then fail with ErrBusy", func(t *testing.T) {
		l := newLocal(t, 0)
		c, ws := start(t, l, games.Trek.ID)
		h, err := c.Lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		other := newClient(t, ws, func(o *client.Options) { o.LockWait = 30 * time.Millisecond })
		t0 := time.Now()
		if _, err := other.Move(context.Background(), session.Action{Name: "ACTION1"}, nil); !errors.Is(err, client.ErrBusy) || time.Since(t0) < 30*time.Millisecond {
			t.Fatalf("err %v after %v", err, time.Since(t0))
		}
		if _, err := h.Move(context.Background(), session.Action{Name: "ACTION1"}, nil); err != nil {
			t.Fatal(err)
		}
		h.Unlock()
		if _, err := other.Move(context.Background(), session.Action{Name: "ACTION1"}, nil); err != nil {
			t.Fatalf("after unlock: %v", err)
		}
		if _, err := h.Move(context.Background(), session.Action{Name: "ACTION1"}, nil); err == nil {
			t.Fatal("Move through an unlocked Held")
		}
	})
}

func TestKeysAndNoFullFrames(t *testing.T) {
	t.Run("the API key is sent with every command", func(t *testing.T) {
		l := newLocal(t, 0)
		c := newClient(t, t.TempDir(), func(o *client.Options) { o.API.Key = "k-123" })
		if _, err := c.Start(context.Background(), l.url, games.Lights.ID, api.OpenScorecardRequest{}); err != nil {
			t.Fatal(err)
		}
		move(t, c, `{"name":"ACTION6","x":15,"y":47}`)
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, k := range l.keys {
			if k != "k-123" {
				t.Fatalf("keys %q", l.keys)
			}
		}
	})
	t.Run("a remote server without an API key is refused before any request", func(t *testing.T) {
		_, err := newClient(t, t.TempDir()).Start(context.Background(), "https://three.arcprize.org", "x", api.OpenScorecardRequest{})
		if !errors.Is(err, client.ErrNoAPIKey) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("the client writes no initial_full_frames, even where the local server has full frames", func(t *testing.T) {
		l := newLocal(t, 0)
		c, ws := start(t, l, games.Vista.ID)
		res := move(t, c, actionNames(games.Vista.Solution(0, 1))...)
		if res.Next.Level != 2 {
			t.Fatalf("level 1's solution ends at %+v", res.Next)
		}
		move(t, c, "ACTION1", "RESET")
		if _, err := os.Stat(filepath.Join(ws, session.InitialFullFramesDir)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("initial_full_frames: %v", err)
		}
	})
	t.Run("WriteFullFrame writes the local server's map of the current level, and nothing where it has none", func(t *testing.T) {
		l := newLocal(t, 0)
		c, ws := start(t, l, games.Vista.ID)
		move(t, c, actionNames(games.Vista.Solution(0, 1))...)
		path, err := c.WriteFullFrame(context.Background())
		dir := filepath.Join(ws, session.InitialFullFramesDir)
		if err != nil || path != filepath.Join(dir, "level_2.txt") {
			t.Fatalf("path %q, %v", path, err)
		}
		g, ok, _ := session.ReadInitialFullFrame(dir, 2)
		want, _ := games.Vista.NewLevel(0, 2).FullFrame()
		if !ok || g.String() != want.String() {
			t.Fatal("level 2's full frame differs from the game's")
		}
		c, _ = start(t, l, games.Trek.ID)
		if path, err := c.WriteFullFrame(context.Background()); path != "" || err != nil {
			t.Fatalf("trek: %q, %v", path, err)
		}
	})
}
