package worldmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"evident/arc/frame"
	"evident/arc/session"
)

// Default per-call step limits. A Starlark step is roughly one bytecode
// instruction; a model runs some 20–30 million a second on one core, built-in
// calls included, so 10 million stop an endless loop in well under a second.
const (
	// DefaultCallSteps bounds one call of the engine, reconstruction,
	// renderer or overrides, and the top-level code of each file.
	DefaultCallSteps uint64 = 10_000_000
	// DefaultPlanSteps bounds one planner call, engine calls made by its
	// searches included.
	DefaultPlanSteps uint64 = 2_000_000_000
)

// StarlarkOptions configures LoadStarlark.
type StarlarkOptions struct {
	// Dir is the folder holding EngineFile, StateIOFile and PlannerFile
	// (normally the agent workspace).
	Dir string
	// FullFramesDir is where load_initial_full_frame(level) reads
	// level_N.txt; "" means Dir/initial_full_frames.
	FullFramesDir string
	// CallSteps and PlanSteps are the per-call step limits; 0 means the
	// defaults.
	CallSteps, PlanSteps uint64
	// Print receives the output of the model's print() calls, one line
	// each; nil discards it.
	Print io.Writer
	// MemoryLimit bounds, in bytes, how much the process heap may grow
	// above its size when the model was loaded while a call runs: the live
	// objects the last collection found, or all objects (garbage included)
	// past twice the limit, sampled every 10 ms. Past it the call stops
	// with ErrMemoryLimit. One Starlark operation is not interrupted, so
	// the heap may overshoot by about one operation's result (x + x: the
	// size of x). 0 means DefaultMemoryLimit (1 GiB); a negative value
	// means no limit.
	MemoryLimit int64
}

// fileOptions are the Starlark dialect of world-model files: while loops,
// top-level if/for, set() and global reassignment are allowed (LLM-written
// Python ports need them); recursion stays off (see the package doc).
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// Starlark is the Starlark runtime of a world model (see the package doc). It
// implements Model; it is not safe for concurrent use.
type Starlark struct {
	dir, fullDir         string
	callSteps, planSteps uint64

	thread      *starlark.Thread
	predeclared starlark.StringDict
	modules     map[string]*module

	engine, reconstruct, render, overrides starlark.Callable
	planner                                starlark.Callable
	plannerErr                             error
	plannerLoaded                          bool

	fullFrames map[int]starlark.Value
	actions    map[string]starlark.Value

	// The call in progress (set by guard).
	ctx      context.Context
	fn       string
	stepHit  bool
	curLimit uint64

	memLimit, heapBase int64
	grace              time.Duration
	// stopped is set when a limit (time or memory) cancelled the call in
	// progress; memHit when it was the memory limit. callMu orders the
	// watchdog's cancel against the end of its call.
	stopped, memHit atomic.Bool
	callMu          sync.Mutex
	callSeq         uint64
	// dead is set once a call was abandoned (ErrAbandoned).
	dead error
	// printMu guards Print against an abandoned call still printing.
	printMu sync.Mutex
}

var _ Model = (*Starlark)(nil)

type module struct {
	globals starlark.StringDict
	err     error
	loading bool
}

