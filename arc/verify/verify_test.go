package verify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"evident/arc/frame"
	"evident/arc/internal/dotgame"
	"evident/arc/worldmodel"
)

// patch returns the reference model file name with old replaced by new
// (once; the test fails when old is absent).
func patch(t *testing.T, name, old, new string) string {
	t.Helper()
	src := string(dotgame.Model(name))
	if !strings.Contains(src, old) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	return strings.Replace(src, old, new, 1)
}

const toggle = `s["color"] = 12 if state["color"] == 9 else 9`

func TestVerifyPasses(t *testing.T) {
	ws := workspace(t, fixtureScript, nil)
	out, err := runVerify(t, ws, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, out, "level 1 verified\nlevel 2 verified\nlevels 1..2 verification passed\n")
	if _, err := os.Stat(filepath.Join(ws, MismatchDir)); !os.IsNotExist(err) {
		t.Errorf("a passing run created %s", MismatchDir)
	}
}

func TestFrameMismatch(t *testing.T) {
	ws := workspace(t, fixtureScript, map[string]string{
		worldmodel.EngineFile: patch(t, worldmodel.EngineFile, toggle, "pass"),
	})
	want := `verification failed for level 1
Model level 2, replay level 1, attempt 1, replay, step 3: rendered frame mismatch.
real ascii: $WS/client/session/level_01_attempt_01/step_0003_final.txt
real png: $WS/client/session/level_01_attempt_01/step_0003_final.png
simulated ascii: $WS/mismatch_frames/$N/simulated_frame.txt (predicted frame as text)
simulated png: $WS/mismatch_frames/$N/simulated_frame.png (predicted frame rendered)
mismatch region png: $WS/mismatch_frames/$N/mismatch_region.png (localized mismatch neighborhoods)
mismatch as magneta png: $WS/mismatch_frames/$N/mismatch_as_magneta.png (full frame with magenta mismatch pixels)
`
	for n := 1; n <= 2; n++ { // a second run claims the next folder
		out, err := runVerify(t, ws, 0)
		checkReport(t, out, strings.ReplaceAll(sub(want, ws), "$N", string(rune('0'+n))))
		var f *Failure
		if !errors.As(err, &f) || f.Kind != FrameMismatch || f.Level != 1 || f.Artifacts == nil || f.Artifacts.N != n {
			t.Fatalf("err = %#v", err)
		}
		if f.Error() != "verification failed for level 1" {
			t.Errorf("Error() = %q", f.Error())
		}
		sim, err := frame.ReadASCIIFile(f.Artifacts.SimulatedASCII)
		if err != nil {
			t.Fatal(err)
		}
		real, _ := frame.ReadASCIIFile(filepath.Join(ws, "client/session/level_01_attempt_01/step_0003_final.txt"))
		if got := frame.Mismatches(real, sim); len(got) != 1 || got[0] != (frame.Cell{X: 12, Y: 32}) || sim.At(12, 32) != dotgame.Dot {
			t.Errorf("simulated frame differs from the real one at %v, want only the dot (12, 32)", got)
		}
		for _, p := range []string{f.Artifacts.SimulatedPNG, f.Artifacts.Region, f.Artifacts.Magneta} {
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				t.Errorf("artifact %s: %v", p, err)
			}
		}
	}
}

