package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigTurns is the number of turns in bigInput: several of the first pass's
// sorted runs (16,384 rows each), so a run spills to --tmp, and enough that
// a run cancelled after its first records is cancelled mid-run.
const bigTurns = 60000

// bigInput writes a bigTurns-row judge input into dir (every 1000th row
// names an unknown character, so there are rejects) and returns the table
// arguments.
func bigInput(t *testing.T, dir string) []string {
	t.Helper()
	var b strings.Builder
	for i := range bigTurns {
		char := "C1"
		if i%1000 == 999 {
			char = "nobody"
		}
		fmt.Fprintf(&b, `{"turn_id":"T%d","session_id":"S%d","character_id":"%s","model_id":"m","reply_text":"검을 잡아. 선거 얘기는 하지 마.","first_person":"나","named_entities":[]}`+"\n", i, i/10, char)
	}
	turns := write(t, dir, "turns.jsonl", b.String())
	cards := write(t, dir, "cards.json", cardsTable)
	lex := write(t, dir, "lexicon.csv", "term,topic\n선거,현실 정치\n")
	return []string{"--turns", turns, "--cards", cards, "--lexicon", lex}
}

// cancelCase is one interrupted judge run: its arguments besides the tables
// (each may use the placeholders OUT, REJ, DB, TMP and LOG for files in the
// run's directory) and whether records go to stdout.
type cancelCase struct {
	name string
	args []string
}

var cancelCases = []cancelCase{
	{"--out and --rejects", []string{"--out", "OUT", "--rejects", "REJ", "--tmp", "TMP", "--summary-log", "LOG"}},
	{"records on stdout, --rejects", []string{"--rejects", "REJ", "--tmp", "TMP", "--summary-log", "LOG"}},
	{"--db", []string{"--db", "DB", "--tmp", "TMP", "--summary-log", "LOG"}},
}

// cancelRun is the files of one interrupted run.
type cancelRun struct {
	dir, tmp, tmpdir string // inputs and outputs; --tmp; TMPDIR
	args             []string
	before           []string // dir's entries before the run
}

// newCancelRun makes the input, --out and --rejects files holding "precious",
// a --tmp directory and a TMPDIR for c (r.tmpdir: the caller gives it to the
// run, judge --db spools the tables there), and the summary log at LOG as a named
// pipe read by tapFIFO, which calls first after its first line.
func newCancelRun(t *testing.T, c cancelCase, first func()) (*cancelRun, func() int) {
	t.Helper()
	r := &cancelRun{dir: t.TempDir(), tmp: t.TempDir(), tmpdir: t.TempDir()}
	r.args = append([]string{"judge"}, bigInput(t, r.dir)...)
	var lines func() int
	for _, a := range c.args {
		switch a {
		case "OUT", "REJ":
			a = write(t, r.dir, strings.ToLower(a)+".jsonl", "precious\n")
		case "DB":
			a = filepath.Join(r.dir, "e.db")
		case "TMP":
			a = r.tmp
		case "LOG":
			a = filepath.Join(r.dir, "summaries.fifo")
			lines = tapFIFO(t, a, first)
		}
		r.args = append(r.args, a)
	}
	r.before = names(t, r.dir)
	return r, lines
}

// check fails unless the interrupted run left the files as they were:
// --out and --rejects unchanged, no pending file next to them, nothing in
// --tmp or TMPDIR. A --db store may stay (empty of runs).
func (r *cancelRun) check(t *testing.T) {
	t.Helper()
	for _, f := range []string{"out.jsonl", "rej.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(r.dir, f)); err == nil && string(b) != "precious\n" {
			t.Errorf("%s now holds %.60q", f, b)
		}
	}
	after := slices.DeleteFunc(names(t, r.dir), func(n string) bool { return strings.HasPrefix(n, "e.db") })
	if !slices.Equal(after, r.before) {
		t.Errorf("files after the run %q, before %q", after, r.before)
	}
	for what, d := range map[string]string{"--tmp": r.tmp, "TMPDIR": r.tmpdir} {
		if left := names(t, d); len(left) > 0 {
			t.Errorf("left in %s: %q", what, left)
		}
	}
}

// TestJudgeCancelRemovesFiles: a judge run whose context is cancelled (as
// SIGINT or SIGTERM does through signal.NotifyContext) removes its pending
// --out and --rejects files, its sorted runs in --tmp and judge --db's
// spooled tables in TMPDIR, and leaves the old outputs in place.
func TestJudgeCancelRemovesFiles(t *testing.T) {
	for _, c := range cancelCases {
		for _, when := range []string{"before the run", "mid-run"} {
			t.Run(c.name+", cancelled "+when, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if when == "before the run" {
					cancel()
				}
				r, lines := newCancelRun(t, c, cancel)
				t.Setenv("TMPDIR", r.tmpdir) // the run is in this process
				var out, errOut bytes.Buffer
				a := app()
				a.Writer, a.ErrWriter = &out, &errOut
				err := a.Run(ctx, append([]string{"evident"}, r.args...))
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled (stderr %q)", err, errOut.String())
				}
				n := lines()
				if when == "mid-run" && (n < 1 || n >= bigTurns) {
					t.Errorf("the summary log got %d lines before the run stopped, want some but not all %d", n, bigTurns)
				}
				r.check(t)
			})
		}
	}
}

