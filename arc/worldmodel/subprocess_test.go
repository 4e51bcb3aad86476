package worldmodel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"evident/arc/frame"
	"evident/arc/internal/dotgame"
	"evident/arc/session"
	"evident/arc/verify"
	"evident/arc/worldmodel"
	"evident/internal/testenv"
)

// The Python tests need a python3 that imports numpy (Debian:
// python3-numpy). Without one they skip, or fail when EVIDENT_REQUIRE_ALL=1.
// The tests of the protocol itself use sh scripts and always run.

// python returns a Python 3 interpreter that can import numpy.
func python(t testing.TB) string {
	t.Helper()
	return testenv.Python(t, "python3 python3-numpy", "the Python world-model tests run it", "numpy")
}

// fixtureScript is the recorded dot game of arc/verify's fixture: a
// GAME_OVER attempt, a completed level 1, and a running level 2 attempt.
var fixtureScript = "RESET 4 4 5 6:15,47 5 1 6:10,33 2 " +
	"RESET 1 1 1 1 1 " + strings.Repeat("4 ", 20) + "2 2 2 2 2 " +
	"3 5 1"

// pyFiles reads the Python port of the dot-game model (testdata/pydot).
func pyFiles(t testing.TB) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, n := range []string{worldmodel.PythonEngineFile, worldmodel.PythonStateIOFile, worldmodel.PythonPlannerFile} {
		b, err := os.ReadFile(filepath.Join("testdata", "pydot", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = string(b)
	}
	return files
}

// pyWorkspace returns a workspace holding the session of fixtureScript, the
// Starlark reference model and the Python port, with the files in override
// replaced (an empty body removes the file).
func pyWorkspace(t testing.TB, override map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	if err := dotgame.WriteModel(ws); err != nil {
		t.Fatal(err)
	}
	files := pyFiles(t)
	for n, body := range override {
		files[n] = body
	}
	for n, body := range files {
		p := filepath.Join(ws, n)
		if body == "" {
			os.Remove(p)
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := dotgame.Play(filepath.Join(ws, session.Dir), dotgame.Actions(fixtureScript)); err != nil {
		t.Fatal(err)
	}
	return ws
}

// loadPy starts the embedded adapter over ws.
func loadPy(t testing.TB, ws string, opts ...func(*worldmodel.SubprocessOptions)) (*worldmodel.Subprocess, error) {
	t.Helper()
	o := worldmodel.SubprocessOptions{Command: python(t) + " " + worldmodel.AdapterPlaceholder, Dir: ws}
	for _, f := range opts {
		f(&o)
	}
	m, err := worldmodel.LoadSubprocess(context.Background(), o)
	if m != nil {
		t.Cleanup(func() { m.Close() })
	}
	return m, err
}

func mustLoadPy(t testing.TB, ws string, opts ...func(*worldmodel.SubprocessOptions)) *worldmodel.Subprocess {
	t.Helper()
	m, err := loadPy(t, ws, opts...)
	if err != nil {
		t.Fatal(detail(err))
	}
	return m
}

func detail(err error) string {
	var ce *worldmodel.CallError
	if errors.As(err, &ce) {
		return ce.Detail()
	}
	return err.Error()
}

func loadStar(t testing.TB, ws string) worldmodel.Model {
	t.Helper()
	m, err := worldmodel.LoadStarlark(context.Background(), worldmodel.StarlarkOptions{Dir: ws})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// report runs one of verify's commands and returns its report with the
// workspace written as $WS, and the error.
func report(t testing.TB, m worldmodel.Model, ws string, run func(context.Context, worldmodel.Model, verify.Options) error) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), m, verify.Options{Workspace: ws, Out: &out})
	return strings.ReplaceAll(out.String(), ws, "$WS"), err
}

func runPlanner(ctx context.Context, m worldmodel.Model, o verify.Options) error {
	_, err := verify.RunPlanner(ctx, m, verify.Source{From: verify.FromCurrent}, o)
	return err
}

// TestPythonModelVerifiesLikeStarlark: the Python port of the dot-game
// model, run by the adapter, gives the recorded session the same reports as
// the Starlark reference model — passing, and failing at the same step with
// the same artifacts when both engines lose ACTION5.
func TestPythonModelVerifiesLikeStarlark(t *testing.T) {
	const passed = "level 1 verified\nlevel 2 verified\nlevels 1..2 verification passed\n"
	for _, c := range []struct {
		name string
		run  func(context.Context, worldmodel.Model, verify.Options) error
		want string
	}{
		{"verify", verify.Verify, passed},
		{"planner verify", verify.VerifyPlanner, ""},
		{"planner run", runPlanner, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := pyWorkspace(t, nil)
			py := mustLoadPy(t, ws)
			got, err := report(t, py, ws, c.run)
			if err != nil {
				t.Fatalf("python: %v\n%s", err, got)
			}
			want, err := report(t, loadStar(t, ws), ws, c.run)
			if err != nil {
				t.Fatalf("starlark: %v\n%s", err, want)
			}
			if got != want || (c.want != "" && got != c.want) {
				t.Fatalf("python report:\n%s\nstarlark report:\n%s", got, want)
			}
		})
	}

	t.Run("same mismatch", func(t *testing.T) {
		const toggle = `s["color"] = 12 if state["color"] == 9 else 9`
		star := strings.Replace(string(dotgame.Model(worldmodel.EngineFile)), toggle, "pass", 1)
		pyEngine := strings.Replace(pyFiles(t)[worldmodel.PythonEngineFile], toggle, "pass", 1)
		ws := pyWorkspace(t, map[string]string{worldmodel.EngineFile: star, worldmodel.PythonEngineFile: pyEngine})
		got, perr := report(t, mustLoadPy(t, ws), ws, verify.Verify)
		os.RemoveAll(filepath.Join(ws, verify.MismatchDir)) // the second run claims mismatch_frames/1 again
		want, serr := report(t, loadStar(t, ws), ws, verify.Verify)
		var pf, sf *verify.Failure
		if !errors.As(perr, &pf) || !errors.As(serr, &sf) || pf.Kind != verify.FrameMismatch || sf.Kind != verify.FrameMismatch {
			t.Fatalf("errors: python %v, starlark %v", perr, serr)
		}
		if got != want || !strings.Contains(got, "replay level 1, attempt 1, replay, step 3: rendered frame mismatch.") {
			t.Fatalf("python report:\n%s\nstarlark report:\n%s", got, want)
		}
	})
}

