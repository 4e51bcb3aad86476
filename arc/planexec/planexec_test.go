package planexec_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/planexec"
	"evident/arc/replay"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// game is one started game with its reference model in the workspace.
type game struct {
	t   *testing.T
	srv *games.Server
	c   *client.Client
	ws  string
}

func startGame(t *testing.T, g *games.Game) *game {
	t.Helper()
	srv := games.NewServer(games.Config{})
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	ws := t.TempDir()
	c, _ := client.New(client.Options{Workspace: ws})
	if _, err := c.Start(context.Background(), h.URL, g.ID, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := games.WriteModel(g.ID, ws); err != nil {
		t.Fatal(err)
	}
	return &game{t: t, srv: srv, c: c, ws: ws}
}

// patch replaces old by new in one model file (which must contain old).
func (g *game) patch(file, old, new string) {
	g.t.Helper()
	p := filepath.Join(g.ws, file)
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), old) {
		g.t.Fatalf("%s does not contain %q", file, old)
	}
	os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}

// run executes plan with the workspace's model and returns the report.
func (g *game) run(plan []session.Action) (*planexec.Result, string, error) {
	return g.runWith(plan, planexec.Options{})
}

// runWith executes plan with opts (Out set to a buffer) and returns the
// report.
func (g *game) runWith(plan []session.Action, opts planexec.Options) (*planexec.Result, string, error) {
	g.t.Helper()
	m, err := worldmodel.LoadStarlark(context.Background(), worldmodel.StarlarkOptions{Dir: g.ws})
	if err != nil {
		g.t.Fatal(err)
	}
	var out bytes.Buffer
	opts.Out = &out
	res, err := planexec.Run(context.Background(), m, g.c, plan, opts)
	return res, out.String(), err
}

func repeat(name string, n int) []session.Action {
	var out []session.Action
	for i := 0; i < n; i++ {
		out = append(out, session.Action{Name: name})
	}
	return out
}

func failure(t *testing.T, err error, kind replay.Kind) *replay.Failure {
	t.Helper()
	var f *replay.Failure
	if !errors.As(err, &f) || f.Kind != kind {
		t.Fatalf("err %v, want a failure of kind %d", err, kind)
	}
	return f
}

