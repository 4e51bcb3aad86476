package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArcModelMemoryFlag: --model-memory sets the Starlark world model's
// memory limit (in MiB) and the message names it; --sandbox takes only its
// three modes.
func TestArcModelMemoryFlag(t *testing.T) {
	ws := fixture(t)
	engine := `
def world_model_engine(state, action):
    x = "ab"
    for i in range(40):
        x = x + x
    return state, RUNNING
`
	if err := os.WriteFile(filepath.Join(ws, "world_model_engine.star"), []byte(engine), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := arc(t, "verify", "--workspace", ws, "--model-memory", "32")
	if code != 1 || !strings.Contains(out, "made the heap grow by more than 32 MiB (StarlarkOptions.MemoryLimit)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if _, errOut, code := arc(t, "verify", "--workspace", ws, "--model-cmd", "true", "--sandbox", "nope"); code != 2 || !strings.Contains(errOut, `--sandbox "nope": want auto, bwrap or off`) {
		t.Fatalf("--sandbox nope: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := arc(t, "verify", "--workspace", ws, "--model-memory", "-1"); code != 2 || !strings.Contains(errOut, "--model-memory must be 0 or more MiB") {
		t.Fatalf("--model-memory -1: exit %d, stderr %q", code, errOut)
	}
}
