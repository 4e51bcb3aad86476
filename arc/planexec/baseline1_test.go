package planexec_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/planexec"
	"evident/arc/replay"
	"evident/arc/session"
)

// runBaseline1 executes plan with baseline1's lines and a stub summary
// ("summary K" after step K).
func (g *game) runBaseline1(plan []session.Action) (*planexec.Result, string, error) {
	g.t.Helper()
	return g.runWith(plan, planexec.Options{Baseline1: true,
		StepSummary: func(w io.Writer, r *client.Result) error {
			_, err := fmt.Fprintf(w, "summary %d\n", r.Recorded.Step)
			return err
		}})
}

// Lines of baseline1's plan_executor.py (secure_baseline1
// workspace_init/plan_executor.py), without the script prefix.
func TestRunBaseline1(t *testing.T) {
	t.Run("a correctly predicted GAME_OVER stops with baseline1's line; its client summary comes first", func(t *testing.T) {
		g := startGame(t, games.Trek)
		res, out, err := g.runBaseline1(repeat("ACTION3", 26))
		if err != nil || res.Sent != 24 || res.Final != session.GameOver ||
			!strings.HasSuffix(out, "running ACTION3\nsummary 24\nstopped on GAME_OVER\n") || strings.Count(out, "running ACTION3\n") != 24 {
			t.Fatalf("err %v, sent %d\n%s", err, res.Sent, out)
		}
	})
	t.Run("a status mismatch is baseline1's one line, no period", func(t *testing.T) {
		g := startGame(t, games.Trek)
		g.patch("world_model_engine.star", `if s["budget"] <= 0:`, `if s["budget"] < 0:`)
		_, out, err := g.runBaseline1(repeat("ACTION3", 26))
		f := failure(t, err, replay.StatusMismatch)
		want := "running ACTION3\nsummary 24\nstatus mismatch after ACTION3: predicted RUNNING, observed GAME_OVER\n"
		if !strings.HasSuffix(out, want) || f.Error() != "status mismatch after ACTION3: predicted RUNNING, observed GAME_OVER" {
			t.Fatalf("error %q\n%s", f.Error(), out)
		}
	})
	t.Run("a frame mismatch prints the block after 'frame mismatch detected' and fails with 'mismatch after action'", func(t *testing.T) {
		g := startGame(t, games.Trek)
		g.patch("world_model_engine.star", `s["budget"] = state["budget"] - 1`, `s["budget"] = state["budget"] - 2`)
		res, out, err := g.runBaseline1(repeat("ACTION3", 2))
		f := failure(t, err, replay.FrameMismatch)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if res.Sent != 1 || f.Error() != "mismatch after action" || len(lines) != 9 ||
			strings.Join(lines[:3], "|") != "running ACTION3|summary 1|frame mismatch detected" ||
			!strings.HasPrefix(lines[3], "real ascii: ") || !strings.HasPrefix(lines[8], "mismatch as magneta png: ") {
			t.Fatalf("sent %d, error %q\n%s", res.Sent, f.Error(), out)
		}
	})
	t.Run("ACTION6 is printed as compact JSON", func(t *testing.T) {
		g := startGame(t, games.Lights)
		_, out, err := g.runBaseline1([]session.Action{{Name: "ACTION6", X: 0, Y: 0}})
		if want := "running {\"name\":\"ACTION6\",\"x\":0,\"y\":0}\nsummary 1\nsequence executed without mismatch\n"; err != nil || out != want {
			t.Fatalf("err %v\n%s\nwant:\n%s", err, out, want)
		}
	})
}
