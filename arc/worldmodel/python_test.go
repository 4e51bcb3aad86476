package worldmodel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/verify"
	"evident/arc/worldmodel"
	"evident/internal/testenv"
)

// auxFiles are the Python dot-game model plus testdata/pyaux: a helper
// module world_model_rules.py (dataclasses) and the auxiliary planner
// level_2_planner_1.py (heapq, itertools, random, numpy, scipy, networkx,
// state_reconstruction_tools).
func auxFiles(t testing.TB) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, n := range []string{"world_model_rules.py", "level_2_planner_1.py"} {
		b, err := os.ReadFile(filepath.Join("testdata", "pyaux", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = string(b)
	}
	return files
}

// needSciPy skips (or fails under EVIDENT_REQUIRE_ALL=1) when the
// interpreter lacks scipy or networkx (Debian: python3-scipy,
// python3-networkx).
func needSciPy(t *testing.T, py string) {
	t.Helper()
	if exec.Command(py, "-c", "import scipy.ndimage, networkx").Run() == nil {
		return
	}
	testenv.Missing(t, "%s lacks scipy or networkx: install them (Debian: apt-get install -y python3-scipy python3-networkx) to run this test", py)
}

// TestPythonModelUsesBaselineModules: a model split into a helper module,
// whose auxiliary planner imports numpy, scipy, networkx, heapq, itertools,
// random and dataclasses, loads, verifies, and plans from the current state
// (level 2 attempt 1 after three steps: the dot at (39, 39)) to the goal cell
// (41, 39): two moves right, the only two-move path.
func TestPythonModelUsesBaselineModules(t *testing.T) {
	needSciPy(t, python(t))
	files := auxFiles(t)
	files[worldmodel.PythonEngineFile] = strings.Replace(pyFiles(t)[worldmodel.PythonEngineFile],
		"from game_status import", "from world_model_rules import MOVES as _RULES  # noqa: F401\nfrom game_status import", 1)
	ws := pyWorkspace(t, files)
	m := mustLoadPy(t, ws)
	got, err := report(t, m, ws, verify.Verify)
	if err != nil || got != "level 1 verified\nlevel 2 verified\nlevels 1..2 verification passed\n" {
		t.Fatalf("verify: %v\n%s", err, got)
	}
	var out strings.Builder
	res, err := verify.RunAuxPlanner(context.Background(), m, "level_2_planner_1.py", verify.Source{From: verify.FromCurrent},
		[]byte(`{"x": 41, "y": 39}`), verify.Options{Workspace: ws, Out: &out})
	if err != nil {
		t.Fatalf("aux planner: %v\n%s", detail(err), out.String())
	}
	want := "plan from current state using level_2_planner_1\n" +
		"simulated frames for the plan were written to $WS/aux_planner_frames/1\n" +
		"written files\nstep_0000_initial.txt\nstep_0000_initial.png\nstep_0001.txt\nstep_0001.png\nstep_0002.txt\nstep_0002.png\n" +
		"\nACTIONS:\nACTION4\nACTION4\n"
	if g := strings.ReplaceAll(out.String(), ws, "$WS"); g != want || fmt.Sprint(res.Plan) != "[ACTION4 ACTION4]" {
		t.Fatalf("report:\n%s\nwant:\n%s", g, want)
	}
	// Without a goal this planner has no plan: baseline1's line.
	out.Reset()
	_, err = verify.RunAuxPlanner(context.Background(), m, "level_2_planner_1", verify.Source{From: verify.FromCurrent}, nil, verify.Options{Workspace: ws, Out: &out})
	if !errors.As(err, new(*verify.Failure)) || out.String() != "no plan found from current state using level_2_planner_1\n" {
		t.Fatalf("err = %v, report %q", err, out.String())
	}
	// A module that does not exist, and one without planner.
	if err := os.WriteFile(filepath.Join(ws, "level_2_planner_2.py"), []byte("X = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustReconstruct(t, m, 2)
	if _, err := m.AuxPlan(context.Background(), s, "level_2_planner_9", nil); !errors.Is(err, worldmodel.ErrNoPlanner) ||
		!strings.Contains(err.Error(), "level_2_planner_9.py not found in ") {
		t.Fatalf("missing module: %v", err)
	}
	if _, err := m.AuxPlan(context.Background(), s, "level_2_planner_2", nil); !errors.Is(err, worldmodel.ErrContract) ||
		!strings.Contains(err.Error(), "level_2_planner_2 does not define planner(state).") {
		t.Fatalf("no planner: %v", err)
	}
	if _, err := m.AuxPlan(context.Background(), s, "../x", nil); err == nil || !strings.Contains(err.Error(), `planner module "../x": want a module name`) {
		t.Fatalf("bad name: %v", err)
	}
}

// TestPythonSandboxRefuses: file, process and network access are refused
// by the adapter's audit hook (without bubblewrap in front) in model code
// however it is reached — the builtins, numpy's and
// networkx's file readers, and the os module dug out by introspection —
// with a message naming the module or call.
func TestPythonSandboxRefuses(t *testing.T) {
	py := python(t)
	engine := pyFiles(t)[worldmodel.PythonEngineFile]
	wrapEngine := func(body string) map[string]string {
		return map[string]string{worldmodel.PythonEngineFile: engine + "\nimport numpy as np\n\n_engine = world_model_engine\n\ndef world_model_engine(state, action):\n" + body + "    return _engine(state, action)\n"}
	}
	// os through the subclasses of object: warnings.catch_warnings keeps
	// the warnings module, whose sys reaches every loaded module.
	const digOS = "    cw = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]\n" +
		"    os = cw()._module.sys.modules['os']\n"
	cases := []struct {
		name, body, want string
		scipy            bool
	}{
		{"numpy reads the session", "    np.loadtxt('client/session/level_01_attempt_01/step_0001_final.txt')\n",
			"PermissionError: open('client/session/level_01_attempt_01/step_0001_final.txt') refused in a world model: it reads no files; initial_state_reconstruction may call load_initial_full_frame(level_index) (evident sandbox)", false},
		{"numpy writes a file", "    np.save('notes.npy', np.zeros(2))\n",
			"PermissionError: open('notes.npy', 'w') refused in a world model: it writes no files (evident sandbox)", false},
		{"os.system by introspection", digOS + "    os.system('touch pwned')\n",
			"PermissionError: os.system refused in a world model: no processes, network, file changes or interpreter introspection (evident sandbox)", false},
		{"listing a folder by introspection", digOS + "    os.listdir('client')\n",
			"PermissionError: os.listdir('client') refused in a world model: it lists no folders (evident sandbox)", false},
		{"ctypes through numpy", "    np.core._internal.ctypes.CDLL(None)\n",
			"PermissionError: ctypes.dlopen refused in a world model", false},
		{"subprocess after the guard", "    import subprocess\n",
			"ImportError: import of 'subprocess' refused: a world model may import only numpy, scipy, sympy, networkx,", false},
		{"networkx reads a file", "    import networkx as nx\n    nx.read_edgelist('client/session/level_01_attempt_01/initial_metadata.json')\n",
			"PermissionError: open('client/session/level_01_attempt_01/initial_metadata.json') refused in a world model: it reads no files; initial_state_reconstruction may call load_initial_full_frame(level_index) (evident sandbox)", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.scipy {
				needSciPy(t, py)
			}
			ws := pyWorkspace(t, wrapEngine(c.body))
			// The audit hook alone (bubblewrap, tested in sandbox_test.go,
			// would also hide client/ and make the reads fail earlier).
			m := mustLoadPy(t, ws, func(o *worldmodel.SubprocessOptions) { o.Sandbox = worldmodel.SandboxOff })
			got, err := report(t, m, ws, verify.Verify)
			var f *verify.Failure
			if !errors.As(err, &f) || f.Kind != verify.ModelFailure || !strings.Contains(got, "step 1: world_model_engine: "+c.want) {
				t.Fatalf("err = %v\nreport:\n%s\nwant it to contain:\n%s", err, got, c.want)
			}
			if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}

// TestFindPython: the interpreter pick. A python3 on PATH that cannot
// import numpy (a shim, as pyenv's on this machine) is skipped for the next
// one that can, and named; an explicit --python is never replaced.
func TestFindPython(t *testing.T) {
	real := python(t)
	realPath, err := exec.LookPath(real)
	if err != nil {
		t.Fatal(err)
	}
	shimDir, goodDir := t.TempDir(), t.TempDir()
	shim := filepath.Join(shimDir, "python3")
	src := "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'numpy'\" >&2\nexit 1\n"
	if err := os.WriteFile(shim, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(goodDir, "python3")
	if err := os.Symlink(realPath, good); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	py, err := worldmodel.FindPython(ctx, "", shimDir+string(os.PathListSeparator)+goodDir)
	if err != nil {
		t.Fatal(err)
	}
	if py.Path != good || py.Version == "" || py.NumPy == "" || len(py.Skipped) != 1 || py.Skipped[0] != shim+" (cannot import numpy)" {
		t.Fatalf("FindPython = %+v", py)
	}
	want := fmt.Sprintf("python: %s (python %s, numpy %s); skipped %s (cannot import numpy)", good, py.Version, py.NumPy, shim)
	if py.String() != want {
		t.Errorf("String() = %q, want %q", py.String(), want)
	}
	if _, err := worldmodel.FindPython(ctx, shim, goodDir); !errors.Is(err, worldmodel.ErrNoPython) || err.Error() != "no python3 with numpy: --python "+shim+": cannot import numpy" {
		t.Errorf("explicit shim: %v", err)
	}
	if py, err := worldmodel.FindPython(ctx, good, shimDir); err != nil || py.Path != good || len(py.Skipped) != 0 {
		t.Errorf("explicit good: %+v, %v", py, err)
	}
}