// TestPythonModelSearchFromGo: BFS in Go over the subprocess runtime (state
// handles, keys fetched then sent with every state, handles released as Go
// drops them) finds the shortest plans the Starlark model finds.
func TestPythonModelSearchFromGo(t *testing.T) {
	ws := pyWorkspace(t, nil)
	py := mustLoadPy(t, ws)
	star := loadStar(t, ws)
	ctx := context.Background()
	moves := dotgame.Actions("1 2 3 4")
	for level := 1; level <= len(dotgame.Levels); level++ {
		g := dotgame.Background(level)
		s := dotgame.Levels[level-1].Start
		g.Set(s.X, s.Y, dotgame.Dot)
		var plans [2][]session.Action
		for i, m := range []worldmodel.Model{py, star} {
			st, err := m.Reconstruct(ctx, level, g)
			if err != nil {
				t.Fatal(detail(err))
			}
			plan, stats, err := worldmodel.BFS(ctx, m, st, worldmodel.BFSOptions{Actions: moves})
			if err != nil {
				t.Fatal(detail(err))
			}
			if len(plan) != dotgame.ShortestPath(level) || stats.States < 100 {
				t.Fatalf("level %d: plan of %d actions (want %d), %+v", level, len(plan), dotgame.ShortestPath(level), stats)
			}
			plans[i] = plan
		}
		if fmt.Sprint(plans[0]) != fmt.Sprint(plans[1]) {
			t.Errorf("level %d: python plan %v, starlark plan %v", level, plans[0], plans[1])
		}
	}
	if k1, err := mustReconstruct(t, py, 1).Key(); err != nil {
		t.Fatal(err)
	} else if k2, _ := mustReconstruct(t, py, 1).Key(); k1 != k2 {
		t.Errorf("equal states have keys %x and %x", k1, k2)
	}
}

func mustReconstruct(t *testing.T, m worldmodel.Model, level int) worldmodel.State {
	t.Helper()
	g := dotgame.Background(level)
	s := dotgame.Levels[level-1].Start
	g.Set(s.X, s.Y, dotgame.Dot)
	st, err := m.Reconstruct(context.Background(), level, g)
	if err != nil {
		t.Fatal(detail(err))
	}
	return st
}

