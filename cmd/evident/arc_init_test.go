package main

import (
	"encoding/json"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tree lists dir's files (and empty folders, with a trailing slash),
// relative with slashes, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if ents, _ := os.ReadDir(p); len(ents) == 0 {
				out = append(out, rel+"/")
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// launchers are the workspace's baseline1 entry points (spec arc.md
// "Compatibility facts"), at baseline1's paths.
var launchers = []string{
	"client/ascii_to_png.py", "client/client.py", "evident_launch.py", "plan_executor.py", "plot_initial_full_frames.py",
	"run_aux_planner.py", "run_main_planner.py", "verify_main_planner.py", "verify_world_model.py",
}

func TestArcInit(t *testing.T) {
	common := []string{"client/README.md", "evident_workspace.json", "initial_full_frames/", "main_prompt.md"}
	for _, tc := range []struct {
		name   string
		args   []string
		models []string
		model  string
		server string
	}{
		{"by default it writes the Starlark templates and the local server's URL", nil,
			[]string{"world_model_engine.star", "world_model_main_planner.star", "world_model_state_io.star"}, "starlark", "http://127.0.0.1:8001"},
		{"with --python and --server it writes the seed's Python stubs and that server", []string{"--python", "--server", "https://three.arcprize.org"},
			[]string{"world_model_engine.py", "world_model_main_planner.py", "world_model_state_io.py",
				"frame_plot_lib.py", "game_status.py", "load_initial_full_frame.py", "session_tools.py", "state_reconstruction_tools.py"}, "python", "https://three.arcprize.org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ws")
			stdout, stderr, code := arc(t, append([]string{"init", dir}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want := append(append(append([]string{}, common...), launchers...), tc.models...)
			sort.Strings(want)
			got := tree(t, dir)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// The command lists what it wrote, after its headline.
			if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != len(want)+2 || strings.Join(lines[1:len(want)+1], "\n") != strings.Join(want, "\n") {
				t.Errorf("stdout:\n%s", stdout)
			}
			for _, l := range launchers {
				st, err := os.Stat(filepath.Join(dir, l))
				if err != nil || st.Mode().Perm()&0o111 == 0 {
					t.Errorf("%s: want an executable launcher (%v)", l, err)
				}
			}
			var cfg map[string]string
			b, _ := os.ReadFile(filepath.Join(dir, "evident_workspace.json"))
			if err := json.Unmarshal(b, &cfg); err != nil {
				t.Fatal(err)
			}
			exe, _ := os.Executable()
			exe, _ = filepath.EvalSymlinks(exe)
			if cfg["model"] != tc.model || cfg["server_url"] != tc.server || cfg["evident_bin"] != exe {
				t.Errorf("config %v: want model %s, server %s, evident_bin %s", cfg, tc.model, tc.server, exe)
			}
			prompt, _ := os.ReadFile(filepath.Join(dir, "main_prompt.md"))
			for _, rule := range []string{tc.models[0], "python3 plan_executor.py", "Never send RESET", "never reads the session", "load_initial_full_frame(level_index)", "python3 verify_world_model.py"} {
				if !strings.Contains(string(prompt), rule) {
					t.Errorf("main_prompt.md does not say %q", rule)
				}
			}
			if strings.Contains(string(prompt), "{{") {
				t.Errorf("main_prompt.md keeps a placeholder")
			}
		})
	}
}

func TestArcInitRefuses(t *testing.T) {
	t.Run("an existing file is named and nothing is written", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "client"), 0o755)
		os.WriteFile(filepath.Join(dir, "client", "client.py"), []byte("mine"), 0o644)
		_, stderr, code := arc(t, "init", dir)
		if code != 1 || !strings.Contains(stderr, filepath.Join(dir, "client", "client.py")+" exists") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if got := tree(t, dir); strings.Join(got, ",") != "client/client.py" {
			t.Errorf("tree %v: want only the user's file", got)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "client", "client.py")); string(b) != "mine" {
			t.Errorf("the user's file was changed: %q", b)
		}
	})
	t.Run("a server URL that is not http(s) is an error", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ws")
		_, stderr, code := arc(t, "init", dir, "--server", "127.0.0.1:8001")
		if code != 1 || !strings.Contains(stderr, `server URL "127.0.0.1:8001"`) {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Error("the workspace was created")
		}
	})
}

func TestArcASCIIToPNG(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "f.txt")
	// Two rows of three cells, lower case and a blank line, as baseline1's
	// parse_ascii_grid accepts.
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("0f1\n\n5A9\n"), 0o644)
	stdout, stderr, code := arc(t, "ascii-to-png", in)
	want := filepath.Join(dir, "f.png")
	if code != 0 || stdout != want+"\n" {
		t.Fatalf("exit %d, stdout %q (%s), want %q", code, stdout, stderr, want)
	}
	img := assertPNGSize(t, want, 24, 16)
	// Cell (1, 0) is colour 15, A356D6; cell (1, 1) colour 10, 88D8F1.
	for _, c := range []struct {
		x, y    int
		r, g, b uint32
	}{{8, 0, 0xA3, 0x56, 0xD6}, {15, 15, 0x88, 0xD8, 0xF1}, {0, 8, 0, 0, 0}} {
		r, g, b, _ := img.At(c.x, c.y).RGBA()
		if r>>8 != c.r || g>>8 != c.g || b>>8 != c.b {
			t.Errorf("pixel (%d, %d) = %02X%02X%02X, want %02X%02X%02X", c.x, c.y, r>>8, g>>8, b>>8, c.r, c.g, c.b)
		}
	}
	os.WriteFile(in, []byte("012\n01\n"), 0o644)
	if _, stderr, code := arc(t, "ascii-to-png", in); code != 1 || !strings.Contains(stderr, in) {
		t.Errorf("ragged rows: exit %d, stderr %q: want 1 and the file named", code, stderr)
	}
	if _, stderr, code := arc(t, "ascii-to-png", in, "--scale", "0"); code != 1 || !strings.Contains(stderr, "scale 0") {
		t.Errorf("scale 0: exit %d, stderr %q", code, stderr)
	}
}

// assertPNGSize decodes the PNG at path, checks its size and that it is
// RGB (colour type 2, as baseline1's PIL writes it).
func assertPNGSize(t *testing.T, path string, w, h int) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 26 || b[25] != 2 {
		t.Errorf("%s: PNG colour type %v, want 2 (RGB)", path, b[25:26])
	}
	f, _ := os.Open(path)
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if s := img.Bounds().Size(); s.X != w || s.Y != h {
		t.Errorf("%s: %v, want %dx%d", path, s, w, h)
	}
	return img
}
