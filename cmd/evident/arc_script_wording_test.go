package main

// client.py (the workspace launcher of baseline1's twma_v1.6 client) words
// its refusals and usage errors as baseline1's client.py does: its
// canonical_action and validate_action_for_state messages behind
// "Invalid command: ", its argparse usage errors (exit 2, stderr), none of
// evident's own hints.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/games"
)

const officialNames = "Use official names only: RESET, ACTION1, ACTION2, ACTION3, ACTION4, ACTION5, ACTION6, ACTION7."

func TestClientScriptWordsAsBaseline1(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	w := newLaunchWS(t, games.Trek.ID)
	usage := "usage: client.py [-h] {start,move,status} ...\nclient.py: error: "
	for _, c := range []struct {
		name       string
		args       []string
		out, errPf string
		code       int
	}{
		{"RESET before the attempt's first action is baseline1's ValueError, without evident's --force hint",
			[]string{"move", "RESET"}, "Invalid command: RESET is not allowed before taking any action in the current attempt.\n", "", 1},
		{"a lowercase action is refused as canonical_action refuses it",
			[]string{"move", "action1"}, "Invalid command: Unknown action: action1. " + officialNames + "\n", "", 1},
		{"an action dict is not an official name either",
			[]string{"move", `{"name":"ACTION1"}`}, `Invalid command: Unknown action: {"name":"ACTION1"}. ` + officialNames + "\n", "", 1},
		{"ACTION6 without coordinates", []string{"move", "ACTION6"}, "Invalid command: ACTION6 requires both --x and --y.\n", "", 1},
		{"coordinates with another action", []string{"move", "ACTION1", "--x", "3", "--y", "4"}, "Invalid command: --x/--y are only valid with ACTION6.\n", "", 1},
		{"coordinates off the frame", []string{"move", "ACTION6", "--x", "64", "--y", "0"}, "Invalid command: ACTION6 coordinates must be inside the 64x64 frame: x and y must be in 0..63.\n", "", 1},
		{"no command is argparse's error, exit 2", nil, "", usage + "a command is required.\n", 2},
		{"an unknown command is argparse's invalid choice, exit 2", []string{"bogus"}, "", usage + "argument command: invalid choice: ", 2},
		{"an extra argument is argparse's unrecognized arguments", []string{"status", "now"}, "", usage + "unrecognized arguments: now\n", 2},
		{"a coordinate that is not a number is argparse's error", []string{"move", "ACTION6", "--x", "a", "--y", "1"}, "", "usage: client.py move [-h]", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := w.runAll("client", "client.py", c.args...)
			if code != c.code || out != c.out || !strings.HasPrefix(errOut, c.errPf) || (c.errPf == "" && errOut != "") {
				t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout %q, stderr starting %q", code, out, errOut, c.code, c.out, c.errPf)
			}
		})
	}
	t.Run("the plain CLI keeps taking an action in any case", func(t *testing.T) {
		if out, errOut, code := arc(t, "client", "move", "action1", "--workspace", w.dir); code != 0 || !strings.Contains(out, "action: ACTION1\n") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
	})
	t.Run("a non-RESET in GAME_OVER is baseline1's ValueError, without evident's RESET hint", func(t *testing.T) {
		// Level 1's budget is 24 moves; ACTION3 from the start is blocked
		// and still costs one. 23 more moves empty the bar.
		for i := 0; i < 23; i++ {
			if _, errOut, code := arc(t, "client", "move", "ACTION3", "--workspace", w.dir); code != 0 {
				t.Fatalf("move %d: exit %d: %s", i+2, code, errOut)
			}
		}
		out, errOut, code := w.runAll("client", "client.py", "status")
		if code != 0 || !strings.Contains(out, "state: GAME_OVER\n") {
			t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
		}
		out, errOut, code = w.runAll("client", "client.py", "move", "ACTION1")
		if want := "Invalid command: Only RESET is allowed when the game is in GAME_OVER state.\n"; code != 1 || out != want || errOut != "" {
			t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit 1, %q", code, out, errOut, want)
		}
	})
}

func TestClientScriptNoGameIsBaseline1sLines(t *testing.T) {
	py := python3(t)
	bin := evidentBin(t)
	dir := filepath.Join(t.TempDir(), "ws")
	if out, err := exec.Command(bin, "arc", "init", dir).CombinedOutput(); err != nil {
		t.Fatalf("arc init: %v\n%s", err, out)
	}
	w := &launchWS{t: t, py: py, bin: bin, dir: dir}
	out, errOut, code := w.runAll("client", "client.py", "move", "ACTION1")
	want := "No active client session. Start a game first.\nStart a game first: python3 client/client.py start <game_id>\n"
	if code != 1 || out != want || errOut != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q\nwant exit 1, %q", code, out, errOut, want)
	}
}

func TestArcInitNextQuotesThePath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my ws")
	out, errOut, code := arc(t, "init", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := "next: cd '" + filepath.Join(dir, "client") + "' && python3 client.py start GAME_ID"
	if code != 0 || lines[len(lines)-1] != want {
		t.Fatalf("exit %d, last line %q, want %q\n%s", code, lines[len(lines)-1], want, errOut)
	}
	if got := shellQuote("it's"); got != `'it'\''s'` {
		t.Errorf("shellQuote(it's) = %s", got)
	}
	if got := shellQuote("/tmp/ws-1/client"); got != "/tmp/ws-1/client" {
		t.Errorf("a plain path is quoted: %s", got)
	}
}
