package main

// baseline1's "Useful Python helpers" (ewma_sv_v1.6 main_prompt.md) in an
// `evident arc init --python` workspace: the agent's own Python imports
// session_tools, state_reconstruction_tools, frame_plot_lib, game_status
// and load_initial_full_frame and reads a session the workspace's client
// recorded against the local server.

import (
	"bytes"
	"image/color"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/frame"
	"evident/arc/games"
)

// counterModel is a numpy model for any game: the state keeps the initial
// frame and the names of the actions taken, the renderer draws the frame.
var counterModel = map[string]string{
	"world_model_state_io.py": "import numpy as np\n\n" +
		"def initial_state_reconstruction(level_index, initial_frame):\n" +
		"    return {\"level\": int(level_index), \"frame\": np.array(initial_frame, dtype=np.int16), \"moves\": []}\n\n" +
		"def state_renderer(state):\n    return state[\"frame\"]\n",
	"world_model_engine.py": "from game_status import RUNNING\n\n" +
		"def world_model_engine(state, action):\n" +
		"    return {\"level\": state[\"level\"], \"frame\": state[\"frame\"], \"moves\": state[\"moves\"] + [action[\"name\"]]}, RUNNING\n",
}

// helperScript prints one line per fact checked.
const helperScript = `
import json, shutil
from pathlib import Path
import numpy as np
from session_tools import read_all_attempts_for_level, read_attempt_for_level, read_current_attempt, get_current_level_id
from state_reconstruction_tools import reconstruct_initial_state, reconstruct_current_state, reconstruct_state, simulate_actions
from frame_plot_lib import save_ascii_frame_png, save_mismatch_region_png_v1, save_mismatch_as_magneta_png_v2
from game_status import RUNNING, LEVEL_COMPLETED, GAME_OVER
from load_initial_full_frame import load_initial_full_frame
from world_model_state_io import initial_state_reconstruction
from world_model_engine import world_model_engine

atts = read_all_attempts_for_level(1)
print("attempts", len(atts), [a["attempt_index"] for a in atts], [len(a["steps"]) for a in atts])
a = read_attempt_for_level(1, 1)
print("actions", json.dumps([s["action"] for s in a["steps"]]))
print("status", a["steps"][0]["observed_status"], a["status"], RUNNING, LEVEL_COMPLETED, GAME_OVER)
print("frame", a["initial_frame"].shape, a["initial_frame"].dtype, a["steps"][0]["final_frame"].shape)
print("row0", "".join("%X" % v for v in a["steps"][1]["final_frame"][0]))
print("files", a["steps"][1]["final_frame_filename"], a["initial_frame_png_filename"])
print("attempt keys", sorted(a))
print("step keys", sorted(a["steps"][0]))
print("step_index", a["steps"][1]["metadata"]["step_index"])
cur = read_current_attempt()
print("current", cur["level_index"], cur["attempt_index"], get_current_level_id())
# The model's own state: reconstruction, then the engine, by hand.
by_hand = initial_state_reconstruction(1, atts[1]["initial_frame"])
by_hand = world_model_engine(by_hand, {"name": "ACTION4"})[0]
st = reconstruct_current_state()
print("current state", st["moves"], st["level"], st["moves"] == by_hand["moves"] and bool((st["frame"] == by_hand["frame"]).all()))
print("state 1 1 1", reconstruct_state(1, 1, 1)["moves"], reconstruct_state(1, 1, 2)["moves"])
st0 = reconstruct_initial_state(1)
print("initial", st0["moves"], bool((st0["frame"] == a["initial_frame"]).all()))
s, status = simulate_actions(st0, [{"name": "ACTION3"}, {"name": "ACTION1"}])
print("simulated", s["moves"], status)
real = a["steps"][0]["final_frame"]
pred = real.copy()
pred[0, 0] = (int(pred[0, 0]) + 1) % 16
print("png", save_ascii_frame_png(real, Path("plots/frame.png"), scale=2))
print("png", save_ascii_frame_png(real[:3, :5], "plots/part.png"))
print("png", save_mismatch_region_png_v1(real, pred, Path("plots/region.png")))
print("png", save_mismatch_as_magneta_png_v2(real, pred, Path("plots/magenta.png"), scale=1))
print("full frame", load_initial_full_frame(1))
Path("initial_full_frames/level_3.txt").write_bytes(b"\xef\xbb\xbf0123\n4567\n")
try:
    load_initial_full_frame(3)
except ValueError as e:
    print("bom", e)
# evident's older recordings: action ids as ints.
tmp = Path("old-format")  # in the test's workspace, removed with it
shutil.copytree("client/session", tmp / "session")
m = tmp / "session" / "level_01_attempt_01" / "step_0002_metadata.json"
d = json.loads(m.read_text())
d["action_input"]["id"] = 2
m.write_text(json.dumps(d))
print("int id", read_attempt_for_level(1, 1, session_dir=tmp / "session")["steps"][1]["action"])
`