// LoadStarlark loads the world model in opts.Dir: it runs the top-level code
// of EngineFile and StateIOFile (and of the files they load) under
// opts.CallSteps each and checks that world_model_engine,
// initial_state_reconstruction and state_renderer are defined functions
// (apply_render_overrides is optional: identity when absent). PlannerFile is
// loaded on the first Plan call. Errors are *CallError values naming the file
// (syntax errors carry file:line:col), or wrap fs.ErrNotExist for a missing
// file.
func LoadStarlark(ctx context.Context, opts StarlarkOptions) (*Starlark, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	m := &Starlark{
		dir:        dir,
		fullDir:    opts.FullFramesDir,
		callSteps:  opts.CallSteps,
		planSteps:  opts.PlanSteps,
		modules:    map[string]*module{},
		fullFrames: map[int]starlark.Value{},
		actions:    map[string]starlark.Value{},
	}
	if m.fullDir == "" {
		m.fullDir = filepath.Join(dir, session.InitialFullFramesDir)
	}
	if m.callSteps == 0 {
		m.callSteps = DefaultCallSteps
	}
	if m.planSteps == 0 {
		m.planSteps = DefaultPlanSteps
	}
	m.memLimit = opts.MemoryLimit
	if m.memLimit == 0 {
		m.memLimit = DefaultMemoryLimit
	}
	m.grace = abandonGraceMillis * time.Millisecond
	m.heapBase, _ = heapBytes()
	m.thread = &starlark.Thread{
		Name: "worldmodel",
		Load: m.load,
		OnMaxSteps: func(t *starlark.Thread) {
			m.stepHit = true
			t.Cancel("step limit reached")
		},
	}
	if w := opts.Print; w != nil {
		m.thread.Print = func(_ *starlark.Thread, msg string) {
			m.printMu.Lock()
			defer m.printMu.Unlock()
			if m.dead == nil {
				fmt.Fprintln(w, msg)
			}
		}
	} else {
		m.thread.Print = func(*starlark.Thread, string) {}
	}
	m.predeclared = starlark.StringDict{
		"RUNNING":                 starlark.String(session.Running),
		"LEVEL_COMPLETED":         starlark.String(session.LevelCompleted),
		"GAME_OVER":               starlark.String(session.GameOver),
		"grid":                    starlark.NewBuiltin("grid", builtinGrid),
		"grid_from_rows":          starlark.NewBuiltin("grid_from_rows", builtinGridFromRows),
		"load_initial_full_frame": starlark.NewBuiltin("load_initial_full_frame", m.builtinLoadFullFrame),
		"bfs":                     starlark.NewBuiltin("bfs", m.builtinBFS),
		// Starlark's own str, repr, print and fail, whose cost is not
		// counted in steps, replaced by versions that count it.
		"str":   starlark.NewBuiltin("str", m.builtinStr),
		"repr":  starlark.NewBuiltin("repr", m.builtinRepr),
		"print": starlark.NewBuiltin("print", m.builtinPrint),
		"fail":  starlark.NewBuiltin("fail", m.builtinFail),
	}
	m.predeclared.Freeze()

	eng, err := m.execTop(ctx, EngineFile)
	if err != nil {
		return nil, err
	}
	if m.engine, err = needFunc(eng, EngineFile, FuncEngine, true); err != nil {
		return nil, err
	}
	sio, err := m.execTop(ctx, StateIOFile)
	if err != nil {
		return nil, err
	}
	if m.reconstruct, err = needFunc(sio, StateIOFile, FuncReconstruct, true); err != nil {
		return nil, err
	}
	if m.render, err = needFunc(sio, StateIOFile, FuncRender, true); err != nil {
		return nil, err
	}
	if m.overrides, err = needFunc(sio, StateIOFile, FuncOverrides, false); err != nil {
		return nil, err
	}
	return m, nil
}

// needFunc returns globals[name] as a callable; a missing name is an error
// when required, else (nil, nil).
func needFunc(globals starlark.StringDict, file, name string, required bool) (starlark.Callable, error) {
	v, ok := globals[name]
	if !ok {
		if !required {
			return nil, nil
		}
		return nil, &CallError{Func: file, Err: fmt.Errorf("%w: %s does not define %s", ErrContract, file, name)}
	}
	fn, ok := v.(starlark.Callable)
	if !ok {
		return nil, &CallError{Func: file, Err: fmt.Errorf("%w: %s in %s is a %s, want a function", ErrContract, name, file, v.Type())}
	}
	return fn, nil
}

// Dir returns the absolute folder the model was loaded from.
func (m *Starlark) Dir() string { return m.dir }

// Close does nothing; it exists for Model.
func (m *Starlark) Close() error { return nil }

// allowedModule reports whether load() may name module: the three model
// files, other world_model_*.star files (helpers the agent splits its model
// into) and auxiliary planners level_N_planner_i.star, all in the
// workspace.
func allowedModule(module string) bool {
	if module == EngineFile || module == StateIOFile || module == PlannerFile {
		return true
	}
	name, ok := strings.CutSuffix(module, ".star")
	if !ok || checkAuxModule(name) != nil {
		return false
	}
	if rest, ok := strings.CutPrefix(name, "world_model_"); ok && rest != "" {
		return true
	}
	return isLevelPlanner(name)
}

