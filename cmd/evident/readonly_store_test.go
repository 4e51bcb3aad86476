package main

import (
	"context"
	"database/sql"
	"evident/store"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadCommandsNeverWait: report and review export open the store
// read-only (issue 13: `report` failed after 10 s because opening the store
// took the write lock while an import ran). Here another connection holds
// the write lock, with a row written, for the whole test.
func TestReadCommandsNeverWait(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "e.db")
	if _, _, err := webCLI(ctx, t, "import", "--demo", "--db", dbPath); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", dbPath+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	if _, err := conn.ExecContext(ctx, "INSERT INTO decision (queue, key, value, who, decided_at) VALUES ('ending', '쇼', 'add', 'w', 'x')"); err != nil {
		t.Fatal(err)
	}

	t.Run("report writes the run while another writer holds the lock", func(t *testing.T) {
		out := filepath.Join(dir, "r.html")
		if _, _, err := webCLI(ctx, t, "report", "--db", dbPath, "--html", out); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "설정대로 말함") {
			t.Fatalf("report %.80q, %v", b, err)
		}
	})
	t.Run("review export answers while another writer holds the lock, without the uncommitted decision", func(t *testing.T) {
		out, _, err := webCLI(ctx, t, "review", "export", "--db", dbPath)
		if err != nil || out != "" {
			t.Fatalf("export %q, %v", out, err)
		}
	})
}

// TestReadCommandsOnReadOnlyStore: report, review export and eval work on
// a store the user may only read (file 0444 in a directory 0555). As root
// permissions do not bind, so the commands run as nobody (uid 65534) in a
// child process; otherwise as this user.
func TestReadCommandsOnReadOnlyStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	base, err := os.MkdirTemp("", "evident-ro-cmd-")
	if err != nil {
		t.Fatal(err)
	}
	storeDir, outDir := filepath.Join(base, "store"), filepath.Join(base, "out")
	t.Cleanup(func() {
		os.Chmod(storeDir, 0o755)
		os.RemoveAll(base)
	})
	for _, d := range []string{storeDir, outDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(base, 0o755)
	os.Chmod(outDir, 0o777)
	dbPath := filepath.Join(storeDir, "e.db")
	if _, _, err := webCLI(ctx, t, "import", "--demo", "--db", dbPath); err != nil {
		t.Fatal(err)
	}
	gold := filepath.Join(outDir, "gold.jsonl")
	if err := os.WriteFile(gold, []byte(`{"turn_id":"T-0001","verdict":"설정대로 말함"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := os.Args[0]
	if os.Getuid() == 0 {
		bin = filepath.Join(base, "evident.test")
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dbPath, 0o444)
	os.Chmod(storeDir, 0o555)
	evidentAs := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, "-test.run=^TestEvidentMain$")
		cmd.Env = append(os.Environ(), "EVIDENT_TEST_MAIN="+strings.Join(args, "\n"), "TMPDIR="+outDir)
		if os.Getuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	report := filepath.Join(outDir, "r.html")
	if _, errOut, err := evidentAs("report", "--db", dbPath, "--html", report); err != nil {
		t.Fatalf("report: %v (%s)", err, errOut)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "117회차") {
		t.Fatalf("report %.80q, %v", b, err)
	}
	if out, errOut, err := evidentAs("review", "export", "--db", dbPath); err != nil || out != "" {
		t.Fatalf("review export %q, %v (%s)", out, err, errOut)
	}
	out, errOut, err := evidentAs("eval", "--db", dbPath, "--gold", gold, "--json")
	if err != nil || !strings.Contains(out, `"run": 1`) || !strings.Contains(out, `"gold_not_stored": "the store can only be read here"`) ||
		!strings.Contains(errOut, "gold labels not stored") {
		t.Fatalf("eval: %v\nstdout %.300q\nstderr %q", err, out, errOut)
	}
	// the text report says so on stdout too, not "(stored)"
	out, errOut, err = evidentAs("eval", "--db", dbPath, "--gold", gold)
	if err != nil || !strings.Contains(out, "gold labels from "+gold+" (not stored: the store can only be read here)") {
		t.Fatalf("eval: %v\nstdout %.300q\nstderr %q", err, out, errOut)
	}
	// the store and its search sidecar (written with it, before the reads)
	entries, _ := os.ReadDir(storeDir)
	if len(entries) != 2 || entries[0].Name() != "e.db" || entries[1].Name() != filepath.Base(store.SidePath(dbPath)) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the store directory holds %q, want only e.db and e.db-search", names)
	}
}