func TestPythonHelpersReadTheSession(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	py := strings.Fields(pythonCmd(t))[0]
	launcher := python3(t)
	bin := evidentBin(t)
	h := httptest.NewServer(games.NewServer(games.Config{}))
	t.Cleanup(h.Close)
	dir := filepath.Join(t.TempDir(), "ws")
	if out, err := exec.Command(bin, "arc", "init", "--python", dir, "--server", h.URL).CombinedOutput(); err != nil {
		t.Fatalf("arc init: %v\n%s", err, out)
	}
	for n, src := range counterModel {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &launchWS{t: t, py: launcher, bin: bin, dir: dir}
	// Level 1: attempt 1 with ACTION1, ACTION2; RESET; attempt 2 with ACTION4.
	for _, args := range [][]string{{"start", games.Trek.ID}, {"move", "ACTION1"}, {"move", "ACTION2"}, {"move", "RESET"}, {"move", "ACTION4"}} {
		if out, code := w.run("client", "client.py", args...); code != 0 {
			t.Fatalf("client.py %q: exit %d\n%s", args, code, out)
		}
	}
	cmd := exec.Command(py, "-c", helperScript)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	l1 := filepath.Join(dir, "client", "session", "level_01_attempt_01")
	step2, err := os.ReadFile(filepath.Join(l1, "step_0002_final.txt"))
	if err != nil {
		t.Fatal(err)
	}
	row0, _, _ := strings.Cut(string(step2), "\n")
	want := strings.Join([]string{
		"attempts 2 [1, 2] [2, 1]",
		`actions [{"name": "ACTION1"}, {"name": "ACTION2"}]`,
		"status RUNNING RUNNING RUNNING LEVEL_COMPLETED GAME_OVER",
		"frame (64, 64) int16 (64, 64)",
		"row0 " + row0,
		"files " + filepath.Join(l1, "step_0002_final.txt") + " " + filepath.Join(l1, "initial_frame.png"),
		"attempt keys ['attempt_index', 'initial_frame', 'initial_frame_filename', 'initial_frame_png_filename', 'initial_metadata', 'level_index', 'path', 'status', 'steps']",
		"step keys ['action', 'final_frame', 'final_frame_filename', 'final_frame_png_filename', 'intermediate_frame_filenames', 'intermediate_frame_png_filenames', 'metadata', 'observed_status']",
		"step_index 2",
		"current 1 2 1",
		"current state ['ACTION4'] 1 True",
		"state 1 1 1 ['ACTION1'] ['ACTION1', 'ACTION2']",
		"initial [] True",
		"simulated ['ACTION3', 'ACTION1'] RUNNING",
		"png plots/frame.png",
		"png plots/part.png",
		"png plots/region.png",
		"png plots/magenta.png",
		"full frame None",
		"bom " + filepath.Join(dir, "initial_full_frames", "level_3.txt") + ":1:1: a byte-order mark (U+FEFF) is not a hex digit 0-F",
		`int id {'name': 'ACTION2'}`,
	}, "\n") + "\n"
	if stdout.String() != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", stdout.String(), want, stderr.String())
	}
	plots := filepath.Join(dir, "plots")
	assertPNGSize(t, filepath.Join(plots, "frame.png"), 128, 128)
	assertPNGSize(t, filepath.Join(plots, "part.png"), 40, 24)
	// Cell (0, 0) differs: the region picture keeps the real colours near
	// it and is brown far away; the magenta one paints that cell only.
	g, err := frame.ReadASCIIFile(filepath.Join(l1, "step_0001_final.txt"))
	if err != nil {
		t.Fatal(err)
	}
	region := assertPNGSize(t, filepath.Join(plots, "region.png"), 512, 512)
	magenta := assertPNGSize(t, filepath.Join(plots, "magenta.png"), 64, 64)
	for _, c := range []struct {
		name string
		got  color.Color
		want color.RGBA
	}{
		{"region at the mismatch", region.At(0, 0), frame.ColorOf(g.At(0, 0))},
		{"region 7 cells away", region.At(7*8+4, 4), frame.ColorOf(g.At(7, 0))},
		{"region far away", region.At(63*8, 63*8), color.RGBA{139, 69, 19, 255}},
		{"magenta at the mismatch", magenta.At(0, 0), color.RGBA{255, 0, 255, 255}},
		{"magenta next to it", magenta.At(1, 0), frame.ColorOf(g.At(1, 0))},
	} {
		r, g, b, _ := c.got.RGBA()
		if uint8(r>>8) != c.want.R || uint8(g>>8) != c.want.G || uint8(b>>8) != c.want.B {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
