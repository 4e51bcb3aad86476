package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/arc/session"
)

// fakeGame writes a session as the client records one: attempt folders,
// initial_metadata.json and step metadata files.
type fakeGame struct {
	t         *testing.T
	root      string
	win       int
	level     int
	attempt   int
	steps     int
	index     int
	completed int
	state     string
}

func newFakeGame(t *testing.T, ws string, win int) *fakeGame {
	g := &fakeGame{t: t, root: filepath.Join(ws, session.Dir), win: win}
	return g
}

func (g *fakeGame) dir() string {
	return filepath.Join(g.root, session.AttemptDirName(g.level, g.attempt))
}

func (g *fakeGame) write(name, state string, action string) {
	g.t.Helper()
	body := fmt.Sprintf(`{"step_index": %d, "state": %q, "levels_completed": %d, "win_levels": %d, "available_actions": [1], "action_input": {"id": %q, "data": {}}}`,
		g.index, state, g.completed, g.win, action)
	if err := os.MkdirAll(g.dir(), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.dir(), name), []byte(body), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

func (g *fakeGame) start() {
	g.level, g.attempt, g.state = 1, 1, "NOT_FINISHED"
	g.write(session.InitialMetadataFile, g.state, "RESET")
}

// act records n steps; the last one has the given outcome ("" running,
// "die", "win": the level is completed).
func (g *fakeGame) act(n int, outcome string) {
	for i := 0; i < n; i++ {
		g.index++
		g.steps++
		state := "NOT_FINISHED"
		if i == n-1 {
			switch outcome {
			case "die":
				state = "GAME_OVER"
			case "win":
				g.completed++
				if g.completed == g.win {
					state = "WIN"
				}
			}
		}
		g.state = state
		g.write(session.StepMetadataFile(g.steps), state, "ACTION1")
	}
	if outcome == "win" && g.completed < g.win {
		g.level, g.attempt, g.steps = g.level+1, 1, 0
		g.write(session.InitialMetadataFile, "NOT_FINISHED", "ACTION1")
	}
}

func (g *fakeGame) reset() {
	g.index++
	g.attempt++
	g.steps = 0
	g.state = "NOT_FINISHED"
	g.write(session.InitialMetadataFile, g.state, "RESET")
}

// scriptAgent plays turns from a list: each turn is a function of the game.
type scriptAgent struct {
	mu    sync.Mutex
	turns []func() TurnResult
	got   []TurnRequest
	sess  int
}

func (a *scriptAgent) Turn(ctx context.Context, req TurnRequest) (TurnResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, req)
	if req.Fresh {
		a.sess++
	}
	r := TurnResult{}
	if n := len(a.got) - 1; n < len(a.turns) && a.turns[n] != nil {
		r = a.turns[n]()
	}
	if req.Line != nil {
		req.Line("stdout", []byte(fmt.Sprintf(`{"type":"turn","n":%d}`, len(a.got))))
	}
	r.Session = fmt.Sprintf("s%d", a.sess)
	return r, nil
}

// fakeSnapshots records the snapshots instead of running git.
type fakeSnapshots struct{ msgs, tags []string }

func (f *fakeSnapshots) Snapshot(ctx context.Context, dir, message, tag string) (string, error) {
	f.msgs, f.tags = append(f.msgs, message), append(f.tags, tag)
	return fmt.Sprintf("c%d", len(f.msgs)), nil
}

