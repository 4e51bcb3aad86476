package verify

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"evident/arc/internal/dotgame"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

func runPlanner(t *testing.T, ws string, src Source, limit time.Duration) ([]session.Action, string, error) {
	t.Helper()
	var out bytes.Buffer
	plan, err := RunPlanner(context.Background(), loadModel(t, ws), src, Options{Workspace: ws, Out: &out, TimeLimit: limit})
	return plan, out.String(), err
}

func runVerifyPlanner(t *testing.T, ws string, limit time.Duration) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := VerifyPlanner(context.Background(), loadModel(t, ws), Options{Workspace: ws, Out: &out, TimeLimit: limit})
	return out.String(), err
}

func failureKind(err error) Kind {
	var f *Failure
	if errors.As(err, &f) {
		return f.Kind
	}
	return 0
}

const plannerFile = worldmodel.PlannerFile

func TestVerifyPlanner(t *testing.T) {
	ws := workspace(t, fixtureScript, nil)
	out, err := runVerifyPlanner(t, ws, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, out, "level 1 verified\nNo completed level-2 attempt found, we skip this level\nlevels 1..1 planner verification passed\n")

	t.Run("won game", func(t *testing.T) {
		script := "RESET 1 1 1 1 1 " + strings.Repeat("4 ", 20) + "2 2 2 2 2 " + strings.Repeat("3 ", 5) + strings.Repeat("1 ", 20) + strings.Repeat("4 ", 5)
		ws := workspace(t, script, nil)
		out, err := runVerifyPlanner(t, ws, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, out, "level 1 verified\nlevel 2 verified\nlevels 1..2 planner verification passed\n")
	})

	t.Run("nothing completed", func(t *testing.T) {
		ws := workspace(t, "RESET 4", nil)
		out, err := runVerifyPlanner(t, ws, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, out, "No completed level-1 attempt found, we skip this level\nno completed levels to verify\n")
	})

	for _, c := range []struct {
		name, body, want string
		kind             Kind
	}{
		{"no plan", "def planner(state):\n    return None\n",
			"verification failed for level 1\nMain planner did not find a plan from the level-1 initial state.\n", NoPlan},
		{"empty plan", "def planner(state):\n    return []\n",
			"verification failed for level 1\nMain planner did not find a plan from the level-1 initial state.\n", NoPlan},
		{"incomplete", "def planner(state):\n    return [\"ACTION1\"]\n",
			"verification failed for level 1\nMain planner plan from the level-1 initial state did not reach completion.\n", PlanIncomplete},
		{"into lava", "def planner(state):\n    return [\"ACTION2\", \"ACTION2\", \"ACTION2\"]\n",
			"verification failed for level 1\nMain planner plan from the level-1 initial state did not reach completion.\n", PlanIncomplete},
		{"planner error", "def planner(state):\n    return 1 // 0\n",
			"level 1 initial state: planner: floored division by zero\nTraceback (most recent call last):\n  world_model_main_planner.star:2:14: in planner\nError: floored division by zero\n", ModelFailure},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace(t, fixtureScript, map[string]string{plannerFile: c.body})
			out, err := runVerifyPlanner(t, ws, 0)
			checkReport(t, out, c.want)
			if k := failureKind(err); k != c.kind {
				t.Errorf("kind %d, want %d (err %v)", k, c.kind, err)
			}
		})
	}

	t.Run("too slow", func(t *testing.T) {
		ws := workspace(t, fixtureScript, map[string]string{plannerFile: "def planner(state):\n    while True:\n        pass\n"})
		out, err := runVerifyPlanner(t, ws, 100*time.Millisecond)
		checkReport(t, out, "Planner too slow, please consider using a faster planner.\n")
		if failureKind(err) != TooSlow {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestRunPlanner(t *testing.T) {
	ws := workspace(t, fixtureScript, nil)

	t.Run("from current", func(t *testing.T) {
		// The current attempt is level 2 attempt 1 after "3 5 1": the dot is
		// at (39, 39), four moves left of the wall's end, colour 12.
		plan, out, err := runPlanner(t, ws, Source{From: FromCurrent}, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[0] != "plan from current state" || len(lines) != len(plan)+1 || len(plan) != 4+19+5 {
			t.Fatalf("report:\n%s", out)
		}
		for i, a := range plan {
			if lines[i+1] != a.Name {
				t.Fatalf("line %d %q, action %v", i+2, lines[i+1], a)
			}
		}
	})

	t.Run("from initial", func(t *testing.T) {
		plan, out, err := runPlanner(t, ws, Source{From: FromInitial, Level: 1}, 0)
		if err != nil || len(plan) != dotgame.ShortestPath(1) || !strings.HasPrefix(out, "plan from initial state of level 1\nACTION") {
			t.Fatalf("plan %d, err %v, report:\n%s", len(plan), err, out)
		}
		_, out, err = runPlanner(t, ws, Source{From: FromInitial, Level: 3}, 0)
		checkReport(t, out, "No level-3 attempts found in the latest session.\n")
		if failureKind(err) != BadSource {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("from attempt", func(t *testing.T) {
		plan, out, err := runPlanner(t, ws, Source{From: FromAttempt, Level: 1, Attempt: 1, Step: 2}, 0)
		if err != nil || len(plan) != dotgame.ShortestPath(1)-2 || !strings.HasPrefix(out, "plan from level 1 attempt 1 step 2\n") {
			t.Fatalf("plan %d, err %v, report:\n%s", len(plan), err, out)
		}
		for _, c := range []struct {
			src  Source
			want string
		}{
			{Source{From: FromAttempt, Level: 1, Attempt: 1, Step: 8}, "cannot plan from level 1 attempt 1 step 8: the world model's status after step 8 of level 1 attempt 1 is GAME_OVER.\n"},
			{Source{From: FromAttempt, Level: 1, Attempt: 1, Step: 9}, "level 1 attempt 1 has 8 steps; step 9 does not exist.\n"},
			{Source{From: FromAttempt, Level: 1, Attempt: 3, Step: 0}, "No level-1 attempt-3 found in the latest session.\n"},
		} {
			_, out, err := runPlanner(t, ws, c.src, 0)
			checkReport(t, out, c.want)
			if failureKind(err) != BadSource {
				t.Errorf("%v: err = %v", c.src, err)
			}
		}
	})

	t.Run("ACTION6 in a plan", func(t *testing.T) {
		ws := workspace(t, fixtureScript, map[string]string{plannerFile: "def planner(state):\n    return [{\"name\": \"ACTION6\", \"x\": 35, \"y\": 21}, \"ACTION4\", \"ACTION4\", \"ACTION4\", \"ACTION4\", \"ACTION4\", \"ACTION1\"]\n"})
		_, out, err := runPlanner(t, ws, Source{From: FromCurrent}, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, out, "plan from current state\n{\"name\":\"ACTION6\",\"x\":35,\"y\":21}\nACTION4\nACTION4\nACTION4\nACTION4\nACTION4\nACTION1\n")
	})

	for _, c := range []struct {
		name, body, want string
		kind             Kind
	}{
		{"no plan", "def planner(state):\n    return None\n", "no plan found from current state\n", NoPlan},
		{"incomplete", "def planner(state):\n    return [\"ACTION3\"]\n", "planner returned a plan from current state, but world model execution ended with RUNNING.\n", PlanIncomplete},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := workspace(t, fixtureScript, map[string]string{plannerFile: c.body})
			_, out, err := runPlanner(t, ws, Source{From: FromCurrent}, 0)
			checkReport(t, out, c.want)
			if k := failureKind(err); k != c.kind {
				t.Errorf("kind %d, want %d (err %v)", k, c.kind, err)
			}
		})
	}

	t.Run("too slow", func(t *testing.T) {
		ws := workspace(t, fixtureScript, map[string]string{plannerFile: "def planner(state):\n    while True:\n        pass\n"})
		_, out, err := runPlanner(t, ws, Source{From: FromCurrent}, 100*time.Millisecond)
		checkReport(t, out, "Planner too slow, please consider using a faster planner.\n")
		if failureKind(err) != TooSlow {
			t.Fatalf("err = %v", err)
		}
	})
}
