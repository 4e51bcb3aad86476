package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// arc runs "evident arc ARGS" in-process (arcCommand alone, so the test does
// not depend on main's command list); see runSub.
func arc(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runSub(t, arcCommand(), args...)
}

// fixture copies the dot-game fixture workspace to a temporary folder.
func fixture(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "arc", "verify", "testdata", "dotgame")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestArcVerify(t *testing.T) {
	ws := fixture(t)
	out, errOut, code := arc(t, "verify", "--workspace", ws)
	if code != 0 || out != "level 1 verified\nlevel 2 verified\nlevels 1..2 verification passed\n" || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// Break ACTION5 in the engine: step 3 of level 1 attempt 1 mismatches.
	engine := filepath.Join(ws, "world_model_engine.star")
	src, _ := os.ReadFile(engine)
	broken := strings.Replace(string(src), `s["color"] = 12 if state["color"] == 9 else 9`, `pass`, 1)
	if err := os.WriteFile(engine, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = arc(t, "verify", "--workspace", ws)
	want := strings.ReplaceAll(`verification failed for level 1
Model level 2, replay level 1, attempt 1, replay, step 3: rendered frame mismatch.
real ascii: $WS/client/session/level_01_attempt_01/step_0003_final.txt
real png: $WS/client/session/level_01_attempt_01/step_0003_final.png
simulated ascii: $WS/mismatch_frames/1/simulated_frame.txt (predicted frame as text)
simulated png: $WS/mismatch_frames/1/simulated_frame.png (predicted frame rendered)
mismatch region png: $WS/mismatch_frames/1/mismatch_region.png (localized mismatch neighborhoods)
mismatch as magneta png: $WS/mismatch_frames/1/mismatch_as_magneta.png (full frame with magenta mismatch pixels)
`, "$WS", ws)
	if code != 1 || out != want || errOut != "evident: arc verify: verification failed for level 1\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}

	t.Run("too slow", func(t *testing.T) {
		ws := fixture(t)
		os.WriteFile(filepath.Join(ws, "world_model_engine.star"), []byte("def world_model_engine(state, action):\n    while True:\n        pass\n"), 0o644)
		out, _, code := arc(t, "verify", "--workspace", ws, "--time-limit", "100ms", "--call-steps", "4000000000000")
		if code != 1 || out != "Your world model is too slow, please consider refactoring it.\n" {
			t.Fatalf("exit %d, stdout:\n%s", code, out)
		}
	})

	t.Run("load error", func(t *testing.T) {
		ws := fixture(t)
		os.WriteFile(filepath.Join(ws, "world_model_state_io.star"), []byte("load(\"os\", \"open\")\n"), 0o644)
		out, errOut, code := arc(t, "verify", "--workspace", ws)
		if code != 1 || !strings.HasPrefix(out, `world_model_state_io.star: cannot load os: load of "os" refused`) ||
			errOut != "evident: arc verify: the world model failed to load\n" {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})

	t.Run("no session", func(t *testing.T) {
		ws := t.TempDir()
		for _, n := range []string{"world_model_engine.star", "world_model_state_io.star"} {
			b, _ := os.ReadFile(filepath.Join("..", "..", "arc", "verify", "testdata", "dotgame", n))
			os.WriteFile(filepath.Join(ws, n), b, 0o644)
		}
		_, errOut, code := arc(t, "verify", "--workspace", ws)
		if code != 1 || !strings.Contains(errOut, "client/session") {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
	})
}

func TestArcPlanner(t *testing.T) {
	ws := fixture(t)
	out, _, code := arc(t, "planner", "verify", "--workspace", ws)
	if code != 0 || out != "level 1 verified\nNo completed level-2 attempt found, we skip this level\nlevels 1..1 planner verification passed\n" {
		t.Fatalf("exit %d, stdout:\n%s", code, out)
	}

	for _, c := range []struct {
		args  []string
		first string
		n     int
	}{
		{[]string{"--from-current"}, "plan from current state", 28},
		{[]string{"--from-initial", "1"}, "plan from initial state of level 1", 30},
		{[]string{"--from-attempt", "1", "1", "2"}, "plan from level 1 attempt 1 step 2", 28},
	} {
		out, errOut, code := arc(t, append([]string{"planner", "run", "--workspace", ws}, c.args...)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || lines[0] != c.first || len(lines) != c.n+1 {
			t.Errorf("%v: exit %d, %d lines\nstdout:\n%s\nstderr:\n%s", c.args, code, len(lines), out, errOut)
		}
	}

	for _, args := range [][]string{
		{},
		{"--from-current", "--from-initial", "1"},
		{"--from-attempt", "1", "1"},
		{"--from-current", "extra"},
		{"--from-initial", "0"},
	} {
		_, errOut, code := arc(t, append([]string{"planner", "run", "--workspace", ws}, args...)...)
		if code != 2 || !strings.HasPrefix(errOut, "evident: arc planner run: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}

	out, errOut, code := arc(t, "planner", "run", "--workspace", ws, "--from-attempt", "1", "1", "8")
	if code != 1 || out != "cannot plan from level 1 attempt 1 step 8: the world model's status after step 8 of level 1 attempt 1 is GAME_OVER.\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
