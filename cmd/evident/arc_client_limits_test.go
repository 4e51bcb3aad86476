package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
)

// setLastCommand rewrites the workspace's state file as if the last
// command had been ago earlier (the command line runs on the real clock).
func setLastCommand(t *testing.T, ws string, ago time.Duration) {
	t.Helper()
	path := filepath.Join(ws, client.StateFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st client.State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	st.LastCommand = time.Now().Add(-ago)
	if b, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestArcClientLimits(t *testing.T) {
	srv, url := localGames(t)
	ws := t.TempDir()
	if _, errOut, code := arc(t, "client", "start", "--workspace", ws, "--url", url, games.Trek.ID); code != 0 {
		t.Fatalf("start: exit %d, %s", code, errOut)
	}
	t.Run("RESET before the first action is refused with baseline1's message and the --force hint, --force sends it", func(t *testing.T) {
		before := srv.Stats().Requests
		_, errOut, code := arc(t, "client", "move", "--workspace", ws, "RESET")
		want := "evident: arc client move: RESET is not allowed before taking any action in the current attempt. " +
			"On the official server it would reset the whole game to level 1; add --force to send it anyway.\n"
		if code != 1 || errOut != want || srv.Stats().Requests != before {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		out, errOut, code := arc(t, "client", "move", "--workspace", ws, "--force", "RESET")
		if code != 0 || !strings.HasPrefix(out, "step: 1\nstate: NOT_FINISHED\nlevel: 1 / 3 (completed: 0)\naction: RESET\n") ||
			!strings.Contains(out, "level_01_attempt_02\nfiles:\n  initial_metadata.json\n") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
	})
	t.Run("status more than 10 min after the last command warns on stderr", func(t *testing.T) {
		setLastCommand(t, ws, 12*time.Minute)
		out, errOut, code := arc(t, "client", "status", "--workspace", ws)
		if code != 0 || !strings.HasPrefix(out, "Last step information:\nstep: 1\n") ||
			!strings.HasPrefix(errOut, "warning: no command for 12m0s: the server closes scorecard ") || !strings.HasSuffix(errOut, " left)\n") {
			t.Fatalf("exit %d\n%s\nstderr %q", code, out, errOut)
		}
	})
	t.Run("a move after the idle limit exits 3 with the gap in plain words and sends nothing", func(t *testing.T) {
		setLastCommand(t, ws, 20*time.Minute)
		before := srv.Stats().Requests
		_, errOut, code := arc(t, "client", "move", "--workspace", ws, "ACTION1")
		if exitScorecardExpired != 3 || code != exitScorecardExpired || srv.Stats().Requests != before ||
			!strings.HasPrefix(errOut, "evident: arc client move: the scorecard ") ||
			!strings.Contains(errOut, " has expired: no command for 20m0s (the last command was at ") ||
			!strings.HasSuffix(errOut, "; start a new game here with: evident arc client start GAME_ID (this session is then moved to client/session.expired-N/)\n") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("start after the expiry keeps the old session aside and starts anew", func(t *testing.T) {
		out, errOut, code := arc(t, "client", "start", "--workspace", ws, "--url", url, "trek")
		aside := filepath.Join(ws, "client", "session.expired-1")
		if code != 0 || !strings.HasPrefix(out, "step: 0\n") || !strings.Contains(errOut, "its session is kept in "+aside+"\n") {
			t.Fatalf("exit %d\n%s\nstderr %q", code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(aside, "level_01_attempt_02", session.InitialMetadataFile)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("stop answered 404 (an expired scorecard) is a warning, exit 0", func(t *testing.T) {
		ws := t.TempDir()
		// The local server, except that closing answers as the official
		// one does for an expired scorecard.
		srv := games.NewServer(games.Config{})
		h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == api.PathScorecardClose {
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"error":"SERVER_ERROR","message":"scorecard c not found"}`))
				return
			}
			srv.ServeHTTP(w, r)
		}))
		t.Cleanup(h.Close)
		if _, errOut, code := arc(t, "client", "start", "--workspace", ws, "--url", h.URL, games.Trek.ID); code != 0 {
			t.Fatalf("start: %s", errOut)
		}
		out, errOut, code := arc(t, "client", "stop", "--workspace", ws)
		if code != 0 || out != "" || !strings.HasPrefix(errOut, "warning: the server has no scorecard ") {
			t.Fatalf("exit %d\n%s\nstderr %q", code, out, errOut)
		}
	})
	t.Run("a 400 saying the game is over in other words gets the RESET hint", func(t *testing.T) {
		ws := t.TempDir()
		srv := games.NewServer(games.Config{})
		h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == api.PathCmd+"ACTION1" {
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"error":"The game is over."}`))
				return
			}
			srv.ServeHTTP(w, r)
		}))
		t.Cleanup(h.Close)
		if _, errOut, code := arc(t, "client", "start", "--workspace", ws, "--url", h.URL, games.Trek.ID); code != 0 {
			t.Fatalf("start: %s", errOut)
		}
		_, errOut, code := arc(t, "client", "move", "--workspace", ws, "ACTION1")
		if code != 1 || !strings.Contains(errOut, "400 The game is over.") || !strings.HasSuffix(errOut, "; Send RESET: evident arc client move RESET\n") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}
