package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedRunKeepsOldOutputs: every output flag is written the way judge
// --out is (outputs, createOutput): a run that fails after its outputs were
// opened — here the turn table's CSV has a quote that swallows the lines
// after it, which stops the first pass — leaves the old --out, --rejects and
// --summary-log files as they were and no pending file beside them; the
// same run on a good table replaces all three.
func TestFailedRunKeepsOldOutputs(t *testing.T) {
	dir := t.TempDir()
	old := map[string]string{"out": "old records\n", "rejects": "old rejects\n", "summary-log": "old sidecar\n"}
	paths := map[string]string{}
	for flag, text := range old {
		paths[flag] = filepath.Join(dir, flag+".jsonl")
		if err := os.WriteFile(paths[flag], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, "turns.csv")
	if err := os.WriteFile(bad, []byte("turn_id,session_id,character_id,model_id,user_message,reply_text\n"+
		"T-1,S-1,CHR-0001,m,안녕,그래.\n"+
		"T-2,S-1,CHR-0001,m,안녕,\"그래\n"+
		"T-3,S-1,CHR-0001,m,안녕,그래.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"judge", "--cards", filepath.Join(seedDir, "cards.json"), "--lexicon", filepath.Join(seedDir, "lexicon.csv"),
		"--out", paths["out"], "--rejects", paths["rejects"], "--summary-log", paths["summary-log"]}
	_, _, err := evident(t, append(args, "--turns", bad)...)
	if err == nil || !strings.Contains(err.Error(), "a quoted cell") {
		t.Fatalf("err = %v, want the unclosed quote's error", err)
	}
	for flag, text := range old {
		if b, err := os.ReadFile(paths[flag]); err != nil || string(b) != text {
			t.Errorf("--%s after a failed run: %q, %v; want the old %q", flag, b, err, text)
		}
	}
	if got := names(t, dir); len(got) != 4 {
		t.Errorf("files in the folder after a failed run: %v, want the three outputs and the table", got)
	}

	if _, _, err := evident(t, append(args, "--turns", filepath.Join(seedDir, "turns.jsonl"))...); err != nil {
		t.Fatal(err)
	}
	if n := lineCount(t, paths["out"]); n != 8 {
		t.Errorf("--out has %d lines after a good run, want the seed's 8 records", n)
	}
	if n := lineCount(t, paths["summary-log"]); n != 8 {
		t.Errorf("--summary-log has %d lines after a good run, want 8", n)
	}
	if b, _ := os.ReadFile(paths["rejects"]); len(b) != 0 {
		t.Errorf("--rejects after a good run of the seed: %q, want empty", b)
	}
}
