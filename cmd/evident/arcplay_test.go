package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
)

// localGames serves the built-in games on loopback.
func localGames(t *testing.T) (*games.Server, string) {
	t.Helper()
	srv := games.NewServer(games.Config{})
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	return srv, h.URL
}

func TestArcClient(t *testing.T) {
	srv, url := localGames(t)
	ws := t.TempDir()
	t.Run("client games lists the server's games", func(t *testing.T) {
		out, _, code := arc(t, "client", "games", "--url", url)
		if code != 0 || out != "trek-v1\tTrek\nlights-v1\tLights\nvista-v1\tVista\n" {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	t.Run("client start records the first attempt and prints baseline1's summary", func(t *testing.T) {
		out, errOut, code := arc(t, "client", "start", "--workspace", ws, "--url", url, "--tag", "test", games.Lights.ID)
		att := filepath.Join(ws, session.Dir, "level_01_attempt_01")
		want := "step: 0\nstate: NOT_FINISHED\nlevel: 1 / 3 (completed: 0)\naction: RESET\n" +
			"available_actions_next: [6(ACTION6, usual semantics: coordinate action)]\npath: " + att +
			"\nfiles:\n  initial_metadata.json\n  initial_frame.png\n  initial_frame.txt\n"
		if code != 0 || out != want {
			t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
		}
	})
	t.Run("client move takes ACTION6 X Y and the JSON form, and records each step", func(t *testing.T) {
		out, _, code := arc(t, "client", "move", "--workspace", ws, "ACTION6", "0", "0")
		if code != 0 || !strings.HasPrefix(out, "step: 1\nstate: NOT_FINISHED\nlevel: 1 / 3 (completed: 0)\naction: ACTION6\n") ||
			!strings.HasSuffix(out, "files:\n  step_0001_metadata.json\n  step_0001_final.png\n  step_0001_final.txt\n") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		out, _, code = arc(t, "client", "move", "--workspace", ws, "--reasoning", `{"why":"test"}`, `{"name":"ACTION6","x":1,"y":1}`)
		if code != 0 || !strings.HasPrefix(out, "step: 2\nstate: NOT_FINISHED\n") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		b, _ := os.ReadFile(filepath.Join(ws, session.Dir, "level_01_attempt_01", "step_0002_metadata.json"))
		// baseline1's client drops action_input.reasoning from what it
		// records (client.py compact_frame_metadata).
		if !strings.Contains(string(b), `"id": "ACTION6"`) || strings.Contains(string(b), "reasoning") {
			t.Errorf("metadata:\n%s", b)
		}
	})
	t.Run("client move refuses bad arguments with exit 2 and unavailable actions with exit 1", func(t *testing.T) {
		for _, args := range [][]string{{}, {"ACTION6"}, {"ACTION1", "2", "3"}, {"JUMP"}, {"ACTION6", "x", "1"}} {
			_, errOut, code := arc(t, append([]string{"client", "move", "--workspace", ws}, args...)...)
			if code != 2 || !strings.HasPrefix(errOut, "evident: arc client move: ") {
				t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
			}
		}
		_, errOut, code := arc(t, "client", "move", "--workspace", ws, "ACTION1")
		if code != 1 || !strings.Contains(errOut, "action not in available_actions [6]") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		if _, errOut, code := arc(t, "client", "move", "--workspace", ws, "--reasoning", "{", "ACTION1"); code != 2 || !strings.Contains(errOut, "not valid JSON") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("client status prints baseline1's last-step summary from the session and, with --frame, the frame", func(t *testing.T) {
		before := srv.Stats().Requests
		out, _, code := arc(t, "client", "status", "--workspace", ws, "--frame", "--verbose")
		lines := strings.Split(out, "\n")
		att := filepath.Join(ws, session.Dir, "level_01_attempt_01")
		want := []string{"Last step information:", "step: 2", "state: NOT_FINISHED", "level: 1 / 3 (completed: 0)", "action: ACTION6",
			"available_actions_next: [6(ACTION6, usual semantics: coordinate action)]", "path: " + att, "files:",
			"  step_0002_metadata.json", "  step_0002_final.png", "  step_0002_final.txt"}
		if code != 0 || len(lines) != len(want)+2+64+1 || strings.Join(lines[:len(want)], "\n") != strings.Join(want, "\n") ||
			!strings.HasPrefix(lines[len(want)], "game lights-v1 at "+url) || lines[len(want)+1] != "frame: "+filepath.Join(att, "step_0002_final.txt") ||
			srv.Stats().Requests != before {
			t.Fatalf("exit %d\n%s", code, out)
		}
		out, _, code = arc(t, "client", "status", "--workspace", ws, "--scorecard")
		if code != 0 || !strings.Contains(out, `"lights-v1"`) || !strings.Contains(out, `"total_actions": 2`) {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	t.Run("client stop prints the closed scorecard", func(t *testing.T) {
		out, _, code := arc(t, "client", "stop", "--workspace", ws)
		var sc api.ClosedScorecard
		if code != 0 || json.Unmarshal([]byte(out), &sc) != nil || len(sc.Environments) != 1 || sc.Environments[0].Actions != 2 ||
			len(sc.Environments[0].Runs) != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	t.Run("commands without a started game say how to start one", func(t *testing.T) {
		_, errOut, code := arc(t, "client", "status", "--workspace", t.TempDir())
		if code != 1 || !strings.Contains(errOut, "run: evident arc client start GAME_ID") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if _, _, code := arc(t, "client", "start", "--workspace", t.TempDir(), "--url", url); code != 2 {
			t.Fatalf("start without a game id: exit %d", code)
		}
	})
	t.Run("an action in GAME_OVER is refused with the RESET hint", func(t *testing.T) {
		ws := t.TempDir()
		c, _ := client.New(client.Options{Workspace: ws})
		c.Start(context.Background(), url, games.Trek.ID, api.OpenScorecardRequest{})
		for i := 0; i < 24; i++ {
			c.Move(context.Background(), session.Action{Name: "ACTION3"}, nil)
		}
		_, errOut, code := arc(t, "client", "move", "--workspace", ws, "ACTION1")
		if code != 1 || errOut != "evident: arc client move: Only RESET is allowed when the game is in GAME_OVER state. Send RESET: evident arc client move RESET\n" {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

func TestArcPlanExec(t *testing.T) {
	srv, url := localGames(t)
	ws := t.TempDir()
	c, _ := client.New(client.Options{Workspace: ws})
	if _, err := c.Start(context.Background(), url, games.Lights.ID, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	games.WriteModel(games.Lights.ID, ws)
	t.Run("plan-exec predicts, sends and checks each action", func(t *testing.T) {
		out, errOut, code := arc(t, "plan-exec", "--workspace", ws, `{"name":"ACTION6","x":0,"y":0}`, `{"name": "ACTION6", "x": 63, "y": 63}`)
		if code != 0 || out != "running ACTION6 x=0 y=0\nrunning ACTION6 x=63 y=63\nsequence executed without mismatch\n" || srv.Stats().Actions != 2 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
	t.Run("plan-exec refuses RESET with a clear error and sends nothing", func(t *testing.T) {
		before := srv.Stats()
		out, errOut, code := arc(t, "plan-exec", "--workspace", ws, `{"name":"ACTION6","x":0,"y":0}`, "RESET")
		if code != 1 || !strings.HasPrefix(out, "RESET refused (action 2 of the plan): ") || srv.Stats() != before ||
			!strings.HasPrefix(errOut, "evident: arc plan-exec: RESET refused") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
	t.Run("plan-exec rejects unparsable actions with exit 2", func(t *testing.T) {
		for _, args := range [][]string{{}, {"ACTION6"}, {"JUMP"}} {
			if _, _, code := arc(t, append([]string{"plan-exec", "--workspace", ws}, args...)...); code != 2 {
				t.Errorf("%q: exit %d", args, code)
			}
		}
	})
	t.Run("plan-exec stops at a mismatch with exit 1 and the artifacts", func(t *testing.T) {
		p := filepath.Join(ws, "world_model_engine.star")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(b), "cells[cj * n + ci] = 1 - cells[cj * n + ci]", "pass", 1)), 0o644)
		sol := games.Lights.Solution(0, 1)
		arg, _ := sol[0].MarshalJSON()
		out, errOut, code := arc(t, "plan-exec", "--workspace", ws, string(arg), string(arg))
		if code != 1 || !regexp.MustCompile(`^running ACTION6 x=\d+ y=\d+\nframe mismatch after ACTION6 x=\d+ y=\d+ \(level 1, attempt 1, step 3\): rendered frame mismatch\.\nreal ascii: `).MatchString(out) ||
			!strings.HasPrefix(errOut, "evident: arc plan-exec: frame mismatch after") || srv.Stats().Actions != 3 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(ws, "mismatch_frames", "1", "mismatch_as_magneta.png")); err != nil {
			t.Error(err)
		}
	})
}

func TestArcDemo(t *testing.T) {
	for _, g := range games.All() {
		t.Run("demo wins "+g.ID+" with the reference model, verifies it and prints the scores", func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			out, errOut, code := arc(t, "demo", "--game", g.ID, "--workspace", ws)
			if code != 0 || !strings.Contains(out, "game won after ") || !strings.Contains(out, "levels 1..3 verification passed\n") ||
				!regexp.MustCompile(`won 3/3 levels in \d+ actions over 1 run\(s\), RHAE score 100\.00/100\nlevel 1: \d+ actions, human baseline \d+, score \d+\.\d{2}\n`).MatchString(out) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
	t.Run("demo refuses an unknown game", func(t *testing.T) {
		if _, _, code := arc(t, "demo", "--game", "nope"); code != 2 {
			t.Fatalf("exit %d", code)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestArcServeGames(t *testing.T) {
	t.Run("serve-games serves the games until its context ends", func(t *testing.T) {
		var out syncBuffer
		a := &cli.Command{Name: "evident", ExitErrHandler: func(context.Context, *cli.Command, error) {}, Commands: []*cli.Command{arcCommand()}, Writer: &out, ErrWriter: &out}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- a.Run(ctx, []string{"evident", "arc", "serve-games", "--addr", "127.0.0.1:0", "--seed", "4"})
		}()
		re := regexp.MustCompile(`serving 3 games at (http://127\.0\.0\.1:\d+) \(seed 4\)`)
		var url string
		for deadline := time.Now().Add(5 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if m := re.FindStringSubmatch(out.String()); m != nil {
				url = m[1]
			}
		}
		if url == "" {
			cancel()
			t.Fatalf("no address printed:\n%s", out.String())
		}
		resp, err := http.Get(url + api.PathGames)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET games: %v", err)
		}
		resp.Body.Close()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "trek-v1\tTrek\t3 levels\thuman baselines [18 52 44]\tactions [1 2 3 4]\n") ||
			!strings.HasSuffix(out.String(), "stopped after 1 requests (0 RESETs, 0 actions)\n") {
			t.Fatalf("output:\n%s", out.String())
		}
	})
}