// isLevelPlanner reports whether name is level_N_planner_i (N, i digits).
func isLevelPlanner(name string) bool {
	rest, ok := strings.CutPrefix(name, "level_")
	if !ok {
		return false
	}
	n, i, ok := strings.Cut(rest, "_planner_")
	return ok && allDigits(n) && allDigits(i)
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// load is the thread's Load hook: only the three world-model files, each
// executed once.
func (m *Starlark) load(_ *starlark.Thread, module string) (starlark.StringDict, error) {
	if !allowedModule(module) {
		return nil, fmt.Errorf("load of %q refused: a world model may load only %s, %s, %s, its other world_model_*.star files and level_N_planner_i.star (no other file, no library)",
			module, EngineFile, StateIOFile, PlannerFile)
	}
	return m.exec(module)
}

func (m *Starlark) exec(name string) (starlark.StringDict, error) {
	if mod, ok := m.modules[name]; ok {
		if mod.loading {
			return nil, fmt.Errorf("load cycle: %s is still being loaded", name)
		}
		return mod.globals, mod.err
	}
	mod := &module{loading: true}
	m.modules[name] = mod
	src, err := os.ReadFile(filepath.Join(m.dir, name))
	if err == nil {
		mod.globals, err = starlark.ExecFileOptions(fileOptions, m.thread, name, src, m.predeclared)
	}
	mod.loading, mod.err = false, err
	return mod.globals, err
}

// execTop runs a file's top-level code as one guarded call.
func (m *Starlark) execTop(ctx context.Context, name string) (starlark.StringDict, error) {
	v, err := m.guard(ctx, name, m.callSteps, func() (any, error) { return m.exec(name) })
	g, _ := v.(starlark.StringDict)
	return g, err
}

// guard runs body as one model call: it resets the step counter to limit,
// cancels the thread when ctx is done or the heap grows past the memory
// limit, and turns failures into *CallError. body runs on a goroutine of
// its own: when a cancelled call does not stop within the grace period
// (it is inside a built-in that does not look at cancellation), guard
// returns without it and the model is unusable (ErrAbandoned), so no
// built-in outlives the caller's time limit.
func (m *Starlark) guard(ctx context.Context, fn string, limit uint64, body func() (any, error)) (any, error) {
	if m.dead != nil {
		return nil, &CallError{Func: fn, Err: m.dead}
	}
	if err := ctx.Err(); err != nil {
		return nil, &CallError{Func: fn, Err: err}
	}
	t := m.thread
	t.Uncancel()
	t.Steps = 0
	if limit == 0 {
		limit = math.MaxUint64
	}
	t.SetMaxExecutionSteps(limit)
	m.ctx, m.fn, m.stepHit, m.curLimit = ctx, fn, false, limit
	m.stopped.Store(false)
	m.memHit.Store(false)
	m.callMu.Lock()
	m.callSeq++
	seq := m.callSeq
	m.callMu.Unlock()

	wake := make(chan struct{})
	var wakeOnce sync.Once
	cancel := func(reason string, mem bool) {
		m.callMu.Lock()
		defer m.callMu.Unlock()
		if m.callSeq != seq {
			return // that call is over
		}
		if mem {
			m.memHit.Store(true)
		}
		m.stopped.Store(true)
		t.Cancel(reason)
		wakeOnce.Do(func() { close(wake) })
	}
	stop := context.AfterFunc(ctx, func() { cancel("time limit reached", false) })
	var watch *time.Timer
	if m.memLimit > 0 {
		check := func() {
			if overMemory(m.heapBase, m.memLimit) {
				cancel(fmt.Sprintf("memory limit of %s reached", fmtBytes(m.memLimit)), true)
				return
			}
			m.callMu.Lock()
			if m.callSeq == seq {
				watch.Reset(memPollMillis * time.Millisecond)
			}
			m.callMu.Unlock()
		}
		m.callMu.Lock()
		watch = time.AfterFunc(memPollMillis*time.Millisecond, check)
		m.callMu.Unlock()
	}
	type outcome struct {
		v   any
		err error
	}
	result := make(chan outcome, 1)
	go func() {
		v, err := body()
		result <- outcome{v, err}
	}()
	var out outcome
	select {
	case out = <-result:
	case <-wake:
		select {
		case out = <-result:
		case <-time.After(m.grace):
			m.printMu.Lock()
			m.dead = fmt.Errorf("%w: %s did not stop within %s of being cancelled", ErrAbandoned, fn, m.grace)
			m.printMu.Unlock()
			out.err = m.dead
		}
	}
	err := out.err
	m.callMu.Lock()
	m.callSeq++ // late cancels of this call are ignored from here on
	if watch != nil {
		watch.Stop()
	}
	m.callMu.Unlock()
	stop()
	memHit := m.memHit.Load()
	if m.dead == nil {
		m.ctx, m.fn = nil, ""
	}
	if err == nil {
		return out.v, nil
	}
	ce := &CallError{Func: fn, Err: err}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		ce.Backtrace = ee.Backtrace()
	}
	switch {
	case ctx.Err() != nil:
		ce.Err = fmt.Errorf("%w (%w)", ctx.Err(), err)
	case memHit:
		ce.Err = fmt.Errorf("%w: %s made the heap grow by more than %s (StarlarkOptions.MemoryLimit)", ErrMemoryLimit, fn, fmtBytes(m.memLimit))
		if m.dead != nil {
			ce.Err = fmt.Errorf("%w; %v", ce.Err, m.dead)
		}
	case m.stepHit:
		ce.Err = fmt.Errorf("%w: more than %d steps in one call", ErrStepLimit, limit)
	}
	return nil, ce
}

