package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// names lists the entries of dir, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// lineCount is the number of lines in the file at path.
func lineCount(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestJudgeOutputsFollowLinksAndDevices: --out and --rejects write through a
// symbolic link (the link stays a link) and into a device or named pipe (it
// stays one) instead of replacing them with a regular file.
func TestJudgeOutputsFollowLinksAndDevices(t *testing.T) {
	// The demo judges 195 records and rejects nothing.
	tests := []struct {
		name string
		// setup makes the files in dir and returns the --out and --rejects
		// arguments and what to check after the run.
		setup func(t *testing.T, dir string) (out, rejects string, check func(t *testing.T))
	}{
		{"a link to an existing file: the target gets the records, the link stays",
			func(t *testing.T, dir string) (string, string, func(*testing.T)) {
				write(t, dir, "target.jsonl", "old\n")
				link := filepath.Join(dir, "out.jsonl")
				symlink(t, "target.jsonl", link)
				return link, filepath.Join(dir, "rej.jsonl"), func(t *testing.T) {
					isLink(t, link, "target.jsonl")
					if n := lineCount(t, filepath.Join(dir, "target.jsonl")); n != 195 {
						t.Errorf("target holds %d lines, want 195 records", n)
					}
				}
			}},
		{"a dangling link: its target is created, the link stays",
			func(t *testing.T, dir string) (string, string, func(*testing.T)) {
				if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				link := filepath.Join(dir, "out.jsonl")
				symlink(t, "sub/new.jsonl", link)
				return link, filepath.Join(dir, "rej.jsonl"), func(t *testing.T) {
					isLink(t, link, "sub/new.jsonl")
					if n := lineCount(t, filepath.Join(dir, "sub", "new.jsonl")); n != 195 {
						t.Errorf("target holds %d lines, want 195", n)
					}
				}
			}},
		{"a link as --rejects, to a file in another directory",
			func(t *testing.T, dir string) (string, string, func(*testing.T)) {
				other := t.TempDir()
				target := write(t, other, "rejects.jsonl", "old reject\n")
				link := filepath.Join(dir, "rej.jsonl")
				symlink(t, target, link)
				return filepath.Join(dir, "out.jsonl"), link, func(t *testing.T) {
					isLink(t, link, target)
					if n := lineCount(t, target); n != 0 {
						t.Errorf("rejects target holds %d lines, want 0 (rewritten, no rejects)", n)
					}
					if n := lineCount(t, filepath.Join(dir, "out.jsonl")); n != 195 {
						t.Errorf("out holds %d lines, want 195", n)
					}
					noHidden(t, other)
				}
			}},
		{"a named pipe as --out: written, not replaced",
			func(t *testing.T, dir string) (string, string, func(*testing.T)) {
				fifo := filepath.Join(dir, "out.fifo")
				lines := tapFIFO(t, fifo, nil)
				return fifo, filepath.Join(dir, "rej.jsonl"), func(t *testing.T) {
					if n := lines(); n != 195 {
						t.Errorf("the pipe's reader got %d lines, want 195", n)
					}
					if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
						t.Errorf("out.fifo is no longer a named pipe: %v", modeOf(fi, err))
					}
				}
			}},
		{"a null device of our own (mknod) as --out and --rejects",
			func(t *testing.T, dir string) (string, string, func(*testing.T)) {
				null := filepath.Join(dir, "null")
				if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
					t.Skipf("cannot make a null device here (needs root): %v", err)
				}
				return null, null, func(t *testing.T) { isCharDevice(t, null) }
			}},
		{"/dev/null as --out and --rejects",
			func(t *testing.T, dir string) (string, string, func(*testing.T)) {
				if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
					t.Skipf("%s is not a character device before the run (%v); not testing it", os.DevNull, modeOf(fi, err))
				}
				f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
				if err != nil {
					t.Skipf("%s is not writable here: %v", os.DevNull, err)
				}
				f.Close()
				return os.DevNull, os.DevNull, func(t *testing.T) { isCharDevice(t, os.DevNull) }
			}},
	}
	deviceFailed := false
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if deviceFailed && strings.HasPrefix(tt.name, "/dev/null") {
				t.Skip("not risking /dev/null: the run replaced a null device of our own")
			}
			dir := t.TempDir()
			t.Setenv("TMPDIR", t.TempDir()) // renameio may put pending files there
			out, rejects, check := tt.setup(t, dir)
			defer func() {
				if t.Failed() && strings.Contains(tt.name, "mknod") {
					deviceFailed = true
				}
			}()
			_, errOut, err := evident(t, "judge", "--demo", "--out", out, "--rejects", rejects)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			check(t)
			noHidden(t, dir)
			if left := names(t, os.Getenv("TMPDIR")); len(left) > 0 {
				t.Errorf("left in TMPDIR: %q", left)
			}
		})
	}
}

