package agent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/arc/agent/policy"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestWatchdogTerminatesAfterThirtyIdleMinutesThenKillsAfterTheGrace(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	w := &Watchdog{Now: clk.Now}
	w.Start()
	steps := []struct {
		advance time.Duration
		touch   bool
		want    string
	}{
		{29*time.Minute + 59*time.Second, false, WatchNone},
		{0, true, WatchNone}, // activity resets the idle time
		{29 * time.Minute, false, WatchNone},
		{time.Minute, false, WatchTerminate},
		{29 * time.Second, false, WatchNone},
		{time.Second, false, WatchKill},
		{time.Hour, false, WatchNone},
	}
	for i, s := range steps {
		clk.Add(s.advance)
		if s.touch {
			w.Touch()
		}
		if got := w.Check(); got != s.want {
			t.Fatalf("step %d: Check = %q, want %q", i, got, s.want)
		}
	}
	if !w.Fired() {
		t.Error("Fired = false after a terminate")
	}
}

func TestRunnerStopsAnIdleAgentOnTheFakeClock(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	clk := &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	ticks := make(chan time.Time)
	r := &Runner{Now: clk.Now, Ticks: ticks}
	started := make(chan struct{})
	var once sync.Once
	done := make(chan Process, 1)
	go func() {
		p, _ := r.Run(context.Background(), t.TempDir(), []string{sh, "-c", "echo ready; exec sleep 600"}, "", func(stream string, b []byte) {
			once.Do(func() { close(started) })
		})
		done <- p
	}()
	<-started
	clk.Add(DefaultIdleLimit)
	for {
		select {
		case p := <-done:
			if !p.TimedOut || p.ExitCode != -1 {
				t.Errorf("process %+v, want timed out and killed", p)
			}
			return
		case ticks <- clk.Now():
			clk.Add(DefaultGrace)
		}
	}
}

func TestCLIBuildsBaseline1sCodexAndClaudeCommandLines(t *testing.T) {
	cases := []struct {
		name    string
		kind    string
		session string
		fresh   bool
		want    []string
	}{
		{"codex fresh", KindCodex, "", true, []string{"codex", "-m", "m", "exec", "--cd", "/ws", "--json"}},
		{"codex resumes its thread", KindCodex, "t-1", false, []string{"codex", "-m", "m", "exec", "--cd", "/ws", "resume", "t-1", "--json"}},
		{"codex fresh forgets the thread", KindCodex, "t-1", true, []string{"codex", "-m", "m", "exec", "--cd", "/ws", "--json"}},
		{"claude fresh", KindClaude, "", true, []string{"codex", "-m", "m", "-p", "--output-format", "stream-json", "--verbose"}},
		{"claude resumes its session", KindClaude, "s-1", false, []string{"codex", "-m", "m", "-p", "--output-format", "stream-json", "--verbose", "--resume", "s-1"}},
		{"plain is the command as given", KindPlain, "x", false, []string{"codex", "-m", "m"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &CLI{Kind: tc.kind, Base: []string{"codex", "-m", "m"}, session: tc.session}
			if got := c.Args("/ws", tc.fresh); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Args = %q, want %q", got, tc.want)
			}
		})
	}
	if DetectKind([]string{"/usr/bin/claude"}) != KindClaude || DetectKind([]string{"codex"}) != KindCodex || DetectKind([]string{"aider"}) != KindPlain {
		t.Error("DetectKind")
	}
	if findString([]byte(`{"type":"thread.started","thread_id":"abc"}`), "thread_id") != "abc" ||
		findString([]byte(`{"type":"system","subtype":"init","session_id":"s9"}`), "session_id") != "s9" ||
		findString([]byte("not json"), "thread_id") != "" {
		t.Error("findString")
	}
}

func TestPolicyRefusesRESETAndDirectMovesBeyondTheBudgetAndLogsEachRefusal(t *testing.T) {
	ws := t.TempDir()
	now := func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
	move := func(action, via string, level, n int) error {
		return policy.Check(ws, policy.Command{Action: action, Text: action, Via: via, Level: level, LevelActions: n}, now)
	}
	if err := move("RESET", policy.ViaDirect, 1, 1); err != nil {
		t.Fatalf("without a policy file: %v", err)
	}
	p := policy.Default()
	p.MaxLevelActions, p.Iteration = 50, 4
	if err := policy.Write(ws, p); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		action, via string
		level, n    int
		refused     bool
	}{
		{"the agent's RESET is refused", "RESET", policy.ViaDirect, 1, 3, true},
		{"the controller's RESET passes", "RESET", policy.ViaController, 1, 3, false},
		{"direct move 1 of 3 on level 1", "ACTION1", policy.ViaDirect, 1, 3, false},
		{"direct move 2 of 3", "ACTION1", policy.ViaDirect, 1, 4, false},
		{"direct move 3 of 3", "ACTION1", policy.ViaDirect, 1, 5, false},
		{"a fourth direct move is refused", "ACTION1", policy.ViaDirect, 1, 6, true},
		{"plan-exec moves pass", "ACTION1", policy.ViaPlanExec, 1, 6, false},
		{"no direct move on level 2", "ACTION2", policy.ViaDirect, 2, 0, true},
		{"the run's cap per level holds for plan-exec too", "ACTION1", policy.ViaPlanExec, 2, 50, true},
	}
	refusals := 0
	for _, tc := range cases {
		err := move(tc.action, tc.via, tc.level, tc.n)
		if tc.refused != (err != nil) || (err != nil && !errors.Is(err, policy.ErrRefused)) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if tc.refused {
			refusals++
		}
	}
	es, err := ReadTranscript(filepath.Join(ws, TranscriptPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != refusals {
		t.Fatalf("%d transcript entries, want %d refusals", len(es), refusals)
	}
	if e := es[0]; e.Kind != KindRefusal || e.What != "move RESET" || e.Iteration != 4 || !strings.Contains(e.Why, "only by the controller") {
		t.Errorf("first refusal %+v", e)
	}
	used, _ := policy.DirectMoves(ws)
	if used["1"] != 3 {
		t.Errorf("direct moves = %v", used)
	}
	if err := policy.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, policy.File)); !os.IsNotExist(err) {
		t.Error("policy file not removed")
	}
}
