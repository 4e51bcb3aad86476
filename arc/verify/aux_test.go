package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/internal/dotgame"
	"evident/arc/session"
)

// auxPlanner is a Starlark auxiliary planner of the dot game: with a goal
// cell it searches for it, without one it plays to level completion.
const auxPlanner = `MOVES = [{"name": "ACTION1"}, {"name": "ACTION2"}, {"name": "ACTION3"}, {"name": "ACTION4"}]

def planner(state, goal = None):
    if goal == None:
        return bfs(state, MOVES, key = lambda s: (s["x"], s["y"], s["color"]))
    return bfs(state, MOVES, is_goal = lambda s, status: status == RUNNING and s["x"] == goal["x"] and s["y"] == goal["y"])
`

func runAux(t *testing.T, ws, module string, src Source, goal string, prefix string) (*AuxResult, string, error) {
	t.Helper()
	var out bytes.Buffer
	var g []byte
	if goal != "" {
		g = []byte(goal)
	}
	res, err := RunAuxPlanner(context.Background(), loadModel(t, ws), module, src, g, Options{Workspace: ws, Out: &out, Prefix: prefix})
	return res, sub(out.String(), ws), err
}

// TestRunAuxPlanner: baseline1 run_aux_planner.py's report and
// aux_planner_frames/N/, from the current state of the fixture (level 2
// attempt 1 after left, ACTION5, up: the dot, colour 12, at (39, 39)).
func TestRunAuxPlanner(t *testing.T) {
	ws := workspace(t, fixtureScript, map[string]string{"level_2_planner_1.star": auxPlanner})
	cur := Source{From: FromCurrent}

	t.Run("a goal two moves right: three frames, no completion line", func(t *testing.T) {
		res, out, err := runAux(t, ws, "level_2_planner_1.star", cur, `{"x": 41, "y": 39}`, "run_aux_planner.py")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkReport(t, out, sub("run_aux_planner.py: plan from current state using level_2_planner_1\n"+
			"run_aux_planner.py: simulated frames for the plan were written to $WS/aux_planner_frames/1\n"+
			"run_aux_planner.py: written files\n"+
			"step_0000_initial.txt\nstep_0000_initial.png\nstep_0001.txt\nstep_0001.png\nstep_0002.txt\nstep_0002.png\n"+
			"\nACTIONS:\nACTION4\nACTION4\n", ws))
		if res.Status != session.Running || res.Dir != filepath.Join(ws, AuxFramesDir, "1") || len(res.Files) != 6 {
			t.Fatalf("result %+v", res)
		}
		// Frame 2: level 2's background with the dot, colour 12, at (41, 39).
		want := dotgame.Background(2)
		want.Set(41, 39, dotgame.DotAlt)
		got, err := os.ReadFile(filepath.Join(res.Dir, "step_0002.txt"))
		if err != nil || string(got) != want.String() {
			t.Fatalf("step_0002.txt (%v):\n%s\nwant:\n%s", err, got, want.String())
		}
		start := dotgame.Background(2)
		start.Set(39, 39, dotgame.DotAlt)
		if got, _ := os.ReadFile(filepath.Join(res.Dir, "step_0000_initial.txt")); string(got) != start.String() {
			t.Fatalf("step_0000_initial.txt:\n%s", got)
		}
	})

	t.Run("no goal: completion line, the completing step has no frame, next folder", func(t *testing.T) {
		res, out, err := runAux(t, ws, "level_2_planner_1", cur, "", "")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		n := len(res.Plan)
		head := sub("plan from current state using level_2_planner_1\nsimulated plan reached level completion\n"+
			"simulated frames for the plan were written to $WS/aux_planner_frames/2\nwritten files\nstep_0000_initial.txt\n", ws)
		last := fmt.Sprintf("step_%04d.png\n\nACTIONS:\n", n-1)
		if res.Status != session.LevelCompleted || len(res.Files) != 2*n || !strings.HasPrefix(out, head) || !strings.Contains(out, last) ||
			strings.Contains(out, fmt.Sprintf("step_%04d.txt", n)) {
			t.Fatalf("plan of %d, result %+v, report:\n%s", n, res, out)
		}
	})

	t.Run("None: baseline1's line, a Failure", func(t *testing.T) {
		// (36, 30) is a wall cell of level 2: no plan reaches it.
		_, out, err := runAux(t, ws, "level_2_planner_1", cur, `{"x": 36, "y": 30}`, "run_aux_planner.py")
		if failureKind(err) != NoPlan || out != "run_aux_planner.py: no plan found from current state using level_2_planner_1\n" {
			t.Fatalf("err = %v, report %q", err, out)
		}
	})

	t.Run("a missing module", func(t *testing.T) {
		_, out, err := runAux(t, ws, "level_2_planner_7", Source{From: FromInitial, Level: 1}, "", "")
		if failureKind(err) != ModelFailure || !strings.HasPrefix(out, sub("aux planner level_2_planner_7 from initial state of level 1: level_2_planner_7.star: world model has no planner: level_2_planner_7.star not found in $WS", ws)) {
			t.Fatalf("err = %v, report %q", err, out)
		}
	})

	t.Run("a module without planner", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(ws, "level_2_planner_3.star"), []byte("X = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, out, err := runAux(t, ws, "level_2_planner_3", cur, "", "")
		if failureKind(err) != ModelFailure || out != "aux planner level_2_planner_3 from current state: level_2_planner_3.star: world model contract violated: level_2_planner_3 does not define planner(state).\n" {
			t.Fatalf("err = %v, report %q", err, out)
		}
	})

	t.Run("not JSON", func(t *testing.T) {
		if _, _, err := runAux(t, ws, "level_2_planner_1", cur, `{x:`, ""); err == nil || errors.As(err, new(*Failure)) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestPrefix: with Options.Prefix the headline lines carry baseline1's
// script name, the detail lines do not (verify_world_model.py,
// verify_main_planner.py, run_main_planner.py).
func TestPrefix(t *testing.T) {
	ws := workspace(t, fixtureScript, nil)
	var out bytes.Buffer
	if err := Verify(context.Background(), loadModel(t, ws), Options{Workspace: ws, Out: &out, Prefix: "verify_world_model.py"}); err != nil {
		t.Fatal(err)
	}
	checkReport(t, out.String(), "verify_world_model.py: level 1 verified\nverify_world_model.py: level 2 verified\nverify_world_model.py: levels 1..2 verification passed\n")

	out.Reset()
	if err := VerifyPlanner(context.Background(), loadModel(t, ws), Options{Workspace: ws, Out: &out, Prefix: "verify_main_planner.py"}); err != nil {
		t.Fatal(err)
	}
	checkReport(t, out.String(), "verify_main_planner.py: level 1 verified\nverify_main_planner.py: No completed level-2 attempt found, we skip this level\nverify_main_planner.py: levels 1..1 planner verification passed\n")

	out.Reset()
	plan, err := RunPlanner(context.Background(), loadModel(t, ws), Source{From: FromAttempt, Level: 1, Attempt: 2, Step: 29}, Options{Workspace: ws, Out: &out, Prefix: "run_main_planner.py"})
	if err != nil {
		t.Fatal(err)
	}
	// One move is left of attempt 2's 30-move path: its last, down.
	checkReport(t, out.String(), "run_main_planner.py: plan from level 1 attempt 2 step 29\nACTION2\n")
	if len(plan) != 1 {
		t.Errorf("plan %v", plan)
	}

	// A mismatch: the headline is prefixed, the detail lines are not.
	ws = workspace(t, fixtureScript, map[string]string{worldmodel_engine: strings.Replace(string(dotgame.Model(worldmodel_engine)), `s["color"] = 12 if state["color"] == 9 else 9`, `s["color"] = 9`, 1)})
	out.Reset()
	err = Verify(context.Background(), loadModel(t, ws), Options{Workspace: ws, Out: &out, Prefix: "verify_world_model.py"})
	if failureKind(err) != FrameMismatch || !strings.HasPrefix(out.String(), "verify_world_model.py: verification failed for level 1\nModel level 2, replay level 1, attempt 1, replay, step 3: rendered frame mismatch.\nreal ascii: ") {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
}

const worldmodel_engine = "world_model_engine.star"
