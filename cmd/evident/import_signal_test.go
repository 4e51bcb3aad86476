package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"evident/store"
)

// TestImportSignal: evident import reading its turns from a pipe is
// interrupted by SIGTERM mid-read. It exits 130 (not killed by the signal),
// stores no dataset, and leaves nothing in TMPDIR (issue 15 item 6: import
// had no signal handling at all). The pipe's write end is opened only once
// the import has opened the read end, so the signal is sent while the
// import is running, not by the clock.
func TestImportSignal(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, tmpdir := t.TempDir(), t.TempDir()
	_, cards, lex, _ := judgeFiles(t, dir)
	fifo := filepath.Join(dir, "turns-pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "e.db")
	args := []string{"import", "--turns", fifo, "--cards", cards, "--lexicon", lex, "--db", db}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEvidentMain$")
	cmd.Env = append(os.Environ(), "EVIDENT_TEST_MAIN="+strings.Join(args, "\n"), "TMPDIR="+tmpdir)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once the import has opened it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	row := `{"turn_id":"T%d","session_id":"S","character_id":"C1","model_id":"m","reply_text":"검을 잡아.","first_person":"나","named_entities":[]}` + "\n"
	for i := range 100 {
		if _, err := fmt.Fprintf(w, row, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // the pipe stays open: the import is blocked reading it and ends after the grace period
	if code := cmd.ProcessState.ExitCode(); code != interruptedExit {
		t.Fatalf("exit code %d, want %d (stderr %q)", code, interruptedExit, errOut.String())
	}
	if left := names(t, tmpdir); len(left) > 0 {
		t.Errorf("left in TMPDIR: %q", left)
	}
	if _, err := os.Stat(db); err == nil {
		s, err := store.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ds, err := s.Datasets(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 0 {
			t.Errorf("%d datasets stored by an interrupted import", len(ds))
		}
	}
}
