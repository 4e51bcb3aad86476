package worldmodel_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/verify"
	"evident/arc/worldmodel"
)

// TestPythonModelImportsBaseline1Modules: what baseline1's models import
// beyond numpy (its agent image has python3-sympy; models call
// sys.setrecursionlimit and use time, queue and hashlib) loads, and the
// model still verifies. sympy is allowed by name: where it is not
// installed, its import fails as a missing module, not as a refusal.
func TestPythonModelImportsBaseline1Modules(t *testing.T) {
	python(t)
	engine := pyFiles(t)[worldmodel.PythonEngineFile]
	head := "import sys\nimport time\nimport queue\nimport hashlib\n" +
		"try:\n    import sympy\nexcept ModuleNotFoundError:\n    sympy = None\n" +
		"sys.setrecursionlimit(5000)\n_q = queue.Queue()\n_q.put(hashlib.sha256(b'x').hexdigest())\n_t0 = time.monotonic()\n\n"
	ws := pyWorkspace(t, map[string]string{worldmodel.PythonEngineFile: engine + "\n" + head +
		"_engine = world_model_engine\n\ndef world_model_engine(state, action):\n" +
		"    assert sys.getrecursionlimit() == 5000 and _q.qsize() == 1 and time.monotonic() >= _t0\n" +
		"    return _engine(state, action)\n"})
	got, err := report(t, mustLoadPy(t, ws), ws, verify.Verify)
	if err != nil {
		t.Fatalf("%v\n%s", err, detail(err))
	}
	if !strings.Contains(got, "levels 1..2 verification passed") {
		t.Fatalf("report:\n%s", got)
	}
}

// TestPythonSandboxRefusesThroughSys: with sys importable, what
// sys.modules reaches — os, posix, the adapter's saved real open and
// import — is still refused by the audit hook (bubblewrap off), with the
// hook's message; no file is written and no command runs.
func TestPythonSandboxRefusesThroughSys(t *testing.T) {
	python(t)
	engine := pyFiles(t)[worldmodel.PythonEngineFile]
	wrapEngine := func(body string) map[string]string {
		return map[string]string{worldmodel.PythonEngineFile: engine + "\nimport sys\n\n_engine = world_model_engine\n\ndef world_model_engine(state, action):\n" + body + "    return _engine(state, action)\n"}
	}
	const session = "client/session/level_01_attempt_01/step_0001_final.txt"
	cases := []struct{ name, body, want string }{
		{"os.system through sys.modules", "    sys.modules['os'].system('touch pwned')\n",
			"PermissionError: os.system refused in a world model: no processes, network, file changes or interpreter introspection (evident sandbox)"},
		{"the subprocess stub (for sympy) through sys.modules", "    sys.modules['subprocess'].Popen(['touch', 'pwned'])\n",
			"PermissionError: subprocess.Popen refused in a world model: no processes, sockets or files (evident sandbox)"},
		{"fork through sys.modules['posix']", "    sys.modules['posix'].fork()\n",
			"PermissionError: os.fork refused in a world model: no processes, network, file changes or interpreter introspection (evident sandbox)"},
		{"os.open for writing through sys.modules", "    o = sys.modules['os']\n    o.open('pwned', o.O_CREAT | o.O_WRONLY)\n",
			"refused in a world model: it writes no files (evident sandbox)"},
		{"the adapter's real open reads the session", "    sys.modules['__main__'].real_open('" + session + "').read()\n",
			"PermissionError: open('" + session + "') refused in a world model: it reads no files; initial_state_reconstruction may call load_initial_full_frame(level_index) (evident sandbox)"},
		{"the adapter's real open writes a file", "    sys.modules['__main__'].real_open('pwned', 'w')\n",
			"PermissionError: open('pwned', 'w') refused in a world model: it writes no files (evident sandbox)"},
		{"the adapter's real import loads socket", "    sys.modules['__main__'].real_import('socket')\n",
			"PermissionError: import of 'socket' refused in a world model: no processes, sockets or files (evident sandbox)"},
		{"builtins.open through sys.modules", "    sys.modules['builtins'].open('" + session + "')\n",
			"PermissionError: open('" + session + "') refused in a world model: it reads no files;"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := pyWorkspace(t, wrapEngine(c.body))
			m := mustLoadPy(t, ws, func(o *worldmodel.SubprocessOptions) { o.Sandbox = worldmodel.SandboxOff })
			got, err := report(t, m, ws, verify.Verify)
			var f *verify.Failure
			if !errors.As(err, &f) || f.Kind != verify.ModelFailure || !strings.Contains(got, "step 1: world_model_engine: ") || !strings.Contains(got, c.want) {
				t.Fatalf("err = %v\nreport:\n%s\nwant it to contain:\n%s", err, got, c.want)
			}
			if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
				t.Fatal("the file was written or the command ran")
			}
		})
	}
}