// noHidden fails when dir holds a hidden file (renameio's pending files are
// ".NAME" and digits).
func noHidden(t *testing.T, dir string) {
	t.Helper()
	for _, n := range names(t, dir) {
		if strings.HasPrefix(n, ".") {
			t.Errorf("left in %s: %s", dir, n)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// isLink fails unless path is a symbolic link to target.
func isLink(t *testing.T, path, target string) {
	t.Helper()
	if got, err := os.Readlink(path); err != nil || got != target {
		t.Errorf("%s: link to %q (%v), want a link to %q", path, got, err, target)
	}
}

func isCharDevice(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a character device: %v", path, modeOf(fi, err))
	}
}

// modeOf is fi's mode for a message, or err.
func modeOf(fi fs.FileInfo, err error) any {
	if err != nil {
		return err
	}
	return fi.Mode()
}

// tapFIFO makes a named pipe at path and reads it line by line in the
// background, calling first (when set) after the first line. The returned
// func waits until the writer closes the pipe and returns the lines read.
func tapFIFO(t *testing.T, path string, first func()) func() int {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	n := make(chan int, 1)
	go func() {
		f, err := os.Open(path) // waits for a writer
		if err != nil {
			n <- -1
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			if lines++; lines == 1 && first != nil {
				first()
			}
		}
		n <- lines
	}()
	return func() int {
		deadline := time.After(30 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			// Release a reader still waiting for a writer that never
			// came. The non-blocking open for writing fails until the
			// reader's goroutine is inside its open, so retry.
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			select {
			case lines := <-n:
				return lines
			case <-deadline:
				t.Errorf("%s: the writer never closed the pipe", path)
				return -1
			case <-tick.C:
			}
		}
	}
}

// An output named by one of the process's descriptors is written to that
// descriptor as the shell opened it: `--out /dev/stdout >> log` appends to
// log, and `--rejects /dev/stderr 2>> log` too; neither replaces the file.
func TestOutputsNamingADescriptorAppendWhereTheShellSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	turns, cards, lexicon, _ := judgeFiles(t, dir)
	good, err := os.ReadFile(turns)
	if err != nil {
		t.Fatal(err)
	}
	turns = write(t, dir, "turns-and-a-bad-row.jsonl", string(good)+"{not json\n")
	for _, tc := range []struct{ flag, path string }{
		{"--out", "/dev/stdout"}, {"--out", "/dev/fd/1"}, {"--out", "/proc/self/fd/1"}, {"--rejects", "/dev/stderr"},
	} {
		t.Run(tc.flag+" "+tc.path, func(t *testing.T) {
			log := filepath.Join(dir, "log.txt")
			if err := os.WriteFile(log, []byte("kept\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			args := []string{"judge", "--turns", turns, "--cards", cards, "--lexicon", lexicon, tc.flag, tc.path}
			cmd := exec.Command(os.Args[0], "-test.run=^TestEvidentMain$")
			cmd.Env = append(os.Environ(), "EVIDENT_TEST_MAIN="+strings.Join(args, "\n"))
			var other bytes.Buffer
			if tc.flag == "--out" {
				cmd.Stdout, cmd.Stderr = f, &other
			} else {
				cmd.Stdout, cmd.Stderr = &other, f
			}
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, other.String())
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			got := string(b)
			if !strings.HasPrefix(got, "kept\n") {
				t.Fatalf("the log lost what it held: %.200q", got)
			}
			want := `"turn_id":"T1"` // the record
			if tc.flag == "--rejects" {
				want = `"reason":` // the bad row's reject
			}
			if !strings.Contains(got[5:], want) {
				t.Fatalf("the log after the run: %.300q, want %s appended", got, want)
			}
		})
	}
}

// A descriptor other than standard output and error is refused, before
// anything is written: it may be one the command opened itself (report
// --html /dev/fd/9 wrote into the store's WAL and destroyed the store).
func TestOutputsNamingAnotherDescriptorAreRefused(t *testing.T) {
	for _, path := range []string{"/dev/fd/9", "/proc/self/fd/3", "/dev/stdin", "/dev/fd/0"} {
		o, err := createOutput("--html", path)
		if err == nil {
			o.cleanup()
			t.Fatalf("%s: accepted", path)
		}
		if !strings.Contains(err.Error(), "only standard output") {
			t.Fatalf("%s: %v, want the refusal naming standard output and error", path, err)
		}
	}
}

// An output that reaches a file the command has open — by its own path, a
// link to /proc/self/fd/N, /proc/thread-self/fd/N — is refused when created,
// and one whose target the command opened after creating it is refused at
// commit: the file keeps its bytes (report --html /proc/thread-self/fd/5
// replaced the store with the report, fresh-user finding).
func TestOutputsReachingAFileThisProcessHasOpenAreRefused(t *testing.T) {
	dir := t.TempDir()
	store := write(t, dir, "s.db", "SQLite format 3\x00")
	f, err := os.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	link := filepath.Join(dir, "out.html")
	if err := os.Symlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{store, link, fmt.Sprintf("/proc/thread-self/fd/%d", f.Fd()), fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())} {
		o, err := createOutput("--html", path)
		if err == nil {
			o.cleanup()
			t.Fatalf("%s: accepted", path)
		}
		if !strings.Contains(err.Error(), "a file this command has open") {
			t.Fatalf("%s: %v, want the refusal naming the open file", path, err)
		}
	}

	later := write(t, dir, "later.db", "SQLite format 3\x00")
	o, err := createOutput("--html", later)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "<!doctype html>")
	g, err := os.Open(later) // the store, opened after its output was named
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := o.commit(); err == nil || !strings.Contains(err.Error(), "a file this command has open") {
		t.Fatalf("commit: %v, want the refusal naming the open file", err)
	}
	o.cleanup()
	if b, _ := os.ReadFile(later); string(b) != "SQLite format 3\x00" {
		t.Fatalf("the open file now holds %q", b)
	}
	if left := names(t, dir); !slices.Equal(left, []string{"later.db", "out.html", "s.db"}) {
		t.Fatalf("files left: %q", left)
	}
}