// TestEvidentMain is not a test: run by TestJudgeSignals as a subprocess
// with EVIDENT_TEST_MAIN set (arguments one a line), it is the evident
// command.
func TestEvidentMain(t *testing.T) {
	args, ok := os.LookupEnv("EVIDENT_TEST_MAIN")
	if !ok {
		return
	}
	os.Args = append([]string{"evident"}, strings.Split(args, "\n")...)
	main()
	os.Exit(0)
}

// TestJudgeSignals runs evident judge as a process and interrupts it mid-run
// with SIGINT or SIGTERM, or closes the pipe its records go to: it exits 2
// (130 for a signal) with an error, not killed by the signal, after removing
// its pending and temporary files. Killed with SIGKILL it leaves none either.
func TestJudgeSignals(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	if testing.Short() {
		t.Skip("starts processes")
	}
	tests := []struct {
		cancelCase
		sig  os.Signal // sent after the first summary log line; nil: close stdout instead
		code int       // exit status
		want []string  // in stderr
	}{
		{cancelCases[0], os.Interrupt, 130, []string{"evident: interrupt signal received: ", "context canceled"}},
		{cancelCases[2], syscall.SIGTERM, 130, []string{"evident: terminated signal received: ", "context canceled",
			"(nothing was stored: the run and its dataset were rolled back)"}},
		// kill -9 runs no cleanup at all: the pending --out and --rejects
		// have no name (O_TMPFILE), the sorted runs and the --db spool are
		// unlinked at creation, so nothing is left either (issue 15 item 6).
		{cancelCase{"kill -9 with --out and --rejects", cancelCases[0].args}, os.Kill, -1, nil},
		{cancelCase{"kill -9 with --db", cancelCases[2].args}, os.Kill, -1, nil},
		// A closed stdout (`| head`) ends the run quietly, 141 as for SIGPIPE.
		{cancelCase{"stdout closed", []string{"--rejects", "REJ", "--tmp", "TMP"}}, nil, brokenPipeExit, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan *os.Process, 1)
			r, lines := newCancelRun(t, tt.cancelCase, func() {
				if err := (<-started).Signal(tt.sig); err != nil {
					t.Error(err)
				}
			})
			cmd := exec.Command(os.Args[0], "-test.run=^TestEvidentMain$")
			cmd.Env = append(os.Environ(), "EVIDENT_TEST_MAIN="+strings.Join(r.args, "\n"), "TMPDIR="+r.tmpdir)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			var stdout io.ReadCloser
			if tt.sig == nil {
				var err error
				if stdout, err = cmd.StdoutPipe(); err != nil {
					t.Fatal(err)
				}
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			started <- cmd.Process
			timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
			defer timer.Stop()
			if stdout != nil {
				b := make([]byte, 1)
				if _, err := io.ReadFull(stdout, b); err != nil {
					t.Errorf("no record on stdout: %v", err)
				}
				stdout.Close()
			}
			err := cmd.Wait()
			if lines != nil {
				if n := lines(); n < 1 || n >= bigTurns {
					t.Errorf("the summary log got %d lines, want some but not all %d", n, bigTurns)
				}
			}
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit code %d (%v), want %d: an error, not death by signal", code, err, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr %q, want %q", errOut.String(), w)
				}
			}
			if tt.sig == nil && strings.Contains(errOut.String(), "broken pipe") {
				t.Errorf("stderr %q: a closed stdout is not an error to report", errOut.String())
			}
			r.check(t)
		})
	}
}

// TestJudgeSignalWhileBlocked: a run blocked reading a named pipe that no
// one writes never sees its context cancelled; one SIGINT still ends it,
// after the grace period, with exit status 130 and a message, leaving no
// pending output behind.
func TestJudgeSignalWhileBlocked(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	turns, cards, _, _ := judgeFiles(t, dir)
	fifo := filepath.Join(dir, "lexicon-pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	args := []string{"judge", "--turns", turns, "--cards", cards, "--lexicon", fifo, "--out", out}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEvidentMain$")
	cmd.Env = append(os.Environ(), "EVIDENT_TEST_MAIN="+strings.Join(args, "\n"))
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	// Wait for the state the test needs, however slow the machine: the run
	// has the pipe open for reading (so its signal handler is installed, as
	// judge installs it before it opens a table). The write end stays open
	// with nothing written, so the run stays blocked reading the lexicon.
	w := openWhenRead(t, fifo)
	defer w.Close()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != interruptedExit {
		t.Errorf("exit code %d, want %d (stderr %q)", code, interruptedExit, errOut.String())
	}
	if waited := time.Since(start); waited > stopGrace+20*time.Second {
		t.Errorf("exited %v after the signal", waited)
	}
	if !strings.Contains(errOut.String(), "did not stop within") {
		t.Errorf("stderr %q, want the grace-period message", errOut.String())
	}
	if left := slices.DeleteFunc(names(t, dir), func(n string) bool { return !strings.HasPrefix(n, ".") }); len(left) > 0 {
		t.Errorf("pending files left in %s: %q", dir, left)
	}
}

// openWhenRead opens the named pipe fifo for writing once a process has it
// open for reading: a non-blocking open for writing fails with ENXIO until
// then (fifo(7)), so it is tried again every few milliseconds — a wait on
// the pipe's state. The minute's bound only turns a run that never opens
// the pipe into a failure instead of a hang.
func openWhenRead(t *testing.T, fifo string) *os.File {
	t.Helper()
	for bound := time.Now().Add(time.Minute); time.Now().Before(bound); time.Sleep(5 * time.Millisecond) {
		w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return w
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
	}
	t.Fatalf("no process opened %s for reading within a minute", fifo)
	return nil
}
