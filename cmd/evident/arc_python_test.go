package main

import (
	"evident/arc/worldmodel"
	"evident/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pythonWorkspace is the dot-game fixture with the Python model
// (arc/worldmodel/testdata/pydot and pyaux) instead of the Starlark one.
func pythonWorkspace(t *testing.T) string {
	t.Helper()
	ws := fixture(t)
	for _, dir := range []string{"pydot", "pyaux"} {
		copyFiles(t, filepath.Join("..", "..", "arc", "worldmodel", "testdata", dir), ws)
	}
	for _, rm := range []string{"world_model_engine.star", "world_model_state_io.star", "world_model_main_planner.star"} {
		os.Remove(filepath.Join(ws, rm))
	}
	return ws
}

// TestArcPythonModel: a workspace with world_model_engine.py and no .star
// model runs the Python adapter with the first python3 on PATH that imports
// numpy — past a shim without numpy, which stderr names — and the
// launchers' --script-prefix gives baseline1's lines; the auxiliary planner
// prints run_aux_planner.py's report (checked against baseline1's own
// script on this fixture: same lines, same frames).
func TestArcPythonModel(t *testing.T) {
	real, err := exec.LookPath(strings.Fields(pythonCmd(t))[0])
	if err != nil {
		t.Fatal(err)
	}
	if exec.Command(real, "-c", "import scipy.ndimage, networkx").Run() != nil {
		testenv.Missing(t, "%s lacks scipy or networkx (Debian: apt-get install -y python3-scipy python3-networkx)", real)
	}
	shimDir, goodDir := t.TempDir(), t.TempDir()
	shim, good := filepath.Join(shimDir, "python3"), filepath.Join(goodDir, "python3")
	if err := os.WriteFile(shim, []byte("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'numpy'\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, good); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", strings.Join([]string{shimDir, goodDir, filepath.Dir(sh)}, string(os.PathListSeparator)))
	ws := pythonWorkspace(t)

	// stderr: the interpreter chosen, then the sandbox's notice where
	// bubblewrap is missing (worldmodel.GuardRailNotice; "" where it works).
	out, errOut, code := arc(t, "verify", "--workspace", ws, "--script-prefix", "verify_world_model.py")
	chosen, noticed := strings.CutSuffix(errOut, worldmodel.GuardRailNotice())
	if code != 0 || out != "verify_world_model.py: level 1 verified\nverify_world_model.py: level 2 verified\nverify_world_model.py: levels 1..2 verification passed\n" ||
		!noticed || !strings.HasPrefix(chosen, "python: "+good+" (python 3.") || !strings.HasSuffix(chosen, "; skipped "+shim+" (cannot import numpy)\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, errOut, code = arc(t, "planner", "aux", "--workspace", ws, "--script-prefix", "run_aux_planner.py", "level_2_planner_1.py", "--from-current", "--goal", `{"x": 41, "y": 39}`)
	want := "run_aux_planner.py: plan from current state using level_2_planner_1\n" +
		"run_aux_planner.py: simulated frames for the plan were written to " + filepath.Join(ws, "aux_planner_frames", "1") + "\n" +
		"run_aux_planner.py: written files\nstep_0000_initial.txt\nstep_0000_initial.png\nstep_0001.txt\nstep_0001.png\nstep_0002.txt\nstep_0002.png\n" +
		"\nACTIONS:\nACTION4\nACTION4\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}

	// --from-attempt takes its three numbers after MODULE; no plan exits 1
	// with baseline1's line.
	out, errOut, code = arc(t, "planner", "aux", "--workspace", ws, "--script-prefix", "run_aux_planner.py", "--from-attempt", "level_2_planner_1", "2", "1", "3")
	if code != 1 || out != "run_aux_planner.py: no plan found from level 2 attempt 1 step 3 using level_2_planner_1\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// baseline1's argument order: the three numbers before MODULE.
	out, errOut, code = arc(t, "planner", "aux", "--workspace", ws, "--from-attempt", "2", "1", "3", "level_2_planner_1", "--goal", `{"x": 41, "y": 39}`)
	if code != 0 || !strings.HasPrefix(out, "plan from level 2 attempt 1 step 3 using level_2_planner_1\n") || !strings.HasSuffix(out, "\nACTIONS:\nACTION4\nACTION4\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// An explicit --python without numpy is an error, never replaced.
	out, _, code = arc(t, "verify", "--workspace", ws, "--python", shim)
	if code != 1 || out != "no python3 with numpy: --python "+shim+": cannot import numpy\n" {
		t.Fatalf("exit %d\nstdout:\n%s", code, out)
	}
}

// TestArcPlannerAuxStarlark: the same command over a Starlark model's
// level_N_planner_i.star, and its usage errors.
func TestArcPlannerAuxStarlark(t *testing.T) {
	ws := fixture(t)
	const aux = "MOVES = [{\"name\": \"ACTION1\"}, {\"name\": \"ACTION2\"}, {\"name\": \"ACTION3\"}, {\"name\": \"ACTION4\"}]\n\n" +
		"def planner(state, goal = None):\n    return bfs(state, MOVES, is_goal = lambda s, status: status == RUNNING and s[\"x\"] == goal[\"x\"] and s[\"y\"] == goal[\"y\"])\n"
	write(t, ws, "level_2_planner_1.star", aux)
	out, errOut, code := arc(t, "planner", "aux", "--workspace", ws, "--goal", `{"x": 39, "y": 37}`, "--from-current", "level_2_planner_1")
	if code != 0 || !strings.HasPrefix(out, "plan from current state using level_2_planner_1\nsimulated frames") || !strings.HasSuffix(out, "\nACTIONS:\nACTION1\nACTION1\n") || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"--from-current"}},
		{[]string{"--from-current", "--goal", "{x", "level_2_planner_1"}},
		{[]string{"level_2_planner_1"}},
	} {
		_, errOut, code := arc(t, append([]string{"planner", "aux", "--workspace", ws}, c.args...)...)
		if code != 2 || !strings.HasPrefix(errOut, "evident: arc planner aux: ") {
			t.Errorf("%q: exit %d, stderr %q", c.args, code, errOut)
		}
	}
}
