package main

// The workspace launchers of `evident arc init`, run as an agent runs them:
// python3 on the launcher, which execs the evident binary (this test
// binary, see evidentBin), against the local game server on loopback. Expected lines
// are baseline1's (secure_baseline1 workspace_init/verify_world_model.py,
// plan_executor.py, plot_initial_full_frames.py; twma_v1.6 client.py
// print_step_summary), written out by hand.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"evident/arc/games"
	"evident/internal/testenv"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	// A copy of this test binary named evident is the evident command
	// (evidentBin): the launchers exec it with evident's arguments.
	if filepath.Base(os.Args[0]) == evidentName {
		main()
		os.Exit(0)
	}
	// The evident binary for the launcher tests is made at most once per
	// run, on first use, into a folder removed at the end.
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// evidentName is the name under which this test binary runs as evident.
const evidentName = "evident"

// evidentBin returns an evident binary for the tests that exec one (the
// launchers, the agent controller): this test binary itself, linked (or
// copied) once into a temporary folder as "evident", which TestMain runs as
// the command. No second build: the package's code is already compiled
// and linked here.
func evidentBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			binErr = err
			return
		}
		if binDir, err = os.MkdirTemp("", "evident-launch-"); err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(binDir, evidentName)
		if os.Link(self, binPath) == nil {
			return
		}
		binErr = copyExecutable(self, binPath)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// copyExecutable copies the program at src to a new file dst, executable.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// python3 finds the first python3 on PATH; the launchers need only the
// standard library. Without one the test skips, or fails when
// EVIDENT_REQUIRE_ALL=1 (internal/testenv).
func python3(t *testing.T) string {
	t.Helper()
	return testenv.Program(t, "python3", "python3", "the workspace launchers are Python 3 scripts")
}

// launchWS is an `evident arc init` workspace playing on a local server.
type launchWS struct {
	t   *testing.T
	py  string
	bin string
	dir string
}

// newLaunchWS starts a local game server, inits a workspace for it with the
// built binary, writes game's reference model over the Starlark stubs and
// starts the game with the workspace's client.
func newLaunchWS(t *testing.T, game string) *launchWS {
	t.Helper()
	py := python3(t)
	bin := evidentBin(t)
	h := httptest.NewServer(games.NewServer(games.Config{}))
	t.Cleanup(h.Close)
	dir := filepath.Join(t.TempDir(), "ws")
	if out, err := exec.Command(bin, "arc", "init", dir, "--server", h.URL).CombinedOutput(); err != nil {
		t.Fatalf("arc init: %v\n%s", err, out)
	}
	if err := games.WriteModel(game, dir); err != nil {
		t.Fatal(err)
	}
	w := &launchWS{t: t, py: py, bin: bin, dir: dir}
	if out, code := w.run("client", "client.py", "start", game); code != 0 {
		t.Fatalf("client.py start: exit %d\n%s", code, out)
	}
	return w
}

