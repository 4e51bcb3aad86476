package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/verify"
	"evident/arc/worldmodel"
	"evident/internal/testenv"
)

// pythonCmd returns "PYTHON {adapter}" for a python3 that imports numpy
// (the --model-cmd python tests); without one the test skips, or fails
// when EVIDENT_REQUIRE_ALL=1 (internal/testenv).
func pythonCmd(t *testing.T) string {
	t.Helper()
	return testenv.Python(t, "python3 python3-numpy", "the --model-cmd python tests run the adapter", "numpy") + " {adapter}"
}

// copyFiles copies the files of dir into ws.
func copyFiles(t *testing.T, dir, ws string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(ws, e.Name()), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestArcModelCmdVerify(t *testing.T) {
	py := pythonCmd(t)
	ws := fixture(t)
	copyFiles(t, filepath.Join("..", "..", "arc", "worldmodel", "testdata", "pydot"), ws)
	for _, rm := range []string{"world_model_engine.star", "world_model_state_io.star", "world_model_main_planner.star"} {
		os.Remove(filepath.Join(ws, rm)) // the Python model alone
	}
	// stderr holds only the sandbox's notice where bubblewrap is missing
	// (worldmodel.GuardRailNotice, "" where it works).
	out, errOut, code := arc(t, "verify", "--workspace", ws, "--model-cmd", py)
	if code != 0 || out != "level 1 verified\nlevel 2 verified\nlevels 1..2 verification passed\n" || errOut != worldmodel.GuardRailNotice() {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = arc(t, "planner", "verify", "--workspace", ws, "--model-cmd", py)
	if code != 0 || !strings.HasSuffix(out, "levels 1..1 planner verification passed\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = arc(t, "planner", "run", "--from-initial", "1", "--workspace", ws, "--model-cmd", py)
	if code != 0 || !strings.HasPrefix(out, "plan from initial state of level 1\nACTION1\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// An exception in the engine: the report names the function and shows
	// the Python traceback; print() output goes to stderr.
	engine := filepath.Join(ws, "world_model_engine.py")
	src, _ := os.ReadFile(engine)
	broken := strings.Replace(string(src), `    name = action["name"]`, "    name = action[\"name\"]\n    print(\"engine sees\", name)\n    if name == \"ACTION5\":\n        raise RuntimeError(\"no ACTION5 yet\")", 1)
	if err := os.WriteFile(engine, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = arc(t, "verify", "--workspace", ws, "--model-cmd", py)
	if code != 1 || !strings.HasPrefix(out, "Model level 2, replay level 1, attempt 1, replay, step 3: world_model_engine: RuntimeError: no ACTION5 yet\nTraceback (most recent call last):\n") ||
		!strings.Contains(errOut, "engine sees ACTION4\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestArcModelCmdHangs: the whole-run time limit kills a model program that
// never answers, with the seed's message; a program that writes garbage
// fails with the call named. Neither needs Python.
func TestArcModelCmdHangs(t *testing.T) {
	ws := fixture(t)
	script := filepath.Join(t.TempDir(), "hang.sh")
	os.WriteFile(script, []byte("read line\necho '{\"id\":1,\"ok\":true,\"protocol\":1}'\nread line\nsleep 60\n"), 0o644)
	out, errOut, code := arc(t, "verify", "--workspace", ws, "--model-cmd", "sh "+script, "--time-limit", "500ms")
	if code != 1 || out != verify.TooSlowMessage+"\n" || !strings.Contains(errOut, "arc verify: "+verify.TooSlowMessage) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	os.WriteFile(script, []byte("read line\necho '{\"id\":1,\"ok\":true,\"protocol\":1}'\nread line\necho 'state=7'\n"), 0o644)
	out, errOut, code = arc(t, "planner", "run", "--from-current", "--workspace", ws, "--model-cmd", "sh "+script)
	if code != 1 || !strings.HasPrefix(out, `current state: initial_state_reconstruction: world model subprocess failed: the program answered reconstruct with a malformed response`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestArcPlanExecModelCmd: plan-exec predicts with a Python world model
// (the Lights game, testdata/pylights) through the adapter.
func TestArcPlanExecModelCmd(t *testing.T) {
	py := pythonCmd(t)
	srv, url := localGames(t)
	ws := t.TempDir()
	c, _ := client.New(client.Options{Workspace: ws})
	if _, err := c.Start(context.Background(), url, games.Lights.ID, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	copyFiles(t, filepath.Join("testdata", "pylights"), ws)
	out, errOut, code := arc(t, "plan-exec", "--workspace", ws, "--model-cmd", py, `{"name":"ACTION6","x":0,"y":0}`, `{"name": "ACTION6", "x": 63, "y": 63}`)
	if code != 0 || out != "running ACTION6 x=0 y=0\nrunning ACTION6 x=63 y=63\nsequence executed without mismatch\n" || srv.Stats().Actions != 2 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// A real click on the board, predicted and checked; then, with a broken
	// engine, plan-exec finds the mismatch while rebuilding the current
	// state and sends nothing.
	sol := games.Lights.Solution(0, 1)
	arg, _ := sol[0].MarshalJSON()
	out, errOut, code = arc(t, "plan-exec", "--workspace", ws, "--model-cmd", py, string(arg))
	if code != 0 || srv.Stats().Actions != 3 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	p := filepath.Join(ws, "world_model_engine.py")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "cells[cj * n + ci] = 1 - cells[cj * n + ci]", "pass", 1)), 0o644)
	out, errOut, code = arc(t, "plan-exec", "--workspace", ws, "--model-cmd", py, string(arg))
	if code != 1 || !strings.HasPrefix(out, "rebuilding the current state: level 1, attempt 1, step 3: rendered frame mismatch. Nothing was sent; run the verifier.\nreal ascii: ") ||
		srv.Stats().Actions != 3 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = arc(t, "verify", "--workspace", ws, "--model-cmd", py)
	if code != 1 || !strings.Contains(out, "step 3: rendered frame mismatch.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
