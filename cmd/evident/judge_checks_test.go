package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// judgeFiles writes a one-turn judge input (turns, cards, lexicon, endings)
// into dir and returns their paths.
func judgeFiles(t *testing.T, dir string) (turns, cards, lex, endings string) {
	t.Helper()
	turns = write(t, dir, "turns.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"검을 잡아.","first_person":"나","named_entities":[]}`+"\n")
	cards = write(t, dir, "cards.json", cardsTable)
	lex = write(t, dir, "lexicon.csv", "term,topic\n선거,현실 정치\n")
	endings = write(t, dir, "endings.txt", "ㅂ니까\n")
	return
}

// TestJudgeRefusesSameFile: an output that names the same file as another
// output or as an input is refused before anything is read or written, and
// the error names both flags. --out X --rejects X used to exit 0 with X
// holding only the rejects; --out equal to --turns overwrote the input.
func TestJudgeRefusesSameFile(t *testing.T) {
	dir := t.TempDir()
	turns, cards, lex, endings := judgeFiles(t, dir)
	in := []string{"judge", "--turns", turns, "--cards", cards, "--lexicon", lex, "--endings", endings}
	symlink(t, "turns.jsonl", filepath.Join(dir, "turns-link.jsonl"))
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string // in the error
	}{
		{"--out and --rejects, a new file", []string{"--out", filepath.Join(dir, "x.jsonl"), "--rejects", filepath.Join(dir, "x.jsonl")},
			[]string{"--out and --rejects name the same file"}},
		{"--out and --rejects, spelled differently", []string{"--out", filepath.Join(dir, "x.jsonl"), "--rejects", filepath.Join(sub, "..", "x.jsonl")},
			[]string{"--out and --rejects name the same file"}},
		{"--out and --summary-log", []string{"--out", filepath.Join(dir, "x.jsonl"), "--summary-log", filepath.Join(dir, "x.jsonl")},
			[]string{"--out and --summary-log name the same file"}},
		{"--out is --turns", []string{"--out", turns},
			[]string{"--out names the same file as --turns", "overwrite its input"}},
		{"--out is a link to --turns", []string{"--out", filepath.Join(dir, "turns-link.jsonl")},
			[]string{"--out names the same file as --turns"}},
		{"--rejects is --cards", []string{"--rejects", cards},
			[]string{"--rejects names the same file as --cards"}},
		{"--rejects is --lexicon", []string{"--rejects", lex},
			[]string{"--rejects names the same file as --lexicon"}},
		{"--out is --endings", []string{"--out", endings},
			[]string{"--out names the same file as --endings"}},
		{"--summary-log is --turns", []string{"--summary-log", turns},
			[]string{"--summary-log names the same file as --turns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := evident(t, append(append([]string{}, in...), tt.args...)...)
			if err == nil {
				t.Fatalf("no error; stdout %q", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want %q", err, w)
				}
			}
			if exitCode(err) != 2 {
				t.Errorf("exit code %d, want 2", exitCode(err))
			}
			if b, _ := os.ReadFile(turns); !strings.HasPrefix(string(b), `{"turn_id":"T1"`) {
				t.Errorf("turns file now %q", b)
			}
			if _, err := os.Stat(filepath.Join(dir, "x.jsonl")); err == nil {
				t.Errorf("x.jsonl was written")
			}
		})
	}

	t.Run("distinct files and a shared /dev/null are accepted", func(t *testing.T) {
		args := append(append([]string{}, in...), "--out", filepath.Join(dir, "records.jsonl"), "--rejects", os.DevNull, "--summary-log", os.DevNull)
		if _, errOut, err := evident(t, args...); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if n := lineCount(t, filepath.Join(dir, "records.jsonl")); n != 1 {
			t.Errorf("%d records, want 1", n)
		}
	})
}

// TestJudgeTmpFlag: --tmp must name an existing, writable directory, checked
// before the run (the sort library created a missing one, and used it only
// once the input outgrew one sorted run).
func TestJudgeTmpFlag(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "file.txt", "x")
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tmp  string
		want string // in the error; "" for success
	}{
		{"a missing directory is not created", filepath.Join(dir, "missing"), "--tmp: stat " + filepath.Join(dir, "missing") + ": no such file or directory"},
		{"a file is not a directory", file, "--tmp " + file + " is not a directory"},
		{"a read-only directory", readOnly, "--tmp: cannot write there"},
		{"a directory is used", dir, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tmp == readOnly && os.Geteuid() == 0 {
				t.Skip("root writes to a read-only directory")
			}
			for _, extra := range [][]string{nil, {"--db", filepath.Join(t.TempDir(), "e.db")}} {
				out, _, err := evident(t, append([]string{"judge", "--demo", "--tmp", tt.tmp}, extra...)...)
				if tt.want == "" {
					if err != nil {
						t.Errorf("%v: %v", extra, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%v: err = %v, want %q", extra, err, tt.want)
				}
				if out != "" {
					t.Errorf("%v: records written before the check: %.80q", extra, out)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
				t.Errorf("the missing --tmp directory was created")
			}
			noHidden(t, dir)
		})
	}
}

// TestJudgeTablesMustBeRegularFiles: the judge reads the turn table (and a
// card file) twice, so a named pipe or device is refused at once; a FIFO
// used to hang forever on the second open.
func TestJudgeTablesMustBeRegularFiles(t *testing.T) {
	dir := t.TempDir()
	turns, cards, lex, _ := judgeFiles(t, dir)
	fifo := filepath.Join(dir, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--turns a named pipe", []string{"--turns", fifo, "--cards", cards, "--lexicon", lex},
			"--turns " + fifo + " is a named pipe, not a regular file: the judge reads the turn table twice; write it to a file first"},
		{"--turns a named pipe, with --db", []string{"--turns", fifo, "--cards", cards, "--lexicon", lex, "--db", filepath.Join(dir, "e.db")},
			"--turns " + fifo + " is a named pipe"},
		{"--turns a character device", []string{"--turns", os.DevNull, "--cards", cards, "--lexicon", lex},
			"--turns " + os.DevNull + " is a character device, not a regular file"},
		{"--cards a named pipe", []string{"--turns", turns, "--cards", fifo, "--lexicon", lex},
			"the judge reads the card table twice"},
		{"--turns a directory", []string{"--turns", dir, "--cards", cards, "--lexicon", lex},
			"--turns " + dir + " is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, _, err := evident(t, append([]string{"judge"}, tt.args...)...)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want %q", err, tt.want)
				}
			case <-time.After(30 * time.Second):
				// Release the judge blocked on the pipe, then fail.
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				t.Fatal("the judge hangs on the named pipe")
			}
		})
	}
}

// TestJudgeNegativeWorkers: --workers below 0 is an error, not "all cores".
func TestJudgeNegativeWorkers(t *testing.T) {
	_, _, err := evident(t, "judge", "--demo", "--workers", "-1")
	if err == nil || !strings.Contains(err.Error(), "--workers -1: want 0 (all cores) or more") {
		t.Fatalf("error %v, want the --workers message", err)
	}
}