func TestRun(t *testing.T) {
	t.Run("a correct plan runs to the level's end and leaves the rest unsent", func(t *testing.T) {
		g := startGame(t, games.Trek)
		sol := games.Trek.Solution(0, 1)
		res, out, err := g.run(append(sol, repeat("ACTION1", 2)...))
		if err != nil || res.Sent != len(sol) || res.Final != session.LevelCompleted || g.srv.Stats().Actions != len(sol) {
			t.Fatalf("err %v, result %+v, server actions %d\n%s", err, res, g.srv.Stats().Actions, out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(sol)+2 || lines[0] != "running "+sol[0].String() ||
			lines[len(sol)] != "level 1 completed after ACTION4; 2 remaining actions not sent" ||
			lines[len(sol)+1] != "sequence executed without mismatch" {
			t.Fatalf("report:\n%s", out)
		}
	})
	t.Run("the plan halts at the first frame mismatch, having sent only predicted actions", func(t *testing.T) {
		g := startGame(t, games.Trek)
		g.patch("world_model_state_io.star", `min(max(state["budget"], 0), BAR_MAX)`, `min(max(state["budget"] - (1 if state["budget"] <= 21 else 0), 0), BAR_MAX)`)
		res, out, err := g.run(repeat("ACTION1", 6))
		f := failure(t, err, replay.FrameMismatch)
		if res.Sent != 3 || g.srv.Stats().Actions != 3 {
			t.Fatalf("sent %d, server actions %d", res.Sent, g.srv.Stats().Actions)
		}
		att := filepath.Join(g.ws, session.Dir, "level_01_attempt_01")
		mm := filepath.Join(g.ws, planexec.MismatchDir, "1")
		want := strings.Join([]string{
			"running ACTION1", "running ACTION1", "running ACTION1",
			"frame mismatch after ACTION1 (level 1, attempt 1, step 3): rendered frame mismatch.",
			"real ascii: " + filepath.Join(att, "step_0003_final.txt"),
			"real png: " + filepath.Join(att, "step_0003_final.png"),
			"simulated ascii: " + filepath.Join(mm, "simulated_frame.txt") + " (predicted frame as text)",
			"simulated png: " + filepath.Join(mm, "simulated_frame.png") + " (predicted frame rendered)",
			"mismatch region png: " + filepath.Join(mm, "mismatch_region.png") + " (localized mismatch neighborhoods)",
			"mismatch as magneta png: " + filepath.Join(mm, "mismatch_as_magneta.png") + " (full frame with magenta mismatch pixels)",
		}, "\n") + "\n"
		if out != want {
			t.Fatalf("report:\n%s\nwant:\n%s", out, want)
		}
		for _, p := range []string{f.Artifacts.SimulatedASCII, f.Artifacts.SimulatedPNG, f.Artifacts.Region, f.Artifacts.Magneta} {
			if _, err := os.Stat(p); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("an action the model cannot predict is never sent", func(t *testing.T) {
		g := startGame(t, games.Trek)
		g.patch("world_model_engine.star", "    d = MOVES.get(action[\"name\"])\n", "    if action[\"name\"] == \"ACTION2\":\n        fail(\"no idea\")\n    d = MOVES.get(action[\"name\"])\n")
		res, out, err := g.run([]session.Action{{Name: "ACTION1"}, {Name: "ACTION2"}, {Name: "ACTION1"}})
		failure(t, err, replay.ModelFailure)
		if res.Sent != 1 || g.srv.Stats().Actions != 1 || !strings.Contains(out, "running ACTION1\npredicting ACTION2 (level 1, attempt 1, step 2): world_model_engine: ") ||
			!strings.Contains(out, "no idea") {
			t.Fatalf("sent %d, server actions %d\n%s", res.Sent, g.srv.Stats().Actions, out)
		}
	})
	t.Run("RESET anywhere in the plan is refused before anything is sent", func(t *testing.T) {
		g := startGame(t, games.Trek)
		before := g.srv.Stats()
		res, out, err := g.run([]session.Action{{Name: "ACTION1"}, {Name: "RESET"}})
		failure(t, err, replay.Refused)
		if res.Sent != 0 || g.srv.Stats() != before || !strings.HasPrefix(out, "RESET refused (action 2 of the plan)") {
			t.Fatalf("sent %d\n%s", res.Sent, out)
		}
	})
	t.Run("a status mismatch stops with the real frame and no artifacts", func(t *testing.T) {
		g := startGame(t, games.Trek)
		g.patch("world_model_engine.star", `if s["budget"] <= 0:`, `if s["budget"] < 0:`)
		res, out, err := g.run(repeat("ACTION3", 26))
		failure(t, err, replay.StatusMismatch)
		att := filepath.Join(g.ws, session.Dir, "level_01_attempt_01")
		if res.Sent != 24 || g.srv.Stats().Actions != 24 || !strings.HasSuffix(out,
			"status mismatch after ACTION3 (level 1, attempt 1, step 24): predicted RUNNING, observed GAME_OVER.\nreal ascii: "+filepath.Join(att, "step_0024_final.txt")+"\n") {
			t.Fatalf("sent %d\n%s", res.Sent, out)
		}
		if _, err := os.Stat(filepath.Join(g.ws, planexec.MismatchDir)); err == nil {
			t.Error("artifacts written for a status mismatch")
		}
	})
	t.Run("a correctly predicted GAME_OVER ends the run cleanly; then nothing more is sent", func(t *testing.T) {
		g := startGame(t, games.Trek)
		res, out, err := g.run(repeat("ACTION3", 26))
		if err != nil || res.Sent != 24 || res.Final != session.GameOver ||
			!strings.HasSuffix(out, "GAME_OVER after ACTION3, as predicted; 2 remaining actions not sent\nsequence executed without mismatch\n") {
			t.Fatalf("err %v, sent %d\n%s", err, res.Sent, out)
		}
		before := g.srv.Stats()
		_, out, err = g.run(repeat("ACTION1", 1))
		failure(t, err, replay.NotPlayable)
		if g.srv.Stats() != before || !strings.Contains(out, "GAME_OVER") {
			t.Fatalf("%s", out)
		}
	})
	t.Run("a rebuilt state that does not match the recording sends nothing", func(t *testing.T) {
		g := startGame(t, games.Trek)
		g.c.Move(context.Background(), session.Action{Name: "ACTION1"}, nil)
		g.c.Move(context.Background(), session.Action{Name: "ACTION1"}, nil)
		g.patch("world_model_engine.star", `s["budget"] = state["budget"] - 1`, `s["budget"] = state["budget"] - 2`)
		before := g.srv.Stats()
		res, out, err := g.run(repeat("ACTION1", 1))
		f := failure(t, err, replay.ReplayMismatch)
		if res.Sent != 0 || g.srv.Stats() != before || f.Artifacts == nil ||
			!strings.HasPrefix(out, "rebuilding the current state: level 1, attempt 1, step 2: rendered frame mismatch. Nothing was sent; run the verifier.\n") {
			t.Fatalf("sent %d\n%s", res.Sent, out)
		}
	})
	t.Run("a frame mismatch lists the step's intermediate frames", func(t *testing.T) {
		g := startGame(t, games.Vista)
		g.patch("world_model_engine.star", "    s = dict(state)\n", "    if status == RUNNING and (x - state[\"x\"]) * (x - state[\"x\"]) + (y - state[\"y\"]) * (y - state[\"y\"]) >= 4:\n        x, y = x - d[0], y - d[1]\n    s = dict(state)\n")
		first := games.Vista.Solution(0, 1)[0]
		res, out, err := g.run([]session.Action{first})
		failure(t, err, replay.FrameMismatch)
		att, _ := session.ReadAttempt(filepath.Join(g.ws, session.Dir, "level_01_attempt_01"))
		st := att.Steps[0]
		if res.Sent != 1 || len(st.IntermediatePaths) == 0 {
			t.Fatalf("sent %d, %d intermediates", res.Sent, len(st.IntermediatePaths))
		}
		want := "intermediate frames (" + strconv.Itoa(len(st.IntermediatePaths)) + ", earlier frames of the step's animated response):\n" + strings.Join(st.IntermediatePaths, "\n") + "\n"
		if !strings.HasSuffix(out, want) {
			t.Fatalf("report:\n%s\nwant suffix:\n%s", out, want)
		}
	})
	t.Run("a game that was never started is not playable", func(t *testing.T) {
		ws := t.TempDir()
		games.WriteModel(games.Trek.ID, ws)
		c, _ := client.New(client.Options{Workspace: ws})
		m, _ := worldmodel.LoadStarlark(context.Background(), worldmodel.StarlarkOptions{Dir: ws})
		_, err := planexec.Run(context.Background(), m, c, repeat("ACTION1", 1), planexec.Options{})
		failure(t, err, replay.NotPlayable)
		if _, err := planexec.Run(context.Background(), m, c, nil, planexec.Options{}); err == nil {
			t.Error("an empty plan ran")
		}
	})
}
