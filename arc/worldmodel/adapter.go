package worldmodel

import (
	_ "embed"
	"os"
	"path/filepath"
	"strings"
)

// The Python adapter (adapter/evident_adapter.py): a program speaking the
// subprocess protocol that runs a seed-style Python world model
// (PythonEngineFile, PythonStateIOFile, PythonPlannerFile) unchanged.
const (
	// AdapterFile is the adapter's file name.
	AdapterFile = "evident_adapter.py"
	// AdapterPlaceholder in SubprocessOptions.Command is replaced by the
	// path of the embedded adapter, written to a temporary folder.
	AdapterPlaceholder = "{adapter}"
	// PythonCommand as the whole SubprocessOptions.Command is short for
	// PythonCommandLine.
	PythonCommand = "python"
	// PythonCommandLine runs the embedded adapter with the python3 on PATH.
	PythonCommandLine = "python3 " + AdapterPlaceholder
)

// File names of a Python world model inside the workspace (seed 003); the
// adapter loads them as the modules world_model_engine, world_model_state_io
// and world_model_main_planner.
const (
	PythonEngineFile  = "world_model_engine.py"
	PythonStateIOFile = "world_model_state_io.py"
	PythonPlannerFile = "world_model_main_planner.py"
)

//go:embed adapter/evident_adapter.py
var adapterSource []byte

// AdapterSource returns the source of the Python adapter.
func AdapterSource() []byte { return append([]byte(nil), adapterSource...) }

// WriteAdapter writes the Python adapter into dir as AdapterFile and returns
// its path.
func WriteAdapter(dir string) (string, error) {
	p := filepath.Join(dir, AdapterFile)
	if err := os.WriteFile(p, adapterSource, 0o644); err != nil {
		return "", err
	}
	return p, nil
}

// expandCommand resolves PythonCommand and AdapterPlaceholder: it writes the
// adapter to a new temporary folder when the command needs it and returns
// that folder ("" when none was made).
func expandCommand(command string) (string, string, error) {
	if strings.TrimSpace(command) == PythonCommand {
		command = PythonCommandLine
	}
	if !strings.Contains(command, AdapterPlaceholder) {
		return command, "", nil
	}
	dir, err := os.MkdirTemp("", "evident-adapter-")
	if err != nil {
		return "", "", err
	}
	p, err := WriteAdapter(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return strings.ReplaceAll(command, AdapterPlaceholder, shellQuote(p)), dir, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
