package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// threadNices reads the nice value (field 19 of /proc/self/task/T/stat)
// of every thread of this process.
func threadNices(t *testing.T) []string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		// the command name (field 2) is in parentheses and may hold spaces
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		out = append(out, fields[16]) // field 19 of the whole line
	}
	return out
}

// TestNiceChild is TestNiceLowersEveryThread's child process: it lowers
// its priority to 10, starts threads after that, and prints every thread's
// nice value.
func TestNiceChild(t *testing.T) {
	if os.Getenv("EVIDENT_NICE_CHILD") != "1" {
		t.Skip("the child of TestNiceLowersEveryThread")
	}
	if err := lowerPriority(10); err != nil {
		t.Fatal(err)
	}
	var started, stop sync.WaitGroup
	stop.Add(1)
	for range 4 { // threads started after the call inherit it
		started.Add(1)
		go func() {
			runtime.LockOSThread()
			started.Done()
			stop.Wait()
		}()
	}
	started.Wait()
	os.Stdout.WriteString(strings.Join(threadNices(t), " ") + "\n")
	stop.Done()
}

// TestNiceLowersEveryThread: --nice 10 (import, judge --db) sets the nice
// value of every thread of the process to 10, also of threads started
// after it; --nice out of 0..19 is refused.
func TestNiceLowersEveryThread(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestNiceChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EVIDENT_NICE_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	line := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
	if len(line) < 5 {
		t.Fatalf("child printed %q; want the nice values of at least 5 threads", out)
	}
	for _, n := range line {
		if n != "10" {
			t.Fatalf("thread nice values %v; want all 10", line)
		}
	}
	for _, bad := range []string{"-1", "20"} {
		_, errOut, code := runSub(t, judgeCommand(), "--db", filepath.Join(t.TempDir(), "e.db"), "--demo", "--nice", bad)
		if code == 0 || !strings.Contains(errOut, "--nice "+bad+": want 0..19") {
			t.Errorf("--nice %s: exit %d, %q", bad, code, errOut)
		}
	}
}
