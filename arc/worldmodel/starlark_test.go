package worldmodel

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"evident/arc/frame"
	"evident/arc/internal/dotgame"
	"evident/arc/session"
)

// modelDir writes the reference dot-game model into a temporary folder,
// replacing the files named in override (an empty body deletes the file).
func modelDir(t *testing.T, override map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := dotgame.WriteModel(dir); err != nil {
		t.Fatal(err)
	}
	for name, body := range override {
		p := filepath.Join(dir, name)
		if body == "" {
			os.Remove(p)
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func load(t *testing.T, dir string, opts ...func(*StarlarkOptions)) *Starlark {
	t.Helper()
	o := StarlarkOptions{Dir: dir}
	for _, f := range opts {
		f(&o)
	}
	m, err := LoadStarlark(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// initial is level's first frame as the game sends it.
func initial(level int) frame.Grid {
	g := dotgame.Background(level)
	s := dotgame.Levels[level-1].Start
	g.Set(s.X, s.Y, dotgame.Dot)
	return g
}

const bareIO = `
def initial_state_reconstruction(level_index, initial_frame):
    return {"level": level_index}

def state_renderer(state):
    return grid(64, 64)
`

// TestReferenceModelReplaysTheGame plays a session of the real game and
// checks the reference model predicts every status and RUNNING frame.
func TestReferenceModelReplaysTheGame(t *testing.T) {
	root := filepath.Join(t.TempDir(), "client", "session")
	script := "RESET 4 4 5 6:15,47 5 1 2 2 2 RESET 1 1 1 1 1 " + strings.Repeat("4 ", 20) + "2 2 2 2 2 3 3 3 3 3 3 1"
	if err := dotgame.Play(root, dotgame.Actions(script)); err != nil {
		t.Fatal(err)
	}
	sess, err := session.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	m := load(t, modelDir(t, nil))
	ctx := context.Background()
	steps := 0
	for _, lvl := range sess.Levels {
		for _, att := range lvl.Attempts {
			s, err := m.Reconstruct(ctx, lvl.Index, att.InitialFrame)
			if err != nil {
				t.Fatal(err)
			}
			if g, err := m.Render(ctx, s); err != nil || !frame.Equal(g, att.InitialFrame) {
				t.Fatalf("level %d attempt %d initial: %v", lvl.Index, att.Index, err)
			}
			for _, st := range att.Steps {
				var status session.Status
				s, status, err = m.Step(ctx, s, st.Action)
				if err != nil {
					t.Fatal(err)
				}
				if status != st.Observed {
					t.Fatalf("level %d attempt %d step %d: status %s, observed %s", lvl.Index, att.Index, st.Index, status, st.Observed)
				}
				steps++
				if status != session.Running {
					continue
				}
				g, err := m.Render(ctx, s)
				if err != nil || !frame.Equal(g, st.Final) {
					t.Fatalf("level %d attempt %d step %d: frame differs (%v)", lvl.Index, att.Index, st.Index, err)
				}
			}
		}
	}
	if len(sess.Levels) != 2 || steps < 40 {
		t.Fatalf("session has %d levels, %d steps", len(sess.Levels), steps)
	}
}

// TestSandboxRefusesFiles: load() only names the three model files, and
// nothing else that touches files, clocks or randomness is defined.
func TestSandboxRefusesFiles(t *testing.T) {
	cases := []struct {
		name, file, body, want string
	}{
		{"load os", EngineFile, `load("os", "open")`, `load of "os" refused: a world model may load only world_model_engine.star, world_model_state_io.star, world_model_main_planner.star, its other world_model_*.star files and level_N_planner_i.star (no other file, no library)`},
		{"load another file", StateIOFile, `load("secrets.star", "x")`, `load of "secrets.star" refused`},
		{"load by path", StateIOFile, `load("../world_model_engine.star", "MOVES")`, `load of "../world_model_engine.star" refused`},
		{"load session file", StateIOFile, `load("client/session/level_01_attempt_01/step_0001_final.txt", "x")`, `refused`},
		{"open", EngineFile, "def world_model_engine(state, action):\n    return open(\"x\"), RUNNING\n", `world_model_engine.star:2:12: undefined: open`},
		{"time", EngineFile, "T = time.now()\n", `undefined: time`},
		{"random", EngineFile, "R = random()\n", `undefined: random`},
		{"cycle", EngineFile, "load(\"world_model_state_io.star\", \"state_renderer\")\n", `load cycle`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			over := map[string]string{c.file: c.body}
			if c.name == "cycle" {
				over[StateIOFile] = "load(\"world_model_engine.star\", \"world_model_engine\")\n" + bareIO
			}
			_, err := LoadStarlark(context.Background(), StarlarkOptions{Dir: modelDir(t, over)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
		})
	}

	t.Run("loading the model files from each other works", func(t *testing.T) {
		dir := modelDir(t, map[string]string{StateIOFile: "load(\"world_model_engine.star\", \"WALL\")\n" + bareIO + "\nW = WALL\n"})
		load(t, dir)
	})

	t.Run("load_initial_full_frame only in initial_state_reconstruction", func(t *testing.T) {
		dir := modelDir(t, map[string]string{EngineFile: "def world_model_engine(state, action):\n    load_initial_full_frame(1)\n    return state, RUNNING\n"})
		m := load(t, dir)
		s, err := m.Reconstruct(context.Background(), 1, initial(1))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = m.Step(context.Background(), s, session.Action{Name: "ACTION1"})
		if err == nil || !strings.Contains(err.Error(), "load_initial_full_frame may be called only from initial_state_reconstruction, not from world_model_engine") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLoadInitialFullFrame(t *testing.T) {
	dir := modelDir(t, map[string]string{StateIOFile: `
def initial_state_reconstruction(level_index, initial_frame):
    full = load_initial_full_frame(level_index)
    if full == None:
        return {"level": level_index, "full": None}
    return {"level": level_index, "full": (full.width, full.height, full.get(69, 65))}

def state_renderer(state):
    return grid(64, 64)
`})
	full := filepath.Join(dir, session.InitialFullFramesDir)
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	big, _ := frame.New(70, 66)
	big.Set(69, 65, 7)
	if err := big.WriteASCIIFile(filepath.Join(full, "level_2.txt")); err != nil {
		t.Fatal(err)
	}
	m := load(t, dir)
	for level, want := range map[int]string{1: `{"level": 1, "full": None}`, 2: `{"level": 2, "full": (70, 66, 7)}`} {
		s, err := m.Reconstruct(context.Background(), level, initial(1))
		if err != nil {
			t.Fatal(err)
		}
		if s.String() != want {
			t.Errorf("level %d: state %s, want %s", level, s, want)
		}
	}
}

func TestStepLimit(t *testing.T) {
	dir := modelDir(t, map[string]string{EngineFile: `
def world_model_engine(state, action):
    n = 0
    while True:
        n += 1
    return state, RUNNING
`})
	m := load(t, dir, func(o *StarlarkOptions) { o.CallSteps = 100_000 })
	ctx := context.Background()
	s, err := m.Reconstruct(ctx, 1, initial(1))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = m.Step(ctx, s, session.Action{Name: "ACTION1"})
	var ce *CallError
	if !errors.Is(err, ErrStepLimit) || !errors.As(err, &ce) || ce.Func != FuncEngine {
		t.Fatalf("err = %v, want a world_model_engine step-limit error", err)
	}
	if want := "world_model_engine: step limit exceeded: more than 100000 steps in one call"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if !strings.Contains(ce.Backtrace, "in world_model_engine") {
		t.Errorf("backtrace does not point at the loop:\n%s", ce.Backtrace)
	}
	if d := time.Since(start); d > 20*time.Second { // prompt: the loop would never end
		t.Errorf("step limit took %v", d)
	}
	// The limit is per call: the next call starts afresh.
	if _, err := m.Render(ctx, s); err != nil {
		t.Fatalf("render after a step-limit failure: %v", err)
	}

	t.Run("top-level code is limited too", func(t *testing.T) {
		dir := modelDir(t, map[string]string{EngineFile: "while True:\n    pass\n"})
		_, err := LoadStarlark(ctx, StarlarkOptions{Dir: dir, CallSteps: 10_000})
		if !errors.Is(err, ErrStepLimit) || !strings.HasPrefix(err.Error(), "world_model_engine.star: step limit exceeded") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDeadlineCancelsTheCall(t *testing.T) {
	dir := modelDir(t, map[string]string{EngineFile: `
def world_model_engine(state, action):
    while True:
        pass
`})
	m := load(t, dir, func(o *StarlarkOptions) { o.CallSteps = 1 << 62 })
	s, err := m.Reconstruct(context.Background(), 1, initial(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = m.Step(ctx, s, session.Action{Name: "ACTION1"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 20*time.Second { // prompt: the loop would never end
		t.Errorf("cancel took %v", d)
	}
	// A fresh context works again.
	if _, err := m.Render(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

func TestContract(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, engine, want string
	}{
		{"not a pair", "def world_model_engine(state, action):\n    return state\n", `world_model_engine: world model contract violated: returned {"level": 1`},
		{"bad status", "def world_model_engine(state, action):\n    return state, \"WON\"\n", `returned status "WON", want RUNNING, LEVEL_COMPLETED or GAME_OVER`},
		{"no level", "def world_model_engine(state, action):\n    return {}, RUNNING\n", `returned a state without "level"`},
		{"list state", "def world_model_engine(state, action):\n    return [1], RUNNING\n", `returned a list as the state`},
		{"mutates its input", "def world_model_engine(state, action):\n    state[\"x\"] = 1\n    return state, RUNNING\n", `cannot insert into frozen hash table`},
		{"mutates a state grid", "def world_model_engine(state, action):\n    state[\"g\"].set(0, 0, 1)\n    return state, RUNNING\n", `grid.set: grid is frozen`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := load(t, modelDir(t, map[string]string{EngineFile: c.engine, StateIOFile: `
def initial_state_reconstruction(level_index, initial_frame):
    return {"level": level_index, "g": initial_frame}

def state_renderer(state):
    return grid(64, 64)
`}))
			s, err := m.Reconstruct(ctx, 1, initial(1))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = m.Step(ctx, s, session.Action{Name: "ACTION1"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant %q", err, c.want)
			}
		})
	}

	renders := []struct{ body, want string }{
		{"return grid(63, 64)", "state_renderer: world model contract violated: returned a 63x64 frame, want 64x64"},
		{"return [[0] * 64] * 64", ""},
		{"return [[16] * 64] * 64", "cell (0, 0) = 16, want an int 0..15"},
		{"return 3", "returned a int, want a 64x64 grid"},
	}
	for _, r := range renders {
		m := load(t, modelDir(t, map[string]string{StateIOFile: "def initial_state_reconstruction(level_index, initial_frame):\n    return {\"level\": level_index}\n\ndef state_renderer(state):\n    " + r.body + "\n"}))
		s, err := m.Reconstruct(ctx, 1, initial(1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Render(ctx, s)
		if (r.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), r.want)) {
			t.Errorf("%s: err = %v, want %q", r.body, err, r.want)
		}
	}

	for _, missing := range []struct{ file, body, want string }{
		{StateIOFile, "def initial_state_reconstruction(level_index, initial_frame):\n    return {}\n", "world_model_state_io.star does not define state_renderer"},
		{EngineFile, "world_model_engine = 3\n", "world_model_engine in world_model_engine.star is a int, want a function"},
		{EngineFile, "", EngineFile},
	} {
		_, err := LoadStarlark(ctx, StarlarkOptions{Dir: modelDir(t, map[string]string{missing.file: missing.body})})
		if err == nil || !strings.Contains(err.Error(), missing.want) {
			t.Errorf("err = %v, want %q", err, missing.want)
		}
		if missing.body == "" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
		}
	}

	t.Run("foreign state", func(t *testing.T) {
		a, b := load(t, modelDir(t, nil)), load(t, modelDir(t, nil))
		s, _ := a.Reconstruct(ctx, 1, initial(1))
		if _, _, err := b.Step(ctx, s, session.Action{Name: "ACTION1"}); !errors.Is(err, ErrForeignState) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestOverrides(t *testing.T) {
	ctx := context.Background()
	m := load(t, modelDir(t, map[string]string{StateIOFile: bareIO + `
def apply_render_overrides(frame, state, level_index, attempt_index, step_count):
    if step_count == 2:
        frame.set(level_index, attempt_index, 5)
    return frame
`}))
	s, _ := m.Reconstruct(ctx, 1, initial(1))
	base, _ := m.Render(ctx, s)
	same, err := m.Override(ctx, base, s, 3, 4, 1)
	if err != nil || !frame.Equal(same, base) {
		t.Fatalf("step 1: %v", err)
	}
	patched, err := m.Override(ctx, base, s, 3, 4, 2)
	if err != nil || frame.CountMismatches(patched, base) != 1 || patched.At(3, 4) != 5 || base.At(3, 4) != 0 {
		t.Fatalf("step 2: %v", err)
	}

	// Without apply_render_overrides the frame passes unchanged.
	m2 := load(t, modelDir(t, map[string]string{StateIOFile: bareIO}))
	s2, _ := m2.Reconstruct(ctx, 1, initial(1))
	if g, err := m2.Override(ctx, base, s2, 1, 1, 0); err != nil || !frame.Equal(g, base) {
		t.Fatal(err)
	}
}

func TestPlanner(t *testing.T) {
	ctx := context.Background()
	m := load(t, modelDir(t, nil))
	for level := 1; level <= len(dotgame.Levels); level++ {
		s, err := m.Reconstruct(ctx, level, initial(level))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := m.Plan(ctx, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := dotgame.ShortestPath(level); len(plan) != want {
			t.Fatalf("level %d: plan of %d actions, shortest is %d", level, len(plan), want)
		}
		status := session.Running
		for _, a := range plan {
			if s, status, err = m.Step(ctx, s, a); err != nil {
				t.Fatal(err)
			}
		}
		if status != session.LevelCompleted {
			t.Fatalf("level %d: plan ends %s", level, status)
		}
	}

	t.Run("goal", func(t *testing.T) {
		s, _ := m.Reconstruct(ctx, 1, initial(1))
		plan, err := m.Plan(ctx, s, json.RawMessage(`{"x": 12, "y": 30}`))
		if err != nil || len(plan) != 4 {
			t.Fatalf("plan %v, err %v; want 4 moves", plan, err)
		}
	})

	t.Run("plan contract", func(t *testing.T) {
		for body, want := range map[string]string{
			`return [{"name": "RESET"}]`:              "plan action 1: RESET is never part of a plan",
			`return ["ACTION1", {"name": "ACTION6"}]`: `plan action 2: ACTION6 "x" must be an int 0..63, got None`,
			`return "ACTION1"`:                        "returned a string, want a list of actions or None",
			`return [{"name": "ACTION9"}]`:            `action name "ACTION9"`,
		} {
			m := load(t, modelDir(t, map[string]string{PlannerFile: "def planner(state):\n    " + body + "\n"}))
			s, _ := m.Reconstruct(ctx, 1, initial(1))
			if _, err := m.Plan(ctx, s, nil); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want %q", body, err, want)
			}
		}
		m := load(t, modelDir(t, map[string]string{PlannerFile: "def planner(state):\n    return [\"ACTION2\", {\"name\": \"ACTION6\", \"x\": 15, \"y\": 47}]\n"}))
		s, _ := m.Reconstruct(ctx, 1, initial(1))
		plan, err := m.Plan(ctx, s, nil)
		if err != nil || len(plan) != 2 || plan[1] != (session.Action{Name: "ACTION6", X: 15, Y: 47}) {
			t.Fatalf("plan %v, err %v", plan, err)
		}
	})

	t.Run("no planner file", func(t *testing.T) {
		m := load(t, modelDir(t, map[string]string{PlannerFile: ""}))
		s, _ := m.Reconstruct(ctx, 1, initial(1))
		if _, err := m.Plan(ctx, s, nil); !errors.Is(err, ErrNoPlanner) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestBFSFindsAShortestPlan checks the bfs built-in and the Go BFS against
// an independent Go search of the same level.
func TestBFSFindsAShortestPlan(t *testing.T) {
	ctx := context.Background()
	m := load(t, modelDir(t, map[string]string{PlannerFile: `
MOVES = ["ACTION1", "ACTION2", "ACTION3", "ACTION4"]

def planner(state, goal = None):
    if goal == None:
        return bfs(state, MOVES)
    if goal["kind"] == "bound":
        return bfs(state, MOVES, max_nodes = goal["n"])
    if goal["kind"] == "actions_fn":
        return bfs(state, lambda s: MOVES if s["x"] < 40 else [], key = lambda s: (s["x"], s["y"]))
    fail("unknown goal")
`}))
	moves := []session.Action{{Name: "ACTION1"}, {Name: "ACTION2"}, {Name: "ACTION3"}, {Name: "ACTION4"}}
	for level := 1; level <= len(dotgame.Levels); level++ {
		want := dotgame.ShortestPath(level)
		s, err := m.Reconstruct(ctx, level, initial(level))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := m.Plan(ctx, s, nil)
		if err != nil || len(plan) != want {
			t.Fatalf("level %d: bfs built-in plan %d actions (err %v), shortest %d", level, len(plan), err, want)
		}
		gplan, stats, err := BFS(ctx, m, s, BFSOptions{Actions: moves})
		if err != nil || len(gplan) != want || stats.Truncated {
			t.Fatalf("level %d: Go BFS plan %d actions (err %v, %+v), shortest %d", level, len(gplan), err, stats, want)
		}
		for i := range plan {
			if plan[i] != gplan[i] {
				t.Fatalf("level %d: built-in and Go BFS differ at action %d: %v vs %v", level, i+1, plan[i], gplan[i])
			}
		}
		if _, err := m.Plan(ctx, s, json.RawMessage(`{"kind": "actions_fn"}`)); err != nil {
			t.Fatal(err)
		}
	}

	s, _ := m.Reconstruct(ctx, 1, initial(1))
	plan, err := m.Plan(ctx, s, json.RawMessage(`{"kind": "bound", "n": 50}`))
	if err != nil || plan != nil {
		t.Fatalf("bounded search: plan %v, err %v; want None", plan, err)
	}
	_, stats, err := BFS(ctx, m, s, BFSOptions{Actions: moves, MaxNodes: 50})
	if err != nil || !stats.Truncated || stats.States != 50 {
		t.Fatalf("bounded Go BFS: %+v, %v", stats, err)
	}
	// A goal on the start state gives the empty plan.
	plan, _, err = BFS(ctx, m, s, BFSOptions{Actions: moves, Goal: func(State, session.Status) bool { return true }})
	if err != nil || plan == nil || len(plan) != 0 {
		t.Fatalf("goal at start: %v, %v", plan, err)
	}
}