func TestStatusMismatch(t *testing.T) {
	ws := workspace(t, fixtureScript, map[string]string{
		worldmodel.EngineFile: patch(t, worldmodel.EngineFile, "        if c == LAVA:\n            return s, GAME_OVER\n", ""),
	})
	out, err := runVerify(t, ws, 0)
	checkReport(t, out, sub(`verification failed for level 1
Model level 2, replay level 1, attempt 1, replay, step 8: predicted status RUNNING, observed GAME_OVER.
real ascii: $WS/client/session/level_01_attempt_01/step_0008_final.txt
`, ws))
	var f *Failure
	if !errors.As(err, &f) || f.Kind != StatusMismatch || f.Artifacts != nil {
		t.Fatalf("err = %#v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, MismatchDir)); !os.IsNotExist(err) {
		t.Errorf("a status mismatch wrote artifacts")
	}
}

func TestInitialFrameMismatch(t *testing.T) {
	ws := workspace(t, fixtureScript, map[string]string{
		worldmodel.StateIOFile: patch(t, worldmodel.StateIOFile, `g.set(state["x"], state["y"], state["color"])`, `g.set(state["x"], state["y"], 7)`),
	})
	out, err := runVerify(t, ws, 0)
	checkReport(t, out, sub(`verification failed for level 1
Model level 2, replay level 1, attempt 1, replay, initial state: rendered initial frame mismatch.
real ascii: $WS/client/session/level_01_attempt_01/initial_frame.txt
real png: $WS/client/session/level_01_attempt_01/initial_frame.png
simulated ascii: $WS/mismatch_frames/1/simulated_frame.txt (predicted frame as text)
simulated png: $WS/mismatch_frames/1/simulated_frame.png (predicted frame rendered)
mismatch region png: $WS/mismatch_frames/1/mismatch_region.png (localized mismatch neighborhoods)
mismatch as magneta png: $WS/mismatch_frames/1/mismatch_as_magneta.png (full frame with magenta mismatch pixels)
`, ws))
	var f *Failure
	if !errors.As(err, &f) || f.Kind != InitialFrameMismatch {
		t.Fatalf("err = %#v", err)
	}
}

// TestOverrideWarning: a renderer that ignores the dot's colour, patched by
// apply_render_overrides, verifies, with one warning per level whose frames
// the overrides change (level 1 at its first ACTION5, level 2 likewise).
func TestOverrideWarning(t *testing.T) {
	io := patch(t, worldmodel.StateIOFile, `g.set(state["x"], state["y"], state["color"])`, `g.set(state["x"], state["y"], DOT)`)
	io = strings.Replace(io, "    return frame\n", "    frame.set(state[\"x\"], state[\"y\"], state[\"color\"])\n    return frame\n", 1)
	ws := workspace(t, fixtureScript, map[string]string{worldmodel.StateIOFile: io})
	out, err := runVerify(t, ws, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, out, `warning: level 1 uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic
level 1 verified
warning: level 2 uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic
level 2 verified
levels 1..2 verification passed
`)

	t.Run("step_count and attempt_index", func(t *testing.T) {
		// An override keyed on (attempt 1, step 3) of level 1 alone: the
		// warning comes once, and step 3 then mismatches.
		io := strings.Replace(string(dotgame.Model(worldmodel.StateIOFile)), "    return frame\n",
			"    if (level_index, attempt_index, step_count) == (1, 1, 3):\n        frame.set(1, 1, 5)\n    return frame\n", 1)
		ws := workspace(t, fixtureScript, map[string]string{worldmodel.StateIOFile: io})
		out, _ := runVerify(t, ws, 0)
		want := "warning: level 1 uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic\n" +
			"verification failed for level 1\nModel level 2, replay level 1, attempt 1, replay, step 3: rendered frame mismatch.\n"
		if !strings.HasPrefix(out, want) {
			t.Errorf("report:\n%s\nwant prefix:\n%s", out, want)
		}
	})
}

func TestTooSlow(t *testing.T) {
	ws := workspace(t, fixtureScript, map[string]string{
		worldmodel.EngineFile: patch(t, worldmodel.EngineFile, "    name = action[\"name\"]\n", "    name = action[\"name\"]\n    while True:\n        pass\n"),
	})
	start := time.Now()
	out, err := runVerify(t, ws, 100*time.Millisecond, func(o *worldmodel.StarlarkOptions) { o.CallSteps = 1 << 62 })
	checkReport(t, out, "Your world model is too slow, please consider refactoring it.\n")
	var f *Failure
	if !errors.As(err, &f) || f.Kind != TooSlow {
		t.Fatalf("err = %#v", err)
	}
	if d := time.Since(start); d > 20*time.Second { // prompt: the loop would never end
		t.Errorf("took %v with a 100ms limit", d)
	}
}

func TestModelFailure(t *testing.T) {
	ws := workspace(t, fixtureScript, map[string]string{
		worldmodel.EngineFile: patch(t, worldmodel.EngineFile, "    name = action[\"name\"]\n", "    name = action[\"nme\"]\n"),
	})
	out, err := runVerify(t, ws, 0)
	want := `Model level 2, replay level 1, attempt 1, replay, step 1: world_model_engine: key "nme" not in dict
Traceback (most recent call last):
  world_model_engine.star:18:18: in world_model_engine
Error: key "nme" not in dict
`
	checkReport(t, out, want)
	var f *Failure
	if !errors.As(err, &f) || f.Kind != ModelFailure {
		t.Fatalf("err = %#v", err)
	}

	t.Run("step limit", func(t *testing.T) {
		ws := workspace(t, fixtureScript, map[string]string{
			worldmodel.StateIOFile: patch(t, worldmodel.StateIOFile, "    g = state[\"bg\"].copy()\n", "    g = state[\"bg\"].copy()\n    for i in range(1000000):\n        pass\n"),
		})
		out, err := runVerify(t, ws, 0, func(o *worldmodel.StarlarkOptions) { o.CallSteps = 50_000 })
		first := "Model level 2, replay level 1, attempt 1, replay, initial state: state_renderer: step limit exceeded: more than 50000 steps in one call\n"
		if !strings.HasPrefix(out, first) || !errors.Is(err, worldmodel.ErrStepLimit) {
			t.Fatalf("report:\n%s\nerr %v", out, err)
		}
	})
}

func TestMissingLevel(t *testing.T) {
	ws := workspace(t, fixtureScript, nil)
	for _, d := range []string{"level_01_attempt_01", "level_01_attempt_02"} {
		if err := os.RemoveAll(filepath.Join(ws, "client/session", d)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runVerify(t, ws, 0)
	checkReport(t, out, "No level-1 attempts found in the latest session.\n")
	var f *Failure
	if !errors.As(err, &f) || f.Kind != MissingLevel {
		t.Fatalf("err = %#v", err)
	}
}
