package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestArcResultsOfNoRun: a run folder that holds no run is an error naming
// the file, and nothing (no empty table) is printed on stdout.
func TestArcResultsOfNoRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	out, errOut, code := arc(t, "results", dir)
	if code != 1 || out != "" || !strings.Contains(errOut, filepath.Join(dir, "client", "client_state.json")) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
