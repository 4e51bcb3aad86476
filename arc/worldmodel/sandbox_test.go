//go:build unix

package worldmodel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"evident/internal/testenv"
)

// needBwrap skips without a working bubblewrap, or fails under
// EVIDENT_REQUIRE_ALL=1 (.ci/run installs Debian's bubblewrap).
func needBwrap(t *testing.T) {
	t.Helper()
	if _, why := bwrapUsable(); why != "" {
		testenv.Missing(t, "no sandbox: %s; the bubblewrap tests need bwrap that can create namespaces", why)
	}
}

// hostile is a model program: it runs attempt (shell code that sets $r),
// answers hello with runtime $r, then reads requests until its stdin closes.
func hostile(attempt string) string {
	src := attempt + "\nread line\necho \"{\\\"id\\\":1,\\\"ok\\\":true,\\\"protocol\\\":1,\\\"runtime\\\":\\\"$r\\\"}\"\nwhile read line; do :; done\n"
	return "sh -c '" + strings.ReplaceAll(src, "'", `'\''`) + "'"
}

func loadHostile(t *testing.T, ws, attempt string, mode SandboxMode, edit ...func(*SubprocessOptions)) *Subprocess {
	t.Helper()
	o := SubprocessOptions{Command: hostile(attempt), Dir: ws, Sandbox: mode, LoadTimeout: 30 * time.Second}
	for _, e := range edit {
		e(&o)
	}
	m, err := LoadSubprocess(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestBwrapSandbox: issue 15 item 7 — under bubblewrap a model program
// cannot write the workspace or the shared /tmp, reach the network, or
// leave a process behind, and its memory is limited; in guard-rail mode
// the same programs succeed (which is why the sandbox is on by default).
func TestBwrapSandbox(t *testing.T) {
	needBwrap(t)
	t.Run("writing the workspace is refused and /tmp is private", func(t *testing.T) {
		ws := t.TempDir()
		shared := filepath.Join(os.TempDir(), fmt.Sprintf("evident-sandbox-%d", os.Getpid()))
		t.Cleanup(func() { os.Remove(shared) })
		attempt := `r=""
for f in "` + ws + `/pwned" "` + shared + `"; do
  if echo x > "$f" 2>/dev/null; then r="$r wrote"; else r="$r refused"; fi
done
`
		// The write to the shared /tmp path lands in the private /tmp.
		m := loadHostile(t, ws, attempt, SandboxAuto)
		if m.Sandbox() != "bwrap" || m.Runtime() != " refused wrote" {
			t.Fatalf("sandbox %q, runtime %q", m.Sandbox(), m.Runtime())
		}
		for _, f := range []string{filepath.Join(ws, "pwned"), shared} {
			if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s exists: %v", f, err)
			}
		}
		g := loadHostile(t, ws, attempt, SandboxOff)
		if g.Sandbox() != "guard-rail" || g.Runtime() != " wrote wrote" {
			t.Fatalf("guard-rail mode: sandbox %q, runtime %q", g.Sandbox(), g.Runtime())
		}
		if _, err := os.Stat(shared); err != nil {
			t.Errorf("guard-rail mode wrote no %s: %v", shared, err)
		}
	})
	t.Run("the session, the agent's transcript and git history are hidden; initial full frames are not", func(t *testing.T) {
		ws := t.TempDir()
		for _, f := range []string{"client/session/level_01_attempt_01/initial_frame.txt", "client/client_state.json",
			"agent/transcript.jsonl", ".git/HEAD", "initial_full_frames/level_1.txt"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		attempt := `r=""
for f in client/session/level_01_attempt_01/initial_frame.txt client/client_state.json agent/transcript.jsonl .git/HEAD initial_full_frames/level_1.txt; do
  if cat "` + ws + `/$f" >/dev/null 2>&1; then r="$r read"; else r="$r hidden"; fi
done
`
		m := loadHostile(t, ws, attempt, SandboxAuto)
		if m.Sandbox() != "bwrap" || m.Runtime() != " hidden hidden hidden hidden read" {
			t.Fatalf("sandbox %q, runtime %q", m.Sandbox(), m.Runtime())
		}
		if g := loadHostile(t, ws, attempt, SandboxOff); g.Runtime() != " read read read read read" {
			t.Fatalf("guard-rail mode: runtime %q", g.Runtime())
		}
	})
	t.Run("the network is unreachable", func(t *testing.T) {
		py, err := osexec.LookPath("python3")
		if err != nil {
			t.Skip("no python3 to open a socket with")
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		attempt := fmt.Sprintf(`if %s -c "import socket; socket.create_connection(('127.0.0.1', %d), 5)" 2>/dev/null; then r=connected; else r=refused; fi`,
			py, ln.Addr().(*net.TCPAddr).Port)
		if m := loadHostile(t, t.TempDir(), attempt, SandboxAuto); m.Runtime() != "refused" {
			t.Fatalf("under bwrap: %q", m.Runtime())
		}
		if m := loadHostile(t, t.TempDir(), attempt, SandboxOff); m.Runtime() != "connected" {
			t.Fatalf("guard-rail mode: %q", m.Runtime())
		}
	})
	t.Run("a setsid child dies with the model", func(t *testing.T) {
		marker := fmt.Sprintf("%d.%d", 7000+os.Getpid()%1000, time.Now().UnixNano()%1_000_000)
		m := loadHostile(t, t.TempDir(), "setsid sleep "+marker+" </dev/null >/dev/null 2>&1 &\nr=started", SandboxAuto)
		waitFor(t, "the setsid child to start", func() bool { return running("sleep", marker) })
		m.Close()
		waitFor(t, "the setsid child to be gone after Close", func() bool { return !running("sleep", marker) })
	})
	t.Run("memory beyond MemoryLimit cannot be mapped", func(t *testing.T) {
		py, err := osexec.LookPath("python3")
		if err != nil {
			t.Skip("no python3 to allocate with")
		}
		if _, err := osexec.LookPath("prlimit"); err != nil {
			t.Skip("no prlimit (util-linux): the sandbox sets no rlimits")
		}
		attempt := py + ` -c "x = bytearray(1 << 30)" 2>/dev/null && r=allocated || r=refused`
		m := loadHostile(t, t.TempDir(), attempt, SandboxAuto, func(o *SubprocessOptions) { o.MemoryLimit = 512 << 20 })
		if m.Runtime() != "refused" {
			t.Fatalf("1 GiB under a 512 MiB limit: %q", m.Runtime())
		}
		if m := loadHostile(t, t.TempDir(), attempt, SandboxAuto); m.Runtime() != "allocated" {
			t.Fatalf("1 GiB under the default 4 GiB limit: %q", m.Runtime())
		}
	})
}

// TestSandboxFallback: without a usable bwrap, auto falls back to
// guard-rail mode with one line of notice; "bwrap" refuses to start.
func TestSandboxFallback(t *testing.T) {
	saved := probeBwrap
	t.Cleanup(func() { probeBwrap = saved })
	probeBwrap = func() (string, string) {
		return "", "bwrap cannot create its namespaces here (No permissions to create new namespace)"
	}
	var notice bytes.Buffer
	m := loadHostile(t, t.TempDir(), "r=ok", SandboxAuto, func(o *SubprocessOptions) { o.Notice = &notice })
	want := "world model: bwrap cannot create its namespaces here (No permissions to create new namespace); running the model program in guard-rail mode (no sandbox)\n"
	if m.Sandbox() != "guard-rail" || notice.String() != want {
		t.Fatalf("sandbox %q, notice %q", m.Sandbox(), notice.String())
	}
	_, err := LoadSubprocess(context.Background(), SubprocessOptions{Command: hostile("r=ok"), Dir: t.TempDir(), Sandbox: SandboxBwrap})
	if err == nil || err.Error() != "worldmodel: sandbox bwrap: bwrap cannot create its namespaces here (No permissions to create new namespace)" {
		t.Fatalf("err = %v", err)
	}
	if _, err := LoadSubprocess(context.Background(), SubprocessOptions{Command: hostile("r=ok"), Dir: t.TempDir(), Sandbox: "jail"}); err == nil ||
		err.Error() != `worldmodel: sandbox "jail", want auto, bwrap or off` {
		t.Fatalf("err = %v", err)
	}
}

// running reports whether a process runs name with argument arg (read from
// /proc, which shows the sandbox's processes too).
func running(name, arg string) bool {
	want := name + "\x00" + arg + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasSuffix(string(b), want) && (string(b) == want || strings.HasSuffix(string(b), "/"+want)) {
			return true
		}
	}
	return false
}

// waitFor waits until cond holds, polling /proc-like state; it fails after
// a minute (a bound for a stuck machine, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
