package workspace

import (
	"embed"
	"encoding/json"
	"evident/internal/file"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

//go:embed templates
var templates embed.FS

// ConfigFile is the workspace config's name, in the workspace root; the
// launchers read it (evident_launch.py).
const ConfigFile = "evident_workspace.json"

// DefaultServerURL is the server a workspace plays on unless
// Options.ServerURL says otherwise: the address `evident arc serve-games`
// listens on by default (127.0.0.1:8001).
const DefaultServerURL = "http://127.0.0.1:8001"

// FullFramesDir is the folder of the agent's reconstructed full initial
// frames, initial_full_frames/level_N.txt (spec arc.md "Vocabulary").
const FullFramesDir = "initial_full_frames"

// Model kinds of Config.Model.
const (
	ModelStarlark = "starlark"
	ModelPython   = "python"
)

// maxConfigBytes caps the config read.
const maxConfigBytes = 1 << 16

// Config is evident_workspace.json: what the launchers need.
type Config struct {
	// EvidentBin is the evident binary the launchers exec (absolute path);
	// $EVIDENT_BIN overrides it.
	EvidentBin string `json:"evident_bin"`
	// ServerURL is the game server's base URL, passed to `arc client
	// start --url`.
	ServerURL string `json:"server_url"`
	// Model is ModelStarlark or ModelPython (the launchers add
	// --model-cmd python).
	Model string `json:"model"`
}

// Options configures Init.
type Options struct {
	// Python writes the seed's Python stubs instead of the Starlark ones.
	Python bool
	// ServerURL is the game server (http or https with a host); empty:
	// DefaultServerURL.
	ServerURL string
	// EvidentBin is the binary the launchers exec, made absolute; empty:
	// "evident" (looked up on PATH at every launch).
	EvidentBin string
}

// PythonHelpers are the modules Init writes with Options.Python for the
// agent's own Python (a REPL, its scripts; not model code, which evident's
// adapter serves its own game_status and load_initial_full_frame): the
// names, signatures and dict keys of baseline1's ewma_sv_v1.6
// workspace_init modules of the same names (its main_prompt.md "Useful
// Python helpers"), evident's code. They need numpy only.
var PythonHelpers = []string{"frame_plot_lib.py", "game_status.py", "load_initial_full_frame.py", "session_tools.py", "state_reconstruction_tools.py"}

// launcher reports whether a template is an executable script.
func launcher(name string) bool {
	return strings.HasSuffix(name, ".py") && !strings.HasPrefix(path.Base(name), "world_model_") && !slices.Contains(PythonHelpers, name)
}

// plan lists the files Init writes for opts: workspace-relative slash path
// → content.
func plan(opts Options) (map[string][]byte, error) {
	files := map[string][]byte{}
	kind := "starlark"
	if opts.Python {
		kind = "python"
	}
	for _, root := range []string{"templates/common", "templates/" + kind} {
		err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := templates.ReadFile(p)
			if err != nil {
				return err
			}
			files[strings.TrimPrefix(p, root+"/")] = b
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	ext, note, desc := ".star", "Starlark files run in evident's sandbox: no files, clock or randomness; `load()` only of the three model files. Run `go doc evident/arc/worldmodel` (or read evident's README) for the built-ins: `grid`, `grid_from_rows`, `load_initial_full_frame`, `bfs`, `RUNNING`, `LEVEL_COMPLETED`, `GAME_OVER`. States are frozen: build new ones (`dict(state)`, `grid.copy()`).",
		"Starlark (a Python dialect) run in evident's sandbox"
	if opts.Python {
		ext, note, desc = ".py", "Python files as baseline1's: `state_renderer` returns a `numpy.ndarray` of shape 64x64, dtype int16; import `RUNNING`, `LEVEL_COMPLETED`, `GAME_OVER` from `game_status` and `load_initial_full_frame` from `load_initial_full_frame` (evident provides both). Model code may import numpy, scipy, sympy, networkx and the standard modules that touch no files, processes or network (sys, time, math, collections, …); file, process and network access are refused. In your own Python (a REPL, scripts in this folder; not in model code) baseline1's helpers work: `from session_tools import read_all_attempts_for_level, read_attempt_for_level, read_current_attempt, get_current_level_id`, `from state_reconstruction_tools import reconstruct_initial_state, reconstruct_current_state, reconstruct_state, simulate_actions`, `from frame_plot_lib import save_ascii_frame_png, save_mismatch_region_png_v1, save_mismatch_as_magneta_png_v2` (run them with a python3 that has numpy).",
			"Python (the seed's world_model_*.py files, run by evident's adapter)"
	}
	r := strings.NewReplacer("{{MODEL_KIND}}", desc, "{{MODEL_NOTE}}", note, "{{EXT}}", ext,
		"{{ENGINE}}", "world_model_engine"+ext, "{{STATE_IO}}", "world_model_state_io"+ext, "{{PLANNER}}", "world_model_main_planner"+ext)
	files["main_prompt.md"] = []byte(r.Replace(string(files["main_prompt.md"])))
	cfg := Config{EvidentBin: opts.EvidentBin, ServerURL: opts.ServerURL, Model: ModelStarlark}
	if opts.Python {
		cfg.Model = ModelPython
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	files[ConfigFile] = append(b, '\n')
	return files, nil
}

// checkServerURL accepts an http(s) URL with a host.
func checkServerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("server URL %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("server URL %q: want http://HOST[:PORT] or https://HOST", s)
	}
	return nil
}

// Init writes the workspace into dir (created if missing) and returns the
// paths it wrote, relative to dir with slashes, sorted (the empty
// initial_full_frames/ folder included, with its trailing slash). It fails
// before writing anything when the server URL is not http(s) with a host or
// when one of the files already exists (the error names it).
func Init(dir string, opts Options) ([]string, error) {
	if opts.ServerURL == "" {
		opts.ServerURL = DefaultServerURL
	}
	if err := checkServerURL(opts.ServerURL); err != nil {
		return nil, err
	}
	if opts.EvidentBin == "" {
		opts.EvidentBin = "evident"
	} else if abs, err := filepath.Abs(opts.EvidentBin); err == nil {
		opts.EvidentBin = abs
	}
	files, err := plan(opts)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%s exists; evident arc init writes only new files (nothing was written)", p)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, FullFramesDir), 0o755); err != nil {
		return nil, err
	}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		mode := os.FileMode(0o644)
		if launcher(n) {
			mode = 0o755
		}
		if err := os.WriteFile(p, files[n], mode); err != nil {
			return nil, err
		}
	}
	out := append(names, FullFramesDir+"/")
	sort.Strings(out)
	return out, nil
}

// ReadConfig reads dir/evident_workspace.json. Errors name the file: a
// missing or unreadable file, one over 64 KiB, bad JSON, or a server URL
// that is not http(s).
func ReadConfig(dir string) (Config, error) {
	var cfg Config
	p := filepath.Join(dir, ConfigFile)
	b, err := file.ReadCapped(p, maxConfigBytes)
	if err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("%s: %w", p, err)
	}
	if err := checkServerURL(cfg.ServerURL); err != nil {
		return cfg, fmt.Errorf("%s: server_url: %w", p, err)
	}
	if cfg.Model != ModelStarlark && cfg.Model != ModelPython {
		return cfg, fmt.Errorf("%s: model %q: want %q or %q", p, cfg.Model, ModelStarlark, ModelPython)
	}
	return cfg, nil
}