func testPrompts(t *testing.T) Prompts {
	p, err := LoadPrompts("", "", ".star")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newTestController(t *testing.T, ws string, g *fakeGame, a Agent, snaps Snapshotter) *Controller {
	t.Helper()
	c, err := New(Options{
		Workspace: ws, Agent: a, Prompts: testPrompts(t), Snapshots: snaps,
		Start: func(context.Context) (string, error) { g.start(); return "started\n", nil },
		Reset: func(context.Context) (string, error) { g.reset(); return "reset output\n", nil },
		Now:   func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func promptNames(t *testing.T, ws string) (names, sessions []string) {
	t.Helper()
	es, err := ReadTranscript(filepath.Join(ws, TranscriptPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Kind == KindPrompt {
			names, sessions = append(names, e.Name), append(sessions, e.Session)
		}
	}
	return names, sessions
}

func repeat(s string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, s)
	}
	return out
}

func TestControllerRunsEveryArmInBaseline1Order(t *testing.T) {
	ws := t.TempDir()
	g := newFakeGame(t, ws, 2)
	ok := func(f func()) func() TurnResult { return func() TurnResult { f(); return TurnResult{} } }
	none := func() TurnResult { return TurnResult{} }
	a := &scriptAgent{}
	a.turns = []func() TurnResult{
		ok(func() { g.act(2, "") }), // main
		none, none,                  // it1: simplification_level1, continuation (no step)
		none, ok(func() { g.act(3, "die") }), // it2 stuck: simplification_level1, stuck
		none, none, ok(func() { g.act(1, "win") }), // it3 death, simplification_level1, reset
	}
	// it4: new_level, 7 simplifications, continuation: 150 steps then death.
	a.turns = append(a.turns, none)
	for i := 0; i < 7; i++ {
		a.turns = append(a.turns, none)
	}
	a.turns = append(a.turns, ok(func() { g.act(150, "die") }))
	// it5: death, 7 simplifications, trouble1 (151 > 0+100): 250 steps, death.
	a.turns = append(a.turns, none)
	for i := 0; i < 7; i++ {
		a.turns = append(a.turns, none)
	}
	a.turns = append(a.turns, ok(func() { g.act(250, "die") }))
	// it6: death, 7 simplifications, trouble2 (400 > 0+200, fresh): 1 step, then idle → watchdog.
	a.turns = append(a.turns, none)
	for i := 0; i < 7; i++ {
		a.turns = append(a.turns, none)
	}
	a.turns = append(a.turns, func() TurnResult { g.act(1, ""); return TurnResult{TimedOut: true, ExitCode: -1} })
	// recovery (fresh), 7 simplifications, continuation: the level is won.
	a.turns = append(a.turns, none)
	for i := 0; i < 7; i++ {
		a.turns = append(a.turns, none)
	}
	a.turns = append(a.turns, ok(func() { g.act(2, "win") }))

	snaps := &fakeSnapshots{}
	c := newTestController(t, ws, g, a, snaps)
	out, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != StopSolved || out.Resets != 3 || out.Recoveries != 1 || out.Iterations != 7 {
		t.Errorf("outcome = %+v, want solved after 7 iterations, 3 resets, 1 recovery", out)
	}
	simpl := SimplificationLater
	want := []string{"main", "simplification_level1", "continuation", "simplification_level1", "stuck",
		"death", "simplification_level1", "reset", "new_level"}
	want = append(want, simpl...)
	want = append(want, "continuation", "death")
	want = append(want, simpl...)
	want = append(want, "trouble1", "death")
	want = append(want, simpl...)
	want = append(want, "trouble2", "recovery")
	want = append(want, simpl...)
	want = append(want, "continuation")
	names, sessions := promptNames(t, ws)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("prompts\n got %v\nwant %v", names, want)
	}
	var fresh []string
	for i, s := range sessions {
		if s == SessionFresh {
			fresh = append(fresh, names[i])
		}
	}
	if !reflect.DeepEqual(fresh, []string{"main", "trouble2", "recovery"}) {
		t.Errorf("fresh sessions for %v, want main, trouble2, recovery", fresh)
	}
	wantTags := []string{"iteration_1", "iteration_2", "iteration_3", "iteration_4", "iteration_5", "iteration_6"}
	if !reflect.DeepEqual(snaps.tags, wantTags) {
		t.Errorf("tags = %v, want %v", snaps.tags, wantTags)
	}
	// level_{L} {steps_total} {iteration}: it3 sees 5 steps on level 1;
	// it6 sees 2+3+1 + 150+250 = 406.
	if snaps.msgs[2] != "level_1 5 3" || snaps.msgs[5] != "level_2 406 6" {
		t.Errorf("snapshot messages = %v", snaps.msgs)
	}
	// The trouble2 prompt restates the main prompt and carries the RESET's output.
	for _, r := range a.got {
		if strings.Contains(r.Prompt, c.p("trouble2")) {
			if !strings.HasPrefix(r.Prompt, c.p("main")) || !strings.HasSuffix(r.Prompt, "reset output\n") || !r.Fresh {
				t.Errorf("trouble2 prompt = %q (fresh %v)", r.Prompt, r.Fresh)
			}
		}
	}
	es, _ := ReadTranscript(filepath.Join(ws, TranscriptPath))
	last := es[len(es)-1]
	if last.Kind != KindStop || last.Reason != StopSolved {
		t.Errorf("last entry = %+v", last)
	}
	var kinds = map[string]int{}
	for _, e := range es {
		kinds[e.Kind]++
	}
	if kinds[KindReset] != 3 || kinds[KindSnapshot] != 6 || kinds[KindTurn] != len(want) || kinds[KindAgentEvent] != len(want) {
		t.Errorf("entry counts = %v", kinds)
	}
	if _, err := os.Stat(filepath.Join(ws, "agent", "policy.json")); !os.IsNotExist(err) {
		t.Errorf("policy.json left after the run: %v", err)
	}
}

func TestChooseFollowsTheSpecOrder(t *testing.T) {
	base := Inspection{Level: 1, Attempt: 1, StepsTotal: 10, StepsLevel: 10, Status: session.Running}
	cases := []struct {
		name       string
		in         Inspection
		prev       int // previous steps total, -1 none
		prevLevel  int
		stuckAt    int // -1 none
		stop, next string
	}{
		{"no level folder stops", Inspection{}, -1, 0, -1, StopNoLevel, NextStop},
		{"1,500 steps on the level stop", Inspection{Level: 2, StepsLevel: 1500, StepsTotal: 1600}, -1, 2, -1, StopLevelSteps, NextStop},
		{"1,499 steps go on", Inspection{Level: 2, StepsLevel: 1499, StepsTotal: 1600}, 1500, 2, -1, "", NextContinuation},
		{"no new step since the stuck prompt stops", base, 10, 1, 10, StopStuck, NextStop},
		{"solved stops", Inspection{Level: 3, StepsLevel: 5, StepsTotal: 30, Solved: true, Status: session.LevelCompleted}, 20, 3, -1, StopSolved, NextStop},
		{"GAME_OVER gets the death prompt", Inspection{Level: 1, StepsLevel: 10, StepsTotal: 10, GameOver: true}, 10, 1, -1, "", NextDeath},
		{"a new level above 1 gets the new-level prompt", Inspection{Level: 2, StepsTotal: 10}, 10, 1, -1, "", NextNewLevel},
		{"level 1 is never new", base, -1, 0, -1, "", NextContinuation},
		{"no new step gets the stuck prompt", base, 10, 1, -1, "", NextStuck},
		{"new steps continue", base, 8, 1, -1, "", NextContinuation},
		{"steps after a stuck prompt continue", base, 8, 1, 8, "", NextContinuation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := New(Options{Workspace: "x", Agent: &scriptAgent{}, Prompts: testPrompts(t), Start: func(context.Context) (string, error) { return "", nil },
				Reset: func(context.Context) (string, error) { return "", nil }})
			if tc.prev >= 0 {
				c.hasPrev, c.prevSteps = true, tc.prev
			}
			c.prevLevel = tc.prevLevel
			if tc.stuckAt >= 0 {
				c.hasStuck, c.lastStuck = true, tc.stuckAt
			}
			stop, next := c.Choose(tc.in)
			if stop != tc.stop || next != tc.next {
				t.Errorf("Choose = (%q, %q), want (%q, %q)", stop, next, tc.stop, tc.next)
			}
		})
	}
}

func TestResetArmsUseTheThresholdsStrictly(t *testing.T) {
	cases := []struct {
		name    string
		steps   int
		t1, t2  int
		want    string
		fresh   bool
		t1After int
		t2After int
	}{
		{"100 steps: the normal reset prompt", 100, 0, 0, "reset", false, 0, 0},
		{"101 steps: trouble1", 101, 0, 0, "trouble1", false, 101, 0},
		{"200 steps after a trouble1 mark at 101: normal", 200, 101, 0, "reset", false, 101, 0},
		{"202 steps after marks at 101: trouble1 again", 202, 101, 101, "trouble1", false, 202, 101},
		{"202 steps after a trouble1 mark at 101 and no trouble2 mark: trouble2", 202, 101, 0, "trouble2", true, 202, 202},
		{"201 steps: trouble2 in a fresh session, both marks set", 201, 150, 0, "trouble2", true, 201, 201},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			a := &scriptAgent{}
			g := newFakeGame(t, ws, 3)
			c := newTestController(t, ws, g, a, &fakeSnapshots{})
			tr, _ := OpenTranscript(filepath.Join(ws, TranscriptPath), nil)
			c.tr = tr
			defer tr.Close()
			c.turns = 1
			c.trouble1[2], c.trouble2[2] = tc.t1, tc.t2
			in := Inspection{Level: 2, StepsLevel: tc.steps, StepsTotal: tc.steps + 10, GameOver: true}
			if err := c.resetProtocol(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			names, _ := promptNames(t, ws)
			want := append(append([]string{"death"}, SimplificationLater...), tc.want)
			if !reflect.DeepEqual(names, want) {
				t.Errorf("prompts = %v, want %v", names, want)
			}
			lastReq := a.got[len(a.got)-1]
			if lastReq.Fresh != tc.fresh || c.trouble1[2] != tc.t1After || c.trouble2[2] != tc.t2After {
				t.Errorf("fresh %v marks %d/%d, want %v %d/%d", lastReq.Fresh, c.trouble1[2], c.trouble2[2], tc.fresh, tc.t1After, tc.t2After)
			}
			if c.resets != 1 {
				t.Errorf("resets = %d", c.resets)
			}
		})
	}
}