// call calls fn under guard.
func (m *Starlark) call(ctx context.Context, name string, fn starlark.Callable, limit uint64, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r, err := m.guard(ctx, name, limit, func() (any, error) { return starlark.Call(m.thread, fn, args, kwargs) })
	v, _ := r.(starlark.Value)
	return v, err
}

func contractErr(fn, format string, args ...any) error {
	return &CallError{Func: fn, Err: fmt.Errorf("%w: "+format, append([]any{ErrContract}, args...)...)}
}

// starState is a State of the Starlark runtime: a frozen dict with an int
// "level".
type starState struct {
	m     *Starlark
	d     *starlark.Dict
	level int
}

func (s *starState) Level() int             { return s.level }
func (s *starState) Key() (StateKey, error) { return ValueKey(s.d) }
func (s *starState) String() string         { return s.d.String() }

func (m *Starlark) own(s State) (*starState, error) {
	ss, ok := s.(*starState)
	if !ok || ss == nil || ss.m != m {
		return nil, ErrForeignState
	}
	return ss, nil
}

// checkState validates and freezes a state returned by fn.
func (m *Starlark) checkState(fn string, v starlark.Value) (*starState, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, contractErr(fn, "returned a %s as the state, want a dict with an int \"level\"", v.Type())
	}
	lv, found, err := d.Get(starlark.String("level"))
	if err != nil || !found {
		return nil, contractErr(fn, "returned a state without \"level\"")
	}
	level, err := starlark.AsInt32(lv)
	if _, isInt := lv.(starlark.Int); err != nil || !isInt || level < 1 {
		return nil, contractErr(fn, "returned a state whose \"level\" is %s, want an int ≥ 1", lv)
	}
	d.Freeze()
	return &starState{m: m, d: d, level: level}, nil
}

// engineResult validates world_model_engine's (state, status).
func (m *Starlark) engineResult(v starlark.Value) (*starState, session.Status, error) {
	pair, ok := v.(starlark.Indexable)
	if _, isStr := v.(starlark.String); !ok || isStr || pair.Len() != 2 {
		return nil, "", contractErr(FuncEngine, "returned %s, want a (state, status) pair", short(v))
	}
	st, err := m.checkState(FuncEngine, pair.Index(0))
	if err != nil {
		return nil, "", err
	}
	s, ok := pair.Index(1).(starlark.String)
	status := session.Status(s)
	if !ok || (status != session.Running && status != session.LevelCompleted && status != session.GameOver) {
		return nil, "", contractErr(FuncEngine, "returned status %s, want RUNNING, LEVEL_COMPLETED or GAME_OVER", short(pair.Index(1)))
	}
	return st, status, nil
}

