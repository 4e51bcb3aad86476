package client_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/session"
)

// TestTheSessionNeverSilentlyLagsTheGame: when the server played a command
// but its answer could not be recorded (an 8×8 frame) or read (not JSON),
// the state is marked lagging and every later command is refused without
// being sent, so the session never skips a step the game took (fresh-user
// report: the next move used to be recorded as the next step).
func TestTheSessionNeverSilentlyLagsTheGame(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		why    string
	}{
		{"an 8×8 frame", func(w http.ResponseWriter) {
			grid := make([][]int, 8)
			for y := range grid {
				grid[y] = make([]int, 8)
			}
			writeBody(w, 200, api.FrameResponse{GameID: offGame, GUID: offGUID, Frame: [][][]int{grid}, State: api.StateNotFinished,
				WinLevels: 3, ActionInput: api.ActionInput{ID: 1}, AvailableActions: []int{1, 2, 3, 4}})
		}, "the server played ACTION1 (step_index 1) but its response could not be recorded"},
		{"an answer that is not JSON", func(w http.ResponseWriter) {
			w.WriteHeader(200)
			w.Write([]byte("<html>proxy error</html>"))
		}, "the server may have played ACTION1 (step_index 1) but its answer was not received"},
		{"an answer for another game", func(w http.ResponseWriter) {
			grid := make([][]int, 64)
			for y := range grid {
				grid[y] = make([]int, 64)
			}
			writeBody(w, 200, api.FrameResponse{GameID: offGame, GUID: "someone-else", Frame: [][][]int{grid}, State: api.StateNotFinished,
				WinLevels: 3, ActionInput: api.ActionInput{ID: 1}, AvailableActions: []int{1, 2, 3, 4}})
		}, "the server answered ACTION1 for game " + offGame + " (guid someone-else), not this workspace's game"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newOfficial(t)
			c := newOffClient(t, f, "")
			c.start(t, f, offGame)
			f.override = func(action string, w http.ResponseWriter) bool { tt.answer(w); return true }
			_, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
			if !errors.Is(err, client.ErrLagging) || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("first move: %v", err)
			}
			f.override = nil
			sent := len(f.commands())
			_, err = c.Move(ctx, session.Action{Name: "ACTION2"}, nil)
			if !errors.Is(err, client.ErrLagging) || !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Fatalf("second move: %v", err)
			}
			if n := len(f.commands()); n != sent {
				t.Fatalf("the refused move reached the server (%d commands, want %d)", n, sent)
			}
			if _, err := os.Stat(filepath.Join(c.ws, "client", "session", "level_01_attempt_01", "step_0001_metadata.json")); err == nil {
				t.Fatal("a step was recorded for the lost answer")
			}
			res, err := c.Start(ctx, f.url, offGame, api.OpenScorecardRequest{})
			if err != nil || res.MovedAside == "" {
				t.Fatalf("start after the lag: moved aside %q, %v", res.MovedAside, err)
			}
		})
	}
}

// TestGameGoneSoonAfterAStartSaysTheServerForgotIt: a 400 "game … not
// found" a minute after the last command is not an idle expiry: the message
// says the server restarted or closed the scorecard, and a later command
// repeats that reason instead of claiming a long idle time.
func TestGameGoneSoonAfterAStartSaysTheServerForgotIt(t *testing.T) {
	ctx := context.Background()
	f := newOfficial(t)
	c := newOffClient(t, f, "")
	c.start(t, f, offGame)
	f.advance(time.Minute)
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	_, err := c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
	if !errors.Is(err, client.ErrScorecardExpired) || !strings.Contains(err.Error(), "although the last command was only 1m0s ago, within its 15m0s idle limit: it was restarted") {
		t.Fatalf("first: %v", err)
	}
	f.advance(time.Minute)
	_, err = c.Move(ctx, session.Action{Name: "ACTION1"}, nil)
	if !errors.Is(err, client.ErrScorecardExpired) || !strings.HasPrefix(err.Error(), "the game in this workspace ended earlier: the server no longer knows game") ||
		strings.Contains(err.Error(), "no command for") {
		t.Fatalf("second: %v", err)
	}
}
