package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"evident/arc/internal/dotgame"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// fixtureScript is the recorded game of the fixture workspace:
//   - level 1 attempt 1: moves, ACTION5 (two frames), ACTION6, ACTION5,
//     then onto lava at step 8: GAME_OVER;
//   - level 1 attempt 2: the 30-move shortest path; step 30 completes the
//     level (two frames);
//   - level 2 attempt 1: left, ACTION5, up; still running (the current
//     attempt).
var fixtureScript = "RESET 4 4 5 6:15,47 5 1 6:10,33 2 " +
	"RESET 1 1 1 1 1 " + strings.Repeat("4 ", 20) + "2 2 2 2 2 " +
	"3 5 1"

// workspace returns a temporary workspace holding the reference model (with
// the files in override replaced) and the session of script.
func workspace(t testing.TB, script string, override map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	if err := dotgame.WriteModel(ws); err != nil {
		t.Fatal(err)
	}
	for name, body := range override {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := dotgame.Play(filepath.Join(ws, session.Dir), dotgame.Actions(script)); err != nil {
		t.Fatal(err)
	}
	return ws
}

func loadModel(t testing.TB, ws string, opts ...func(*worldmodel.StarlarkOptions)) worldmodel.Model {
	t.Helper()
	o := worldmodel.StarlarkOptions{Dir: ws}
	for _, f := range opts {
		f(&o)
	}
	m, err := worldmodel.LoadStarlark(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// runVerify verifies ws and returns the report and the error.
func runVerify(t testing.TB, ws string, limit time.Duration, opts ...func(*worldmodel.StarlarkOptions)) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Verify(context.Background(), loadModel(t, ws, opts...), Options{Workspace: ws, Out: &out, TimeLimit: limit})
	return out.String(), err
}

// sub replaces "$WS" with ws.
func sub(s, ws string) string { return strings.ReplaceAll(s, "$WS", ws) }

func checkReport(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}
