package agent

import (
	"embed"
	"errors"
	"evident/internal/file"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed prompts
var embeddedPrompts embed.FS

// PromptFiles are the prompt files the controller reads (issue 11 item 2),
// in evident's own wording for evident's workspace; --prompts DIR replaces
// any of them by a file of the same name in DIR. main.md is used only when
// the workspace has no main_prompt.md (written by evident arc init, stating
// the seed's rules for the workspace's model kind).
var PromptFiles = []string{
	"main.md", "continuation.txt", "continuation_level1.txt", "continuation_later.txt",
	"death.txt", "new_level.txt", "stuck.txt", "trouble1.txt", "trouble1_level1.txt",
	"trouble2.txt", "trouble2_level1.txt", "recovery.txt", "client_output.txt", "reset_output.txt",
	"simplification_level1.txt",
	"simplification_engine_1.txt", "simplification_engine_2.txt", "simplification_engine_3.txt",
	"simplification_state_io_1.txt", "simplification_state_io_2.txt", "simplification_state_io_3.txt",
	"simplification_planner.txt",
}

// SimplificationLater are the simplification turns from level 2 on, in
// order (baseline1 secure_baseline1 agent.py hard_refactoring_pgroup:
// engine ×3, state_io ×3, planner); level 1 has simplification_level1.
var SimplificationLater = []string{
	"simplification_engine_1", "simplification_engine_2", "simplification_engine_3",
	"simplification_state_io_1", "simplification_state_io_2", "simplification_state_io_3",
	"simplification_planner",
}

// Prompts maps a prompt's name (the file name without extension) to its
// text, trimmed of surrounding space as baseline1's load_prompt does.
type Prompts map[string]string

// maxPromptBytes caps one prompt file (1 MiB).
const maxPromptBytes = 1 << 20

// LoadPrompts reads the embedded prompts, then overrides each with
// dir/NAME when dir is not "" and the file exists; then, when ws is not "",
// "main" becomes ws/main_prompt.md if that exists. {{ENGINE}}, {{STATE_IO}}
// and {{PLANNER}} become the model file names of ext (".star" or ".py").
// A file in dir that is not one of PromptFiles is an error naming it (a
// misspelt override would otherwise be ignored silently), as is a file
// over 1 MiB.
func LoadPrompts(dir, ws, ext string) (Prompts, error) {
	p := Prompts{}
	for _, f := range PromptFiles {
		b, err := embeddedPrompts.ReadFile("prompts/" + f)
		if err != nil {
			return nil, fmt.Errorf("agent: built-in prompt %s: %w", f, err)
		}
		p[strings.TrimSuffix(f, filepath.Ext(f))] = string(b)
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("agent: prompts: %w", err)
		}
		known := map[string]bool{}
		for _, f := range PromptFiles {
			known[f] = true
		}
		var unknown []string
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			if !known[e.Name()] {
				unknown = append(unknown, e.Name())
				continue
			}
			b, err := file.ReadCapped(filepath.Join(dir, e.Name()), maxPromptBytes)
			if err != nil {
				return nil, fmt.Errorf("agent: prompts: %w", err)
			}
			p[strings.TrimSuffix(e.Name(), filepath.Ext(e.Name()))] = string(b)
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, fmt.Errorf("agent: prompts %s: unknown file(s) %s; the names are %s", dir, strings.Join(unknown, ", "), strings.Join(PromptFiles, ", "))
		}
	}
	if ws != "" {
		path := filepath.Join(ws, "main_prompt.md")
		b, err := file.ReadCapped(path, maxPromptBytes)
		switch {
		case err == nil:
			if dir == "" || !fileExists(filepath.Join(dir, "main.md")) {
				p["main"] = string(b)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	if ext == "" {
		ext = ".star"
	}
	r := strings.NewReplacer("{{ENGINE}}", "world_model_engine"+ext, "{{STATE_IO}}", "world_model_state_io"+ext, "{{PLANNER}}", "world_model_main_planner"+ext)
	for k, v := range p {
		p[k] = strings.TrimSpace(r.Replace(v))
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