// short is v's repr, clipped for messages.
func short(v starlark.Value) string {
	s := v.String()
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// gridResult converts a frame returned by fn: a grid (frozen and shared) or
// a list of rows of ints. It must be 64×64.
func gridResult(fn string, v starlark.Value) (frame.Grid, error) {
	var g frame.Grid
	switch v := v.(type) {
	case *Grid:
		v.Freeze()
		g = v.g
	case starlark.Indexable:
		if _, isStr := v.(starlark.String); isStr {
			return frame.Grid{}, contractErr(fn, "returned a string, want a 64x64 grid")
		}
		gv, err := builtinGridFromRows(nil, starlark.NewBuiltin(fn, nil), starlark.Tuple{v}, nil)
		if err != nil {
			return frame.Grid{}, contractErr(fn, "returned rows that are not a frame: %v", err)
		}
		g = gv.(*Grid).g
	default:
		return frame.Grid{}, contractErr(fn, "returned a %s, want a 64x64 grid", v.Type())
	}
	if g.Width() != frame.GameSide || g.Height() != frame.GameSide {
		return frame.Grid{}, contractErr(fn, "returned a %dx%d frame, want 64x64", g.Width(), g.Height())
	}
	return g, nil
}

// actionValue is the frozen dict the engine receives for a.
func (m *Starlark) actionValue(a session.Action) (starlark.Value, error) {
	if v, ok := m.actions[a.Name]; ok && a.Name != "ACTION6" {
		return v, nil
	}
	if !strings.HasPrefix(a.Name, "ACTION") || len(a.Name) != 7 || a.Name[6] < '1' || a.Name[6] > '7' {
		return nil, fmt.Errorf("action %q is not ACTION1..ACTION7 (RESET is never sent to the engine)", a.Name)
	}
	d := starlark.NewDict(3)
	_ = d.SetKey(starlark.String("name"), starlark.String(a.Name))
	if a.Name == "ACTION6" {
		_ = d.SetKey(starlark.String("x"), starlark.MakeInt(a.X))
		_ = d.SetKey(starlark.String("y"), starlark.MakeInt(a.Y))
	}
	d.Freeze()
	if a.Name != "ACTION6" {
		m.actions[a.Name] = d
	}
	return d, nil
}

// actionOf decodes one action of a plan: a dict {"name": "ACTIONn"} (plus
// int "x", "y" in 0..63 for ACTION6; other keys are ignored) or the bare
// name string.
func actionOf(v starlark.Value) (session.Action, error) {
	var name starlark.Value = v
	d, isDict := v.(*starlark.Dict)
	if isDict {
		n, found, _ := d.Get(starlark.String("name"))
		if !found {
			return session.Action{}, fmt.Errorf("action %s has no \"name\"", short(v))
		}
		name = n
	}
	s, ok := name.(starlark.String)
	if !ok {
		return session.Action{}, fmt.Errorf("action %s: want a dict {\"name\": \"ACTIONn\", ...} or a name string", short(v))
	}
	a := session.Action{Name: string(s)}
	if needXY, err := checkPlanAction(a.Name, isDict); err != nil || !needXY {
		return a, err
	}
	for _, c := range []struct {
		key string
		dst *int
	}{{"x", &a.X}, {"y", &a.Y}} {
		cv, found, _ := d.Get(starlark.String(c.key))
		n, err := starlark.AsInt32(cv)
		if _, isInt := cv.(starlark.Int); !found || err != nil || !isInt || n < 0 || n > session.ClickMax {
			return a, fmt.Errorf("ACTION6 %q must be an int 0..63, got %s", c.key, short(orNone(cv)))
		}
		*c.dst = n
	}
	return a, nil
}

func orNone(v starlark.Value) starlark.Value {
	if v == nil {
		return starlark.None
	}
	return v
}

// Reconstruct calls initial_state_reconstruction(level, initial) with a
// frozen copy of initial.
func (m *Starlark) Reconstruct(ctx context.Context, level int, initial frame.Grid) (State, error) {
	g := NewGrid(initial.Clone(), true)
	v, err := m.call(ctx, FuncReconstruct, m.reconstruct, m.callSteps, starlark.Tuple{starlark.MakeInt(level), g}, nil)
	if err != nil {
		return nil, err
	}
	return m.checkState(FuncReconstruct, v)
}

// Step calls world_model_engine(state, action); action is the frozen dict
// {"name": ...} (with "x", "y" for ACTION6).
func (m *Starlark) Step(ctx context.Context, s State, a session.Action) (State, session.Status, error) {
	ss, err := m.own(s)
	if err != nil {
		return nil, "", err
	}
	av, err := m.actionValue(a)
	if err != nil {
		return nil, "", &CallError{Func: FuncEngine, Err: err}
	}
	v, err := m.call(ctx, FuncEngine, m.engine, m.callSteps, starlark.Tuple{ss.d, av}, nil)
	if err != nil {
		return nil, "", err
	}
	return m.engineResult(v)
}

// Render calls state_renderer(state); the result must be a 64×64 grid (or
// list of 64 rows of 64 ints) of colours 0..15.
func (m *Starlark) Render(ctx context.Context, s State) (frame.Grid, error) {
	ss, err := m.own(s)
	if err != nil {
		return frame.Grid{}, err
	}
	v, err := m.call(ctx, FuncRender, m.render, m.callSteps, starlark.Tuple{ss.d}, nil)
	if err != nil {
		return frame.Grid{}, err
	}
	return gridResult(FuncRender, v)
}

// Override calls apply_render_overrides(frame, state, level_index,
// attempt_index, step_count) on a mutable copy of f; without that function
// it returns f.
func (m *Starlark) Override(ctx context.Context, f frame.Grid, s State, level, attempt, step int) (frame.Grid, error) {
	if m.overrides == nil {
		return f, nil
	}
	ss, err := m.own(s)
	if err != nil {
		return frame.Grid{}, err
	}
	args := starlark.Tuple{NewGrid(f.Clone(), false), ss.d, starlark.MakeInt(level), starlark.MakeInt(attempt), starlark.MakeInt(step)}
	v, err := m.call(ctx, FuncOverrides, m.overrides, m.callSteps, args, nil)
	if err != nil {
		return frame.Grid{}, err
	}
	return gridResult(FuncOverrides, v)
}

// loadPlanner loads PlannerFile once.
func (m *Starlark) loadPlanner(ctx context.Context) error {
	if m.plannerLoaded {
		return m.plannerErr
	}
	m.plannerLoaded = true
	if _, err := os.Stat(filepath.Join(m.dir, PlannerFile)); errors.Is(err, fs.ErrNotExist) {
		m.plannerErr = &CallError{Func: PlannerFile, Err: fmt.Errorf("%w: %s not found in %s", ErrNoPlanner, PlannerFile, m.dir)}
		return m.plannerErr
	}
	g, err := m.execTop(ctx, PlannerFile)
	if err == nil {
		m.planner, err = needFunc(g, PlannerFile, FuncPlanner, true)
	}
	m.plannerErr = err
	return err
}

// Plan calls planner(state) or planner(state, goal=G) under the PlanSteps
// limit and decodes the plan (see actionOf).
func (m *Starlark) Plan(ctx context.Context, s State, goal json.RawMessage) ([]session.Action, error) {
	ss, err := m.own(s)
	if err != nil {
		return nil, err
	}
	if err := m.loadPlanner(ctx); err != nil {
		return nil, err
	}
	return m.plan(ctx, ss, m.planner, goal)
}

// AuxPlan runs the planner of <module>.star in the workspace (loaded once,
// its top-level code under CallSteps, as load() would) like Plan. The
// module may load the model files and the other files load() accepts; a
// missing file wraps ErrNoPlanner, a file without planner is an ErrContract
// "<module> does not define planner(state)." (baseline1
// run_aux_planner.py's message).
func (m *Starlark) AuxPlan(ctx context.Context, s State, module string, goal json.RawMessage) ([]session.Action, error) {
	ss, err := m.own(s)
	if err != nil {
		return nil, err
	}
	if err := checkAuxModule(module); err != nil {
		return nil, &CallError{Func: FuncPlanner, Err: err}
	}
	file := module + ".star"
	if _, err := os.Stat(filepath.Join(m.dir, file)); errors.Is(err, fs.ErrNotExist) {
		return nil, &CallError{Func: file, Err: fmt.Errorf("%w: %s not found in %s", ErrNoPlanner, file, m.dir)}
	}
	g, err := m.execTop(ctx, file)
	if err != nil {
		return nil, err
	}
	v, ok := g[FuncPlanner]
	if !ok {
		//lint:ignore ST1005 baseline1 run_aux_planner.py's message, word for word
		return nil, &CallError{Func: file, Err: fmt.Errorf("%w: %s does not define planner(state).", ErrContract, module)}
	}
	fn, ok := v.(starlark.Callable)
	if !ok {
		return nil, &CallError{Func: file, Err: fmt.Errorf("%w: planner in %s is a %s, want a function", ErrContract, file, v.Type())}
	}
	return m.plan(ctx, ss, fn, goal)
}

func (m *Starlark) plan(ctx context.Context, ss *starState, planner starlark.Callable, goal json.RawMessage) ([]session.Action, error) {
	r, err := m.guard(ctx, FuncPlanner, m.planSteps, func() (any, error) {
		var kwargs []starlark.Tuple
		if goal != nil {
			gv, err := starlark.Call(m.thread, starjson.Module.Members["decode"], starlark.Tuple{starlark.String(goal)}, nil)
			if err != nil {
				return nil, fmt.Errorf("goal: %w", err)
			}
			kwargs = []starlark.Tuple{{starlark.String("goal"), gv}}
		}
		return starlark.Call(m.thread, planner, starlark.Tuple{ss.d}, kwargs)
	})
	if err != nil {
		return nil, err
	}
	v, _ := r.(starlark.Value)
	if v == starlark.None {
		return nil, nil
	}
	seq, ok := v.(starlark.Indexable)
	if _, isStr := v.(starlark.String); !ok || isStr {
		return nil, contractErr(FuncPlanner, "returned a %s, want a list of actions or None", v.Type())
	}
	plan := make([]session.Action, seq.Len())
	for i := range plan {
		if plan[i], err = actionOf(seq.Index(i)); err != nil {
			return nil, contractErr(FuncPlanner, "plan action %d: %v", i+1, err)
		}
	}
	return plan, nil
}

// builtinLoadFullFrame is load_initial_full_frame(level_index): the frozen
// grid of initial_full_frames/level_N.txt, or None when there is none. Only
// initial_state_reconstruction may call it.
func (m *Starlark) builtinLoadFullFrame(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var level int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "level_index", &level); err != nil {
		return nil, err
	}
	if m.fn != FuncReconstruct {
		where := m.fn
		if strings.HasSuffix(where, ".star") {
			where += " top-level code"
		}
		return nil, fmt.Errorf("%s may be called only from %s, not from %s", b.Name(), FuncReconstruct, where)
	}
	if level < 1 {
		return nil, fmt.Errorf("%s: level %d, want ≥ 1", b.Name(), level)
	}
	if v, ok := m.fullFrames[level]; ok {
		return v, nil
	}
	g, ok, err := session.ReadInitialFullFrame(m.fullDir, level)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	var v starlark.Value = starlark.None
	if ok {
		if !g.InPalette() {
			return nil, fmt.Errorf("%s: %s holds a value outside 0..15", b.Name(), filepath.Join(m.fullDir, session.InitialFullFrameFile(level)))
		}
		v = NewGrid(g, true)
	}
	m.fullFrames[level] = v
	return v, nil
}

// checkPlanAction checks the name of one planned action (spec arc.md, the
// planner's contract): RESET is never planned, names are ACTION1..ACTION7,
// and ACTION6 must come as a dict whose "x" and "y" the caller reads next
// (needXY).
func checkPlanAction(name string, isDict bool) (needXY bool, err error) {
	switch {
	case name == "RESET":
		return false, errors.New("RESET is never part of a plan (the controller starts new attempts)")
	case len(name) != 7 || !strings.HasPrefix(name, "ACTION") || name[6] < '1' || name[6] > '7':
		return false, fmt.Errorf("action name %q, want ACTION1..ACTION7", name)
	case name != "ACTION6":
		return false, nil
	case !isDict:
		return false, errors.New("ACTION6 needs a dict with \"x\" and \"y\"")
	}
	return true, nil
}