// runAll runs `python3 SCRIPT ARGS` in the workspace folder dir and returns
// stdout, stderr and the exit status.
func (w *launchWS) runAll(dir, script string, args ...string) (string, string, int) {
	w.t.Helper()
	cmd := exec.Command(w.py, append([]string{script}, args...)...)
	cmd.Dir = filepath.Join(w.dir, dir)
	cmd.Env = append(os.Environ(), "EVIDENT_BIN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// run runs `python3 SCRIPT ARGS` in dir (relative to the workspace) and
// returns its stdout and exit status; stderr must stay empty (errors go to
// stdout, as baseline1's scripts print them).
func (w *launchWS) run(dir, script string, args ...string) (string, int) {
	w.t.Helper()
	stdout, stderr, code := w.runAll(dir, script, args...)
	if stderr != "" {
		w.t.Errorf("%s %q wrote to stderr:\n%s", script, args, stderr)
	}
	return stdout, code
}

// patch replaces old by new in one workspace file (which must contain it).
func (w *launchWS) patch(file, old, new string) {
	w.t.Helper()
	p := filepath.Join(w.dir, file)
	b, err := os.ReadFile(p)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		w.t.Fatalf("%s does not contain %q (%v)", file, old, err)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// trekActions is trek's available_actions line as baseline1's client
// prints it.
const trekActions = "available_actions_next: [1(ACTION1, usual semantics: up), 2(ACTION2, usual semantics: down), " +
	"3(ACTION3, usual semantics: left), 4(ACTION4, usual semantics: right)]\n"

// stepSummary is baseline1's print_step_summary for step k of an attempt
// folder: step_index k (the attempt is the game's first), no animation.
func stepSummary(k int, state, level, action, actions, dir string) string {
	p := fmt.Sprintf("step_%04d", k)
	return fmt.Sprintf("step: %d\nstate: %s\nlevel: %s\naction: %s\n%spath: %s\nfiles:\n  %s_metadata.json\n  %s_final.png\n  %s_final.txt\n",
		k, state, level, action, actions, dir, p, p, p)
}

func TestLaunchersPrintBaseline1Lines(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	w := newLaunchWS(t, games.Trek.ID)
	sess := filepath.Join(w.dir, "client", "session")
	l1 := filepath.Join(sess, "level_01_attempt_01")

	t.Run("verify_world_model.py on the opening frame prints level 1 verified and the summary, prefixed", func(t *testing.T) {
		out, code := w.run(".", "verify_world_model.py")
		want := "verify_world_model.py: level 1 verified\nverify_world_model.py: levels 1..1 verification passed\n"
		if code != 0 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant exit 0:\n%s", code, out, want)
		}
	})

	// The main planner's plan for level 1, from the opening frame.
	out, code := w.run(".", "run_main_planner.py", "--from-current")
	head, actions, _ := strings.Cut(out, "\n")
	if code != 0 || head != "run_main_planner.py: plan from current state" {
		t.Fatalf("run_main_planner.py: exit %d:\n%s", code, out)
	}
	plan := strings.Fields(actions)
	if len(plan) < 2 {
		t.Fatalf("plan %q: want at least two actions", plan)
	}

	t.Run("plan_executor.py prints running lines, the client's summary after each step and stops on level completion", func(t *testing.T) {
		out, code := w.run(".", "plan_executor.py", plan...)
		var want strings.Builder
		for i, a := range plan {
			k := i + 1
			fmt.Fprintf(&want, "plan_executor.py: running %s\n", a)
			if k < len(plan) {
				want.WriteString(stepSummary(k, "NOT_FINISHED", "1 / 3 (completed: 0)", a, trekActions, l1))
				continue
			}
			// The completing step animates (one intermediate frame,
			// listed before the final one, numbered from _00), and the next
			// level's initial files follow in their own block.
			p := fmt.Sprintf("step_%04d", k)
			want.WriteString(strings.Replace(stepSummary(k, "NOT_FINISHED", "2 / 3 (completed: 1)", a, trekActions, l1),
				"_metadata.json\n", "_metadata.json\n  "+p+"_intermediate_00.png\n  "+p+"_intermediate_00.txt\n", 1))
			fmt.Fprintf(&want, "path: %s\nfiles:\n  initial_metadata.json\n  initial_frame.png\n  initial_frame.txt\n", filepath.Join(sess, "level_02_attempt_01"))
		}
		want.WriteString("plan_executor.py: stopped on level completion\n")
		if code != 0 || out != want.String() {
			t.Fatalf("exit %d, stdout:\n%s\nwant exit 0:\n%s", code, out, want.String())
		}
	})

	t.Run("verify_world_model.py after the level prints both levels verified", func(t *testing.T) {
		out, code := w.run(".", "verify_world_model.py")
		want := "verify_world_model.py: level 1 verified\nverify_world_model.py: level 2 verified\nverify_world_model.py: levels 1..2 verification passed\n"
		if code != 0 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant exit 0:\n%s", code, out, want)
		}
	})

	// Every move now costs two fuel in the model: the bar differs from
	// step 1 of level 1 on.
	w.patch("world_model_engine.star", `s["budget"] = state["budget"] - 1`, `s["budget"] = state["budget"] - 2`)

	t.Run("verify_world_model.py on a wrong model prints the failure prefixed and the mismatch block bare, exit 1", func(t *testing.T) {
		out, code := w.run(".", "verify_world_model.py")
		m := filepath.Join(w.dir, "mismatch_frames", "1")
		want := "verify_world_model.py: verification failed for level 1\n" +
			"Model level 2, replay level 1, attempt 1, replay, step 1: rendered frame mismatch.\n" +
			"real ascii: " + filepath.Join(l1, "step_0001_final.txt") + "\n" +
			"real png: " + filepath.Join(l1, "step_0001_final.png") + "\n" +
			"simulated ascii: " + filepath.Join(m, "simulated_frame.txt") + " (predicted frame as text)\n" +
			"simulated png: " + filepath.Join(m, "simulated_frame.png") + " (predicted frame rendered)\n" +
			"mismatch region png: " + filepath.Join(m, "mismatch_region.png") + " (localized mismatch neighborhoods)\n" +
			"mismatch as magneta png: " + filepath.Join(m, "mismatch_as_magneta.png") + " (full frame with magenta mismatch pixels)\n"
		if code != 1 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant exit 1:\n%s", code, out, want)
		}
		for _, f := range []string{"simulated_frame.txt", "simulated_frame.png", "mismatch_region.png", "mismatch_as_magneta.png"} {
			if _, err := os.Stat(filepath.Join(m, f)); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("plan_executor.py with a wrong model prints the frame mismatch block and exits 1", func(t *testing.T) {
		// Level 2 has no step yet, so the replay check passes and the
		// first action's prediction is wrong.
		l2 := filepath.Join(sess, "level_02_attempt_01")
		m := filepath.Join(w.dir, "mismatch_frames", "2")
		out, code := w.run(".", "plan_executor.py", plan[0], plan[1])
		k := len(plan) + 1
		want := "plan_executor.py: running " + plan[0] + "\n" +
			strings.Replace(stepSummary(1, "NOT_FINISHED", "2 / 3 (completed: 1)", plan[0], trekActions, l2), "step: 1\n", fmt.Sprintf("step: %d\n", k), 1) +
			"plan_executor.py: frame mismatch detected\n" +
			"real ascii: " + filepath.Join(l2, "step_0001_final.txt") + "\n" +
			"real png: " + filepath.Join(l2, "step_0001_final.png") + "\n" +
			"simulated ascii: " + filepath.Join(m, "simulated_frame.txt") + " (predicted frame as text)\n" +
			"simulated png: " + filepath.Join(m, "simulated_frame.png") + " (predicted frame rendered)\n" +
			"mismatch region png: " + filepath.Join(m, "mismatch_region.png") + " (localized mismatch neighborhoods)\n" +
			"mismatch as magneta png: " + filepath.Join(m, "mismatch_as_magneta.png") + " (full frame with magenta mismatch pixels)\n" +
			"plan_executor.py: mismatch after action\n"
		if code != 1 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant exit 1:\n%s", code, out, want)
		}
	})

	t.Run("plan_executor.py refuses RESET before sending anything", func(t *testing.T) {
		out, code := w.run(".", "plan_executor.py", plan[0], "RESET")
		if code != 1 || !strings.HasPrefix(out, "plan_executor.py: RESET refused (action 2 of the plan)") || strings.Count(out, "\n") != 1 {
			t.Fatalf("exit %d, stdout:\n%s", code, out)
		}
	})

	t.Run("plot_initial_full_frames.py prints the PNGs it wrote; without frames it says so", func(t *testing.T) {
		out, code := w.run(".", "plot_initial_full_frames.py")
		if want := "plot_initial_full_frames.py: no initial_full_frames/level_*.txt files found\n"; code != 0 || out != want {
			t.Fatalf("exit %d, stdout %q, want %q", code, out, want)
		}
		full := filepath.Join(w.dir, "initial_full_frames")
		b, _ := os.ReadFile(filepath.Join(l1, "initial_frame.txt"))
		for _, n := range []string{"level_2.txt", "level_10.txt"} {
			if err := os.WriteFile(filepath.Join(full, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, code = w.run(".", "plot_initial_full_frames.py")
		// sorted() of the names: level_10 before level_2.
		want := "plot_initial_full_frames.py: wrote PNG files\n" + filepath.Join(full, "level_10.png") + "\n" + filepath.Join(full, "level_2.png") + "\n"
		if code != 0 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
		}
	})

	t.Run("client/ascii_to_png.py prints the PNG path; a missing input is an error on stdout", func(t *testing.T) {
		out, code := w.run("client", "ascii_to_png.py", "session/level_01_attempt_01/initial_frame.txt", "--output", "x/frame.png", "--scale", "2")
		want := filepath.Join(w.dir, "client", "x", "frame.png") + "\n"
		if code != 0 || out != want {
			t.Fatalf("exit %d, stdout %q, want %q", code, out, want)
		}
		assertPNGSize(t, strings.TrimSpace(out), 128, 128)
		out, code = w.run("client", "ascii_to_png.py", "nope.txt")
		if want := "Input file not found: " + filepath.Join(w.dir, "client", "nope.txt") + "\n"; code != 1 || out != want {
			t.Fatalf("exit %d, stdout %q, want %q", code, out, want)
		}
	})
}

func TestLaunchersTakeBaseline1ClientForms(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	w := newLaunchWS(t, games.Lights.ID)
	l1 := filepath.Join(w.dir, "client", "session", "level_01_attempt_01")
	lightsActions := "available_actions_next: [6(ACTION6, usual semantics: coordinate action)]\n"
	// (0, 0) is off the board: nothing changes, the model predicts it.
	t.Run("client.py move ACTION6 --x X --y Y sends the click and prints the summary", func(t *testing.T) {
		out, code := w.run("client", "client.py", "move", "ACTION6", "--x", "0", "--y", "0")
		if want := stepSummary(1, "NOT_FINISHED", "1 / 3 (completed: 0)", "ACTION6", lightsActions, l1); code != 0 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
		}
	})
	t.Run("client.py move ACTION6 X Y is accepted too", func(t *testing.T) {
		out, code := w.run("client", "client.py", "move", "ACTION6", "1", "0")
		if want := stepSummary(2, "NOT_FINISHED", "1 / 3 (completed: 0)", "ACTION6", lightsActions, l1); code != 0 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
		}
	})
	t.Run("plan_executor.py prints ACTION6 as compact JSON", func(t *testing.T) {
		out, code := w.run(".", "plan_executor.py", `{"name": "ACTION6", "x": 0, "y": 1}`)
		want := `plan_executor.py: running {"name":"ACTION6","x":0,"y":1}` + "\n" +
			stepSummary(3, "NOT_FINISHED", "1 / 3 (completed: 0)", "ACTION6", lightsActions, l1) +
			"plan_executor.py: sequence executed without mismatch\n"
		if code != 0 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
		}
	})
	t.Run("client.py status prints the last step's summary under baseline1's header", func(t *testing.T) {
		out, code := w.run("client", "client.py", "status")
		want := "Last step information:\n" + stepSummary(3, "NOT_FINISHED", "1 / 3 (completed: 0)", "ACTION6", lightsActions, l1)
		if code != 0 || out != want {
			t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
		}
	})
}
