package main

// The agent controller end to end (issue 11 "Show"): the scripted stand-in
// agent of arc/agent/testdata (Python 3 stdlib, speaking like `codex exec
// --json`) plays Trek through the controller against the local game server
// on loopback, with the workspace launchers execing the evident binary
// built for these tests; it dies once on level 1.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"evident/arc/agent"
	"evident/arc/games"
	"evident/internal/testenv"
)

// gitTool skips without git on PATH (or fails when EVIDENT_REQUIRE_ALL=1).
func gitTool(t *testing.T) {
	t.Helper()
	testenv.Program(t, "git", "git", "the controller snapshots the workspace with git")
}

func TestAgentControllerPlaysTrekToTheWinWithTheScriptedAgent(t *testing.T) {
	t.Parallel() // its work runs in child processes and touches no process-wide state
	bin := evidentBin(t)
	python3(t)
	gitTool(t)
	srv := httptest.NewServer(games.NewServer(games.Config{}))
	defer srv.Close()
	ws := filepath.Join(t.TempDir(), "ws")
	argv, err := agent.DemoScenario(games.Trek, 0, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	out, res, err := agent.RunGame(context.Background(), agent.GameOptions{
		Game: games.Trek.ID, Server: srv.URL, Workspace: ws, EvidentBin: bin,
		AgentCmd: argv, Kind: agent.KindCodex, Thresholds: agent.DemoThresholds, Exploration: -1, Log: &log,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if out.Reason != agent.StopSolved || out.Resets != 1 || out.Recoveries != 0 || out.Iterations != 5 {
		t.Fatalf("outcome %+v\n%s", out, log.String())
	}
	es, err := agent.ReadTranscript(filepath.Join(ws, agent.TranscriptPath))
	if err != nil {
		t.Fatal(err)
	}
	// The prompts in order: main; the death on level 1, its
	// simplification, the controller's RESET and trouble1 (24 steps > 20);
	// level 2: new level, the seven simplification turns, a continuation
	// without action, then the stuck arm; level 3: new level,
	// simplification, continuation; solved.
	simpl := agent.SimplificationLater
	want := []string{"main", "death", "simplification_level1", "trouble1", "new_level"}
	want = append(append(want, simpl...), "continuation")
	want = append(append(want, simpl...), "stuck", "new_level")
	want = append(append(want, simpl...), "continuation")
	var names, kinds []string
	resetAfter, refusals := "", 0
	for _, e := range es {
		kinds = append(kinds, e.Kind)
		switch e.Kind {
		case agent.KindPrompt:
			names = append(names, e.Name)
		case agent.KindReset:
			resetAfter = names[len(names)-1]
			if !strings.Contains(e.Output, "RESET") {
				t.Errorf("the RESET's output does not name it: %q", e.Output)
			}
		case agent.KindRefusal:
			refusals++
			if e.What != "move RESET" || !strings.Contains(e.Why, "only by the controller") {
				t.Errorf("refusal %+v", e)
			}
		case agent.KindTurn:
			if e.ExitCode != 0 || e.TimedOut || e.AgentSession != "fake-thread-1" {
				t.Errorf("turn %+v", e)
			}
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("prompts\n got %v\nwant %v", names, want)
	}
	if resetAfter != "simplification_level1" {
		t.Errorf("the controller's RESET came after %q, want after the death's simplification turn", resetAfter)
	}
	if refusals != 1 {
		t.Errorf("%d refusals, want the agent's own RESET refused once", refusals)
	}
	if kinds[len(kinds)-1] != agent.KindStop || es[len(es)-1].Reason != agent.StopSolved {
		t.Errorf("last entry %+v", es[len(es)-1])
	}
	// Git: one commit and tag per iteration that went on (1–4).
	s1, s2, s3 := len(games.Trek.Solution(0, 1)), len(games.Trek.Solution(0, 2)), len(games.Trek.Solution(0, 3))
	logOut, err := exec.Command("git", "-C", ws, "log", "--format=%s").Output()
	if err != nil {
		t.Fatal(err)
	}
	wantLog := fmt.Sprintf("level_3 %d 4\nlevel_2 %d 3\nlevel_2 %d 2\nlevel_1 24 1\n", 24+s1+s2, 24+s1, 24+s1)
	if string(logOut) != wantLog {
		t.Errorf("git log\n%s\nwant\n%s", logOut, wantLog)
	}
	tags, _ := exec.Command("git", "-C", ws, "tag", "-l").Output()
	if string(tags) != "iteration_1\niteration_2\niteration_3\niteration_4\n" {
		t.Errorf("tags %q", tags)
	}
	// RHAE: level 1 took the probe, 23 deadly moves, the level RESET (an
	// action) and the solution; levels 2 and 3 their solutions. Level
	// score min((b/a)²·100, 115), game Σ l·s_l / Σ l.
	a1 := 1 + 23 + 1 + s1
	lv := func(b, a int) float64 { return math.Min(float64(b*b)/float64(a*a)*100, 115) }
	b := games.Trek.Baselines
	wantScore := (1*lv(b[0], a1) + 2*lv(b[1], s2) + 3*lv(b[2], s3)) / 6
	if math.Abs(res.Score-wantScore) > 1e-9 || res.LevelsCompleted != 3 || res.Resets != 1 || res.Actions != a1+s2+s3 || res.ControllerResets != 1 {
		t.Errorf("result %+v, want score %.4f, 3 levels, %d actions, 1 reset", res, wantScore, a1+s2+s3)
	}
	if _, err := os.Stat(filepath.Join(ws, agent.ResultsFile)); err != nil {
		t.Error(err)
	}
	// evident arc results prints the table.
	var table bytes.Buffer
	if err := agent.WriteResultsTable(&table, []agent.Result{*res}); err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf("| %s | 3/3 | %.2f | %d | - |", games.Trek.ID, wantScore, a1+s2+s3)
	if !strings.Contains(table.String(), row) || !strings.Contains(table.String(), "fully solved games: 1/1") {
		t.Errorf("table\n%s\nwant a row starting %s", table.String(), row)
	}
}