func TestSupervisorStopsWithoutStepsAndAfterTenRecoveries(t *testing.T) {
	t.Run("a failing first turn before any step stops the run", func(t *testing.T) {
		ws := t.TempDir()
		g := newFakeGame(t, ws, 1)
		a := &scriptAgent{turns: []func() TurnResult{func() TurnResult { return TurnResult{ExitCode: 2} }}}
		out, err := newTestController(t, ws, g, a, &fakeSnapshots{}).Run(context.Background())
		if err != nil || out.Reason != StopNoSteps || out.Recoveries != 0 {
			t.Errorf("outcome %+v, %v", out, err)
		}
	})
	t.Run("an agent that always fails is recovered ten times, then stopped", func(t *testing.T) {
		ws := t.TempDir()
		g := newFakeGame(t, ws, 1)
		a := &scriptAgent{}
		a.turns = append(a.turns, func() TurnResult { g.act(1, "die"); return TurnResult{ExitCode: 1} })
		for i := 0; i < 40; i++ {
			a.turns = append(a.turns, func() TurnResult { return TurnResult{ExitCode: 1} })
		}
		out, err := newTestController(t, ws, g, a, &fakeSnapshots{}).Run(context.Background())
		if err != nil || out.Reason != StopRecoveryLimit || out.Recoveries != 10 {
			t.Fatalf("outcome %+v, %v", out, err)
		}
		// The first recovery finds GAME_OVER: the controller sends RESET
		// before the recovery prompt; later ones find a running attempt.
		if out.Resets != 1 {
			t.Errorf("resets = %d, want 1", out.Resets)
		}
		names, _ := promptNames(t, ws)
		if !reflect.DeepEqual(names, append([]string{"main"}, repeat("recovery", 10)...)) {
			t.Errorf("prompts = %v", names)
		}
	})
	t.Run("the stuck stop is recovered as baseline1's supervisor does", func(t *testing.T) {
		ws := t.TempDir()
		g := newFakeGame(t, ws, 1)
		a := &scriptAgent{}
		a.turns = []func() TurnResult{func() TurnResult { g.act(1, ""); return TurnResult{} }}
		c := newTestController(t, ws, g, a, &fakeSnapshots{})
		c.o.MaxRecoveries = 1
		out, err := c.Run(context.Background())
		if err != nil || out.Reason != StopStuck || out.Recoveries != 1 {
			t.Fatalf("outcome %+v, %v", out, err)
		}
		names, _ := promptNames(t, ws)
		want := []string{"main", "simplification_level1", "continuation", "simplification_level1", "stuck",
			"recovery", "simplification_level1", "continuation", "simplification_level1", "stuck"}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("prompts\n got %v\nwant %v", names, want)
		}
	})
}