// TestPythonGuardRails: the adapter refuses imports and built-ins that reach
// files, clocks or randomness, allows load_initial_full_frame only inside
// initial_state_reconstruction, keeps print() off the protocol, and reports
// model failures with the function and the traceback.
func TestPythonGuardRails(t *testing.T) {
	engine := pyFiles(t)[worldmodel.PythonEngineFile]
	stateIO := pyFiles(t)[worldmodel.PythonStateIOFile]
	withEngine := func(body string) map[string]string {
		return map[string]string{worldmodel.PythonEngineFile: engine + "\n" + body}
	}
	wrapEngine := func(body string) map[string]string {
		return withEngine("_engine = world_model_engine\n\ndef world_model_engine(state, action):\n" + body + "    return _engine(state, action)\n")
	}
	loadFails := []struct {
		name     string
		files    map[string]string
		fn, want string
	}{
		{"import os", withEngine("import os\n"), worldmodel.PythonEngineFile, `ImportError: import of 'os' refused: a world model may import only numpy, scipy, sympy, networkx, game_status, load_initial_full_frame, state_reconstruction_tools, the workspace's world_model_*.py and level_N_planner_i.py files and the standard modules __future__, abc,`},
		{"from pathlib", withEngine("from pathlib import Path\n"), worldmodel.PythonEngineFile, `import of 'pathlib' refused`},
		{"import socket", map[string]string{worldmodel.PythonStateIOFile: stateIO + "\nimport socket\n"}, worldmodel.PythonStateIOFile, `import of 'socket' refused`},
		{"open at load", withEngine("RULES = open('client/session/level_01_attempt_01/step_0001_final.txt').read()\n"), worldmodel.PythonEngineFile, `PermissionError: open() refused in a world model`},
		{"syntax error", withEngine("def broken(:\n"), worldmodel.PythonEngineFile, `world_model_engine.py:`},
		{"no renderer", map[string]string{worldmodel.PythonStateIOFile: strings.Replace(stateIO, "def state_renderer", "def other_renderer", 1)}, worldmodel.PythonStateIOFile, `world model contract violated: world_model_state_io.py does not define state_renderer`},
	}
	for _, c := range loadFails {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadPy(t, pyWorkspace(t, c.files))
			var ce *worldmodel.CallError
			if !errors.As(err, &ce) || ce.Func != c.fn || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %s: …%s…", err, c.fn, c.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := loadPy(t, pyWorkspace(t, map[string]string{worldmodel.PythonStateIOFile: ""}))
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "world_model_state_io.py not found") {
			t.Fatalf("err = %v", err)
		}
	})

	verifyFails := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"exception", wrapEngine("    if action['name'] == 'ACTION5':\n        1 / 0\n"), []string{
			"Model level 2, replay level 1, attempt 1, replay, step 3: world_model_engine: ZeroDivisionError: division by zero\nTraceback (most recent call last):\n",
			"world_model_engine.py\", line ", "1 / 0",
		}},
		{"open in the engine", wrapEngine("    open('notes.txt')\n"), []string{
			"step 1: world_model_engine: PermissionError: open() refused in a world model: it reads no files; initial_state_reconstruction may call load_initial_full_frame(level_index) (evident adapter)",
		}},
		{"full frame outside reconstruction", wrapEngine("    from load_initial_full_frame import load_initial_full_frame\n    load_initial_full_frame(1)\n"), []string{
			"step 1: world_model_engine: PermissionError: load_initial_full_frame may be called only from initial_state_reconstruction",
		}},
		{"import inside a call", wrapEngine("    import subprocess\n"), []string{
			"step 1: world_model_engine: ImportError: import of 'subprocess' refused",
		}},
		{"frame shape", map[string]string{worldmodel.PythonStateIOFile: stateIO + "\n_render = state_renderer\n\ndef state_renderer(state):\n    return _render(state)[1:]\n"}, []string{
			"initial state: state_renderer: world model contract violated: returned a frame of 63 rows, want 64x64",
		}},
		{"colour", map[string]string{worldmodel.PythonStateIOFile: stateIO + "\n_render = state_renderer\n\ndef state_renderer(state):\n    g = _render(state)\n    g[5, 7] = 16\n    return g\n"}, []string{
			"initial state: state_renderer: world model contract violated: returned a frame whose cell (7, 5) is 16, want colours 0..15",
		}},
		{"status", wrapEngine("    return dict(state), 'WON'\n"), []string{
			"step 1: world_model_engine: world model contract violated: returned status 'WON', want RUNNING, LEVEL_COMPLETED or GAME_OVER",
		}},
		{"level", wrapEngine("    return {}, 'RUNNING'\n"), []string{
			"step 1: world_model_engine: world model contract violated: returned a state without \"level\"",
		}},
	}
	for _, c := range verifyFails {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := pyWorkspace(t, c.files)
			got, err := report(t, mustLoadPy(t, ws), ws, verify.Verify)
			var f *verify.Failure
			if !errors.As(err, &f) || f.Kind != verify.ModelFailure {
				t.Fatalf("err = %v\n%s", err, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Fatalf("report:\n%s\nwant it to contain:\n%s", got, w)
				}
			}
		})
	}

	t.Run("print goes to Print, full frames load", func(t *testing.T) {
		io := strings.Replace(stateIO, "    full = load_initial_full_frame(level_index)", "    full = load_initial_full_frame(level_index)\n    print('full frame', level_index, None if full is None else full.shape)", 1)
		ws := pyWorkspace(t, map[string]string{worldmodel.PythonStateIOFile: io})
		// Level 2's full frame is its initial frame: used, and the replay
		// still matches.
		g := dotgame.Background(2)
		s := dotgame.Levels[1].Start
		g.Set(s.X, s.Y, dotgame.Dot)
		if err := os.MkdirAll(filepath.Join(ws, session.InitialFullFramesDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := g.WriteASCIIFile(filepath.Join(ws, session.InitialFullFramesDir, session.InitialFullFrameFile(2))); err != nil {
			t.Fatal(err)
		}
		var printed bytes.Buffer
		m := mustLoadPy(t, ws, func(o *worldmodel.SubprocessOptions) { o.Print = &printed })
		got, err := report(t, m, ws, verify.Verify)
		if err != nil {
			t.Fatalf("%v\n%s", err, got)
		}
		m.Close() // flushes stderr
		if p := printed.String(); !strings.Contains(p, "full frame 1 None\n") || !strings.Contains(p, "full frame 2 (64, 64)\n") {
			t.Fatalf("printed:\n%s", p)
		}
		if !strings.HasPrefix(m.Runtime(), "python 3.") {
			t.Errorf("Runtime() = %q", m.Runtime())
		}
	})

	t.Run("no planner", func(t *testing.T) {
		ws := pyWorkspace(t, map[string]string{worldmodel.PythonPlannerFile: ""})
		m := mustLoadPy(t, ws)
		_, err := m.Plan(context.Background(), mustReconstruct(t, m, 1), nil)
		if !errors.Is(err, worldmodel.ErrNoPlanner) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("plan with RESET, goal", func(t *testing.T) {
		pl := pyFiles(t)[worldmodel.PythonPlannerFile] + "\n_planner = planner\n\ndef planner(state, goal=None):\n    if goal is not None:\n        return _planner(state, goal)\n    return ['ACTION1', {'name': 'RESET'}]\n"
		ws := pyWorkspace(t, map[string]string{worldmodel.PythonPlannerFile: pl})
		m := mustLoadPy(t, ws)
		_, err := m.Plan(context.Background(), mustReconstruct(t, m, 1), nil)
		if !errors.Is(err, worldmodel.ErrContract) || !strings.Contains(err.Error(), "plan action 2: RESET is never part of a plan") {
			t.Fatalf("err = %v", err)
		}
		plan, err := m.Plan(context.Background(), mustReconstruct(t, m, 1), []byte(`{"x": 12, "y": 30}`))
		if err != nil || fmt.Sprint(plan) != "[ACTION1 ACTION1 ACTION4 ACTION4]" {
			t.Fatalf("plan %v, err %v", plan, err)
		}
	})

	t.Run("endless engine, call time limit", func(t *testing.T) {
		ws := pyWorkspace(t, wrapEngine("    while True:\n        pass\n"))
		m := mustLoadPy(t, ws, func(o *worldmodel.SubprocessOptions) { o.CallTimeout = 300 * time.Millisecond })
		start := time.Now()
		_, _, err := m.Step(context.Background(), mustReconstruct(t, m, 1), session.Action{Name: "ACTION1"})
		if !errors.Is(err, worldmodel.ErrCallTimeout) || time.Since(start) > 20*time.Second { // the loop never ends
			t.Fatalf("err = %v after %v", err, time.Since(start))
		}
		if _, err := m.Render(context.Background(), nil); !errors.Is(err, worldmodel.ErrForeignState) {
			t.Fatalf("nil state: %v", err)
		}
		if _, err := m.Reconstruct(context.Background(), 1, dotgame.Background(1)); !errors.Is(err, worldmodel.ErrSubprocess) {
			t.Fatalf("call after the kill: %v", err)
		}
	})
}

// fake writes an sh script that answers hello and then does body, and
// returns the command that runs it.
func fake(t *testing.T, body string) string {
	t.Helper()
	// Inline, not a file: under bubblewrap /tmp is private, so a script in
	// another temporary folder than the workspace would not be seen.
	src := "read line\necho '{\"id\":1,\"ok\":true,\"protocol\":1}'\n" + body + "\n"
	return "sh -c '" + strings.ReplaceAll(src, "'", `'\''`) + "'"
}

func loadFake(t *testing.T, command string) (*worldmodel.Subprocess, error) {
	t.Helper()
	m, err := worldmodel.LoadSubprocess(context.Background(), worldmodel.SubprocessOptions{Command: command, Dir: t.TempDir(), LoadTimeout: 5 * time.Second})
	if m != nil {
		t.Cleanup(func() { m.Close() })
	}
	return m, err
}

// TestSubprocessProtocolFailures: a program that writes garbage, exits or
// never answers fails with an error naming the call (and its stderr), and
// the whole-run time limit of verify kills a hanging one.
func TestSubprocessProtocolFailures(t *testing.T) {
	ctx := context.Background()
	initial := dotgame.Background(1)

	t.Run("garbage at hello", func(t *testing.T) {
		_, err := loadFake(t, "echo 'Traceback (most recent call last): oops' >&2; echo hello there; sleep 30")
		var ce *worldmodel.CallError
		if !errors.As(err, &ce) || !errors.Is(err, worldmodel.ErrSubprocess) ||
			ce.Error() != `world model subprocess: world model subprocess failed: the program answered hello with a malformed response (not a JSON object; want one JSON object per line): "hello there"` {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(ce.Detail(), "stderr of the world model subprocess (last lines):\nTraceback (most recent call last): oops") {
			t.Errorf("detail:\n%s", ce.Detail())
		}
	})
	t.Run("garbage at a call", func(t *testing.T) {
		m, err := loadFake(t, fake(t, "read line\necho garbage\nsleep 30"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Reconstruct(ctx, 1, initial)
		if !errors.Is(err, worldmodel.ErrSubprocess) || err.Error() != `initial_state_reconstruction: world model subprocess failed: the program answered reconstruct with a malformed response (not a JSON object; want one JSON object per line): "garbage"` {
			t.Fatalf("err = %v", err)
		}
		if _, _, err := m.Step(ctx, nil, session.Action{Name: "ACTION1"}); !errors.Is(err, worldmodel.ErrForeignState) {
			t.Fatalf("nil state: %v", err)
		}
	})
	t.Run("wrong id", func(t *testing.T) {
		m, err := loadFake(t, fake(t, "read line\necho '{\"id\":7,\"state\":1,\"level\":1}'\nsleep 30"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err = m.Reconstruct(ctx, 1, initial); !errors.Is(err, worldmodel.ErrSubprocess) || !strings.Contains(err.Error(), "(id 7, want 2;") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("crash", func(t *testing.T) {
		m, err := loadFake(t, fake(t, "read line\necho 'model exploded' >&2\nexit 3"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Reconstruct(ctx, 1, initial)
		var ce *worldmodel.CallError
		if !errors.As(err, &ce) || ce.Func != worldmodel.FuncReconstruct || !errors.Is(err, worldmodel.ErrSubprocess) ||
			!strings.Contains(err.Error(), "the program exited (exit status 3) during initial_state_reconstruction") ||
			!strings.HasSuffix(ce.Detail(), "\nmodel exploded") {
			t.Fatalf("err = %v\n%s", err, detail(err))
		}
	})
	t.Run("not started", func(t *testing.T) {
		_, err := loadFake(t, "no-such-program-for-evident --flag")
		if !errors.Is(err, worldmodel.ErrSubprocess) || !strings.Contains(err.Error(), "the program exited (exit status 127) during world model subprocess") ||
			!strings.Contains(detail(err), "not found") {
			t.Fatalf("err = %v\n%s", err, detail(err))
		}
	})
	t.Run("silent at hello", func(t *testing.T) {
		start := time.Now()
		_, err := worldmodel.LoadSubprocess(ctx, worldmodel.SubprocessOptions{Command: "sleep 30", Dir: t.TempDir(), LoadTimeout: 300 * time.Millisecond})
		if !errors.Is(err, worldmodel.ErrSubprocess) || !strings.Contains(err.Error(), "no answer to hello within 300ms (sleep 30)") || time.Since(start) > 20*time.Second { // the program sleeps 30 s
			t.Fatalf("err = %v after %v", err, time.Since(start))
		}
	})
	t.Run("hanging model, verify's time limit", func(t *testing.T) {
		ws := t.TempDir()
		if err := dotgame.Play(filepath.Join(ws, session.Dir), dotgame.Actions("RESET 4 4")); err != nil {
			t.Fatal(err)
		}
		m, err := worldmodel.LoadSubprocess(ctx, worldmodel.SubprocessOptions{Command: fake(t, "read line\nsleep 30"), Dir: ws})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		var out bytes.Buffer
		start := time.Now()
		err = verify.Verify(ctx, m, verify.Options{Workspace: ws, Out: &out, TimeLimit: 500 * time.Millisecond})
		var f *verify.Failure
		if !errors.As(err, &f) || f.Kind != verify.TooSlow || out.String() != verify.TooSlowMessage+"\n" || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v\n%s", err, out.String())
		}
		if d := time.Since(start); d > 20*time.Second { // the program sleeps 30 s
			t.Fatalf("verify took %v", d)
		}
	})
}

// TestAdapterEmbedded: the embedded adapter is the file in the repository.
func TestAdapterEmbedded(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("adapter", worldmodel.AdapterFile))
	if err != nil || !bytes.Equal(b, worldmodel.AdapterSource()) {
		t.Fatalf("adapter differs from the embedded copy (%v)", err)
	}
	dir := t.TempDir()
	p, err := worldmodel.WriteAdapter(dir)
	if err != nil || p != filepath.Join(dir, worldmodel.AdapterFile) {
		t.Fatal(p, err)
	}
}

// TestSubprocessFramesBothForms: rows may come as hex strings (either case)
// or lists of ints.
func TestSubprocessFramesBothForms(t *testing.T) {
	hex := `"` + strings.Repeat("a", 64) + `"`
	ints := "[" + strings.Repeat("10,", 63) + "10]"
	rows := make([]string, 64)
	for i := range rows {
		rows[i] = hex
		if i%2 == 1 {
			rows[i] = ints
		}
	}
	body := fmt.Sprintf("read line\necho '{\"id\":2,\"state\":5,\"level\":1}'\nread line\necho '{\"id\":3,\"frame\":[%s]}'\ncat >/dev/null", strings.Join(rows, ","))
	m, err := loadFake(t, fake(t, body))
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Reconstruct(context.Background(), 1, dotgame.Background(1))
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Render(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := frame.New(64, 64)
	for i := range want.Cells() {
		want.Cells()[i] = 10
	}
	if !frame.Equal(g, want) {
		t.Fatalf("frame:\n%s", g)
	}
}

// TestSubprocessReleasesStates: states Go drops are named in a later
// request's "release" list, so the program can free them.
func TestSubprocessReleasesStates(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "requests.log")
	script := filepath.Join(dir, "counter.sh")
	src := `i=1
while read line; do
  echo "$line" >> '` + log + `'
  if [ $i -eq 1 ]; then echo '{"id":1,"ok":true,"protocol":1}'; else echo "{\"id\":$i,\"state\":$i,\"level\":1}"; fi
  i=$((i+1))
done
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Guard-rail mode: the program logs what it receives to a file outside
	// its workspace, which bubblewrap would refuse.
	m, err := worldmodel.LoadSubprocess(context.Background(), worldmodel.SubprocessOptions{Command: "sh " + script, Dir: t.TempDir(), Sandbox: worldmodel.SandboxOff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	initial := dotgame.Background(1)
	for i := 0; i < 10; i++ {
		if _, err := m.Reconstruct(ctx, 1, initial); err != nil {
			t.Fatal(err)
		}
	}
	for try := 0; try < 100; try++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if _, err := m.Reconstruct(ctx, 1, initial); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(log)
		if regexp.MustCompile(`"release":\[([0-9]+,)*2[,\]]`).Match(b) {
			return
		}
	}
	b, _ := os.ReadFile(log)
	t.Fatalf("no request released state 2:\n%s", b)
}
