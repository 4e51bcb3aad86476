package worldmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"evident/arc/frame"
	"evident/arc/session"
)

// ProtocolVersion is the version of the subprocess protocol this package
// speaks (the "protocol" of the hello request).
const ProtocolVersion = 1

// DefaultLoadTimeout bounds the hello exchange (starting the program and
// loading the model) when SubprocessOptions.LoadTimeout is 0.
const DefaultLoadTimeout = time.Minute

const (
	// maxLine bounds one response line.
	maxLine = 64 << 20
	// tailBytes and tailLines bound the stderr kept for error messages.
	tailBytes = 8 << 10
	tailLines = 40
	// exitGrace is how long a child that closed its stdout may take to exit
	// before it is killed; also the exec.Cmd WaitDelay.
	exitGrace = 2 * time.Second
	// funcStart names the hello exchange in errors.
	funcStart = "world model subprocess"
	// funcKey names the key request in errors.
	funcKey = "state key"
)

var (
	// ErrSubprocess: the model program broke the protocol — it exited, was
	// stopped, or wrote something that is not the response it owed. The
	// Subprocess is unusable afterwards.
	ErrSubprocess = errors.New("world model subprocess failed")
	// ErrCallTimeout: one call ran longer than SubprocessOptions.CallTimeout;
	// the program was killed.
	ErrCallTimeout = errors.New("call time limit exceeded")
)

// SubprocessOptions configures LoadSubprocess.
type SubprocessOptions struct {
	// Command is the model program, a command line run by "sh -c" in Dir.
	// PythonCommand ("python") is short for PythonCommandLine; every
	// AdapterPlaceholder ("{adapter}") is replaced by the path of the
	// embedded Python adapter, written to a temporary folder that Close
	// removes.
	Command string
	// Dir is the agent workspace: the program's working directory and the
	// "workspace" of the hello request.
	Dir string
	// FullFramesDir is where the model's load_initial_full_frame reads
	// level_N.txt; "" means Dir/initial_full_frames.
	FullFramesDir string
	// Print receives the program's stderr as it comes (the model's print()
	// output, under the adapter); nil discards it. The last lines are also
	// kept for error messages.
	Print io.Writer
	// LoadTimeout bounds the hello exchange; 0 means DefaultLoadTimeout.
	LoadTimeout time.Duration
	// CallTimeout bounds each reconstruct, step, render, override and key
	// call (not plan); 0 means no bound beyond the caller's context.
	CallTimeout time.Duration
	// Sandbox confines the program (see SandboxMode and the package doc,
	// "Subprocess runtime: the sandbox"); "" is SandboxAuto: bubblewrap
	// where it works, else guard-rail mode with a notice.
	Sandbox SandboxMode
	// MemoryLimit is the sandboxed program's address space (RLIMIT_AS) in
	// bytes; 0 means DefaultSubprocessMemory, negative none. MaxProcesses
	// is its RLIMIT_NPROC; 0 means DefaultSubprocessProcesses, negative
	// none. Both need bubblewrap and prlimit (util-linux); guard-rail mode
	// sets no limit.
	MemoryLimit  int64
	MaxProcesses int
	// Notice receives the one-line notice of a fallback to guard-rail
	// mode; nil means Print.
	Notice io.Writer
}

// Subprocess is the subprocess runtime of a world model: a program speaking
// the JSON-lines protocol of the package doc ("Subprocess runtime"). It
// implements Model; it is not safe for concurrent use.
type Subprocess struct {
	dir, fullDir string
	callTimeout  time.Duration
	tmpDir       string
	sandbox      string

	cmd     *osexec.Cmd
	stdin   *os.File
	stdout  *os.File
	out     *bufio.Reader
	stderr  *tailWriter
	exited  chan struct{}
	waitErr error

	dead     error // non-nil once unusable (wraps ErrSubprocess or a context error)
	closed   bool
	nextID   int64
	runtime  string
	override bool
	wantKeys bool
	lastCtx  context.Context

	mu       sync.Mutex
	released []int64 // handles of states the Go side dropped, sent with the next request
}

var _ Model = (*Subprocess)(nil)

// LoadSubprocess starts opts.Command in opts.Dir and exchanges hello within
// opts.LoadTimeout: the program loads the model and reports whether it has
// apply_render_overrides. ctx bounds the program's whole life
// (exec.CommandContext): when it is done the program is killed. Errors are
// *CallError values: Func is the model file when the program reports one
// (a syntax error, a missing function; a missing file wraps fs.ErrNotExist),
// else "world model subprocess", with the program's stderr tail as the
// backtrace when it exited.
func LoadSubprocess(ctx context.Context, opts SubprocessOptions) (*Subprocess, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(opts.Command) == "" {
		return nil, errors.New("worldmodel: empty subprocess command")
	}
	m := &Subprocess{dir: dir, fullDir: opts.FullFramesDir, callTimeout: opts.CallTimeout, exited: make(chan struct{})}
	if m.fullDir == "" {
		m.fullDir = filepath.Join(dir, session.InitialFullFramesDir)
	} else if m.fullDir, err = filepath.Abs(m.fullDir); err != nil {
		return nil, err
	}
	command, tmp, err := expandCommand(opts.Command)
	if err != nil {
		return nil, err
	}
	m.tmpDir = tmp
	notice := opts.Notice
	if notice == nil {
		notice = opts.Print
	}
	spec := sandboxSpec{dir: dir, fullDir: m.fullDir, adapterDir: tmp, command: command, memory: opts.MemoryLimit, processes: opts.MaxProcesses}
	if spec.memory == 0 {
		spec.memory = DefaultSubprocessMemory
	}
	if spec.processes == 0 {
		spec.processes = DefaultSubprocessProcesses
	}
	wrap, used, err := chooseSandbox(opts.Sandbox, spec, notice)
	if err != nil {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		return nil, err
	}
	m.sandbox = used
	if err := m.start(ctx, wrap, command, opts.Print); err != nil {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		return nil, err
	}
	limit := opts.LoadTimeout
	if limit <= 0 {
		limit = DefaultLoadTimeout
	}
	var r response
	err = m.call(ctx, funcStart, &request{Op: "hello", Protocol: ProtocolVersion, Workspace: m.dir, FullFrames: m.fullDir}, limit, &r)
	if err == nil && r.Protocol != ProtocolVersion {
		err = m.broken(funcStart, fmt.Sprintf("answered hello with protocol %d, want %d", r.Protocol, ProtocolVersion))
	}
	if err != nil {
		var ce *CallError
		if errors.As(err, &ce) && errors.Is(ce.Err, ErrCallTimeout) {
			ce.Err = fmt.Errorf("%w: no answer to hello within %s (%s)", ErrSubprocess, limit, opts.Command)
		}
		m.Close()
		return nil, err
	}
	m.runtime, m.override = r.Runtime, r.Overrides
	return m, nil
}

func (m *Subprocess) start(ctx context.Context, wrap []string, command string, print io.Writer) error {
	argv := append(append([]string{}, wrap...), "sh", "-c", command)
	cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = m.dir
	ownProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = exitGrace
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	m.stderr = &tailWriter{w: print}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, m.stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return fmt.Errorf("worldmodel: start %q: %w", command, err)
	}
	m.cmd, m.stdin, m.stdout = cmd, inW, outR
	m.out = bufio.NewReaderSize(outR, 64<<10)
	go func() {
		m.waitErr = cmd.Wait()
		close(m.exited)
	}()
	return nil
}

// Dir returns the absolute workspace the program runs in.
func (m *Subprocess) Dir() string { return m.dir }

// Sandbox names what confines the program: "bwrap" (bubblewrap) or
// "guard-rail" (a process group of its own; see the package doc).
func (m *Subprocess) Sandbox() string { return m.sandbox }

// Runtime returns the program's own description from hello (the adapter:
// "python 3.11.2, numpy 1.24.2"), or "".
func (m *Subprocess) Runtime() string { return m.runtime }

// Close ends the program: it closes its stdin (the adapter then exits),
// kills it after a short grace period, and removes the adapter's temporary
// folder. It returns nil; calls after Close fail.
func (m *Subprocess) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	if m.dead == nil {
		m.dead = fmt.Errorf("%w: closed", ErrSubprocess)
	}
	m.stdin.Close()
	select {
	case <-m.exited:
	case <-time.After(exitGrace):
		m.kill()
		<-m.exited
	}
	m.stdout.Close()
	if m.tmpDir != "" {
		os.RemoveAll(m.tmpDir)
	}
	return nil
}

// kill stops the program's process group and unblocks a pending read.
func (m *Subprocess) kill() {
	_ = killGroup(m.cmd.Process)
	m.stdout.Close()
	m.stdin.Close()
}

// request is one protocol request; fields are sent only when set.
type request struct {
	ID      int64           `json:"id"`
	Op      string          `json:"op"`
	Release []int64         `json:"release,omitempty"`
	State   int64           `json:"state,omitempty"`
	Key     bool            `json:"key,omitempty"`
	Level   int             `json:"level,omitempty"`
	Frame   []string        `json:"frame,omitempty"`
	Action  *actionRequest  `json:"action,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	Step    *int            `json:"step,omitempty"`
	Goal    json.RawMessage `json:"goal,omitempty"`
	Module  string          `json:"module,omitempty"`

	Protocol   int    `json:"protocol,omitempty"`
	Workspace  string `json:"workspace,omitempty"`
	FullFrames string `json:"full_frames,omitempty"`
}

type actionRequest struct {
	Name string `json:"name"`
	X    *int   `json:"x,omitempty"`
	Y    *int   `json:"y,omitempty"`
}

// response is the union of the protocol's responses.
type response struct {
	ID        *int64  `json:"id"`
	Error     *string `json:"error"`
	Kind      string  `json:"kind"`
	Func      string  `json:"func"`
	Traceback string  `json:"traceback"`

	OK        bool   `json:"ok"`
	Protocol  int    `json:"protocol"`
	Overrides bool   `json:"overrides"`
	Runtime   string `json:"runtime"`

	State    int64           `json:"state"`
	Level    int             `json:"level"`
	Key      string          `json:"key"`
	KeyError string          `json:"key_error"`
	Status   string          `json:"status"`
	Frame    json.RawMessage `json:"frame"`
	Plan     json.RawMessage `json:"plan"`
}

// call sends req and decodes the response into r. timeout > 0 bounds this
// call alone. A context or timeout ending kills the program. Failures are
// *CallError values naming fn (or the file the program names).
func (m *Subprocess) call(ctx context.Context, fn string, req *request, timeout time.Duration, r *response) error {
	if m.dead != nil {
		return &CallError{Func: fn, Err: m.dead}
	}
	if err := ctx.Err(); err != nil {
		return &CallError{Func: fn, Err: err}
	}
	m.lastCtx = ctx
	callCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(ctx, timeout, ErrCallTimeout)
		defer cancel()
	}
	m.nextID++
	req.ID = m.nextID
	m.mu.Lock()
	req.Release, m.released = m.released, nil
	m.mu.Unlock()
	line, err := json.Marshal(req)
	if err != nil {
		return &CallError{Func: fn, Err: err}
	}
	killed := make(chan struct{})
	stop := context.AfterFunc(callCtx, func() {
		m.kill()
		close(killed)
	})
	_, werr := m.stdin.Write(append(line, '\n'))
	var got []byte
	var rerr error
	if werr == nil {
		got, rerr = m.readLine()
	}
	if !stop() {
		<-killed
		<-m.exited
		var err error
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (the world model subprocess was killed)", ctx.Err())
		} else {
			err = fmt.Errorf("%w: %s ran longer than %s (the world model subprocess was killed)", ErrCallTimeout, fn, timeout)
		}
		m.dead = fmt.Errorf("%w: killed after %v", ErrSubprocess, err)
		return &CallError{Func: fn, Err: err}
	}
	if werr != nil || rerr != nil {
		if errors.Is(rerr, errLineTooLong) {
			return m.broken(fn, "wrote a response line longer than 64 MiB")
		}
		return m.exitError(fn)
	}
	if err := json.Unmarshal(got, r); err != nil || r.ID == nil || *r.ID != req.ID {
		what := "not a JSON object"
		if err == nil && r.ID == nil {
			what = "no \"id\""
		} else if err == nil {
			what = fmt.Sprintf("id %d, want %d", *r.ID, req.ID)
		}
		return m.broken(fn, fmt.Sprintf("answered %s with a malformed response (%s; want one JSON object per line): %s", req.Op, what, clip(got)))
	}
	if r.Error != nil {
		return m.responseError(fn, r)
	}
	return nil
}

var errLineTooLong = errors.New("response line too long")

// readLine reads one response line without its newline.
func (m *Subprocess) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := m.out.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			if len(line) > maxLine {
				return nil, errLineTooLong
			}
			continue
		case err != nil:
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

// exitError reports that the program stopped answering: it waits for the
// exit (killing it after exitGrace) and names the exit status and stderr.
func (m *Subprocess) exitError(fn string) error {
	select {
	case <-m.exited:
	case <-time.After(exitGrace):
		m.kill()
		<-m.exited
	}
	status := "exit status 0"
	if m.waitErr != nil {
		status = m.waitErr.Error()
	}
	m.dead = fmt.Errorf("%w: it exited (%s)", ErrSubprocess, status)
	return &CallError{Func: fn, Err: fmt.Errorf("%w: the program exited (%s) during %s", ErrSubprocess, status, fn), Backtrace: m.stderrTail()}
}

// broken kills the program after a protocol violation.
func (m *Subprocess) broken(fn, what string) error {
	m.kill()
	<-m.exited
	m.dead = fmt.Errorf("%w: it broke the protocol", ErrSubprocess)
	return &CallError{Func: fn, Err: fmt.Errorf("%w: the program %s", ErrSubprocess, what), Backtrace: m.stderrTail()}
}

func (m *Subprocess) stderrTail() string {
	t := m.stderr.tail()
	if t == "" {
		return ""
	}
	return "stderr of the world model subprocess (last lines):\n" + t
}

// responseError turns an error response into a *CallError.
func (m *Subprocess) responseError(fn string, r *response) error {
	if r.Func != "" {
		fn = r.Func
	}
	msg := *r.Error
	var err error
	switch r.Kind {
	case "contract":
		err = fmt.Errorf("%w: %s", ErrContract, msg)
	case "no_planner":
		err = fmt.Errorf("%w: %s", ErrNoPlanner, msg)
	case "missing":
		err = fmt.Errorf("%s: %w", msg, fs.ErrNotExist)
	case "state":
		err = fmt.Errorf("%w: %s", ErrForeignState, msg)
	default:
		err = errors.New(msg)
	}
	return &CallError{Func: fn, Err: err, Backtrace: r.Traceback}
}

// subState is a State of the subprocess runtime: a handle to a state the
// program holds.
type subState struct {
	m       *Subprocess
	h       int64
	level   int
	key     StateKey
	keyErr  error
	keyDone bool
}

func (s *subState) Level() int { return s.level }

// Key returns the state's key: the one the program sent with the state, or
// one fetched with a "key" request under the context of the Model's latest
// call. After the first fetch, every new state comes with its key (searches
// want them all).
func (s *subState) Key() (StateKey, error) {
	if !s.keyDone {
		s.m.fetchKey(s)
	}
	return s.key, s.keyErr
}

func (s *subState) String() string {
	return fmt.Sprintf("subprocess state #%d (level %d)", s.h, s.level)
}

func (m *Subprocess) own(s State) (*subState, error) {
	ss, ok := s.(*subState)
	if !ok || ss == nil || ss.m != m {
		return nil, ErrForeignState
	}
	return ss, nil
}

func (m *Subprocess) fetchKey(s *subState) {
	m.wantKeys = true
	ctx := m.lastCtx
	if ctx == nil {
		ctx = context.Background()
	}
	var r response
	if err := m.call(ctx, funcKey, &request{Op: "key", State: s.h}, m.callTimeout, &r); err != nil {
		s.keyErr, s.keyDone = err, true
		return
	}
	s.setKey(r.Key, "")
}

func (s *subState) setKey(hex, keyErr string) {
	switch {
	case keyErr != "":
		s.keyErr = &CallError{Func: funcKey, Err: fmt.Errorf("%w: %s", ErrContract, keyErr)}
	case hex == "":
		return // not sent: fetched on demand
	default:
		k, err := parseKey(hex)
		if err != nil {
			s.keyErr = &CallError{Func: funcKey, Err: fmt.Errorf("%w: %v", ErrSubprocess, err)}
		}
		s.key = k
	}
	s.keyDone = true
}

// parseKey decodes 32 hex digits.
func parseKey(s string) (StateKey, error) {
	if len(s) != 32 {
		return StateKey{}, fmt.Errorf("key %q: want 32 hex digits", s)
	}
	hi, err1 := strconv.ParseUint(s[:16], 16, 64)
	lo, err2 := strconv.ParseUint(s[16:], 16, 64)
	if err1 != nil || err2 != nil {
		return StateKey{}, fmt.Errorf("key %q: want 32 hex digits", s)
	}
	return StateKey{hi, lo}, nil
}

// newState wraps the state of a reconstruct or step response; the program
// is told to drop it once Go no longer holds it.
func (m *Subprocess) newState(fn string, r *response) (*subState, error) {
	if r.State <= 0 {
		return nil, m.broken(fn, fmt.Sprintf("answered without a state handle (\"state\": %d)", r.State))
	}
	if r.Level < 1 {
		return nil, contractErr(fn, "returned a state whose \"level\" is %d, want an int ≥ 1", r.Level)
	}
	s := &subState{m: m, h: r.State, level: r.Level}
	s.setKey(r.Key, r.KeyError)
	runtime.AddCleanup(s, m.release, r.State)
	return s, nil
}

// release queues a handle whose state is unreachable in Go (called by the
// runtime, on its own goroutine).
func (m *Subprocess) release(h int64) {
	m.mu.Lock()
	m.released = append(m.released, h)
	m.mu.Unlock()
}

// Reconstruct sends {"op":"reconstruct","level":L,"frame":[hex rows]}.
func (m *Subprocess) Reconstruct(ctx context.Context, level int, initial frame.Grid) (State, error) {
	var r response
	req := &request{Op: "reconstruct", Level: level, Frame: hexRows(initial), Key: m.wantKeys}
	if err := m.call(ctx, FuncReconstruct, req, m.callTimeout, &r); err != nil {
		return nil, err
	}
	return m.newState(FuncReconstruct, &r)
}

// Step sends {"op":"step","state":H,"action":{"name":…}} (with "x", "y"
// for ACTION6).
func (m *Subprocess) Step(ctx context.Context, s State, a session.Action) (State, session.Status, error) {
	ss, err := m.own(s)
	if err != nil {
		return nil, "", err
	}
	if len(a.Name) != 7 || !strings.HasPrefix(a.Name, "ACTION") || a.Name[6] < '1' || a.Name[6] > '7' {
		return nil, "", &CallError{Func: FuncEngine, Err: fmt.Errorf("action %q is not ACTION1..ACTION7 (RESET is never sent to the engine)", a.Name)}
	}
	act := &actionRequest{Name: a.Name}
	if a.Name == "ACTION6" {
		x, y := a.X, a.Y
		act.X, act.Y = &x, &y
	}
	var r response
	if err := m.call(ctx, FuncEngine, &request{Op: "step", State: ss.h, Action: act, Key: m.wantKeys}, m.callTimeout, &r); err != nil {
		return nil, "", err
	}
	next, err := m.newState(FuncEngine, &r)
	if err != nil {
		return nil, "", err
	}
	status := session.Status(r.Status)
	if status != session.Running && status != session.LevelCompleted && status != session.GameOver {
		return nil, "", contractErr(FuncEngine, "returned status %q, want RUNNING, LEVEL_COMPLETED or GAME_OVER", r.Status)
	}
	return next, status, nil
}

// Render sends {"op":"render","state":H}; the frame must be 64×64 colours
// 0..15.
func (m *Subprocess) Render(ctx context.Context, s State) (frame.Grid, error) {
	ss, err := m.own(s)
	if err != nil {
		return frame.Grid{}, err
	}
	var r response
	if err := m.call(ctx, FuncRender, &request{Op: "render", State: ss.h}, m.callTimeout, &r); err != nil {
		return frame.Grid{}, err
	}
	return frameResult(FuncRender, r.Frame)
}

// Override sends {"op":"override",…} when the program reported
// apply_render_overrides at hello; otherwise it returns f.
func (m *Subprocess) Override(ctx context.Context, f frame.Grid, s State, level, attempt, step int) (frame.Grid, error) {
	ss, err := m.own(s)
	if err != nil {
		return frame.Grid{}, err
	}
	if !m.override {
		return f, nil
	}
	var r response
	req := &request{Op: "override", State: ss.h, Frame: hexRows(f), Level: level, Attempt: attempt, Step: &step}
	if err := m.call(ctx, FuncOverrides, req, m.callTimeout, &r); err != nil {
		return frame.Grid{}, err
	}
	return frameResult(FuncOverrides, r.Frame)
}

// Plan sends {"op":"plan","state":H} (with "goal" when goal is not nil) and
// decodes the plan like the Starlark runtime. Only the caller's context
// bounds it (not CallTimeout).
func (m *Subprocess) Plan(ctx context.Context, s State, goal json.RawMessage) ([]session.Action, error) {
	return m.plan(ctx, s, "", goal)
}

// AuxPlan sends {"op":"plan","state":H,"module":M} (with "goal" when goal
// is not nil): the planner function of the program's module M, e.g.
// level_4_planner_1 (the adapter: M.py in the workspace). Errors and the
// plan are as for Plan; a module the program does not have wraps
// ErrNoPlanner.
func (m *Subprocess) AuxPlan(ctx context.Context, s State, module string, goal json.RawMessage) ([]session.Action, error) {
	if err := checkAuxModule(module); err != nil {
		return nil, &CallError{Func: FuncPlanner, Err: err}
	}
	return m.plan(ctx, s, module, goal)
}

func (m *Subprocess) plan(ctx context.Context, s State, module string, goal json.RawMessage) ([]session.Action, error) {
	ss, err := m.own(s)
	if err != nil {
		return nil, err
	}
	if goal != nil && !json.Valid(goal) {
		return nil, &CallError{Func: FuncPlanner, Err: fmt.Errorf("goal: not JSON: %s", clip(goal))}
	}
	var r response
	if err := m.call(ctx, FuncPlanner, &request{Op: "plan", State: ss.h, Goal: goal, Module: module}, 0, &r); err != nil {
		return nil, err
	}
	if len(r.Plan) == 0 || string(r.Plan) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r.Plan, &items); err != nil {
		return nil, contractErr(FuncPlanner, "returned %s, want a list of actions or None", clip(r.Plan))
	}
	plan := make([]session.Action, len(items))
	for i, it := range items {
		if plan[i], err = planAction(it); err != nil {
			return nil, contractErr(FuncPlanner, "plan action %d: %v", i+1, err)
		}
	}
	return plan, nil
}

// planAction decodes one plan action: {"name": "ACTIONn"} (plus integer
// "x", "y" in 0..63 for ACTION6; other keys are ignored) or the bare name.
func planAction(raw json.RawMessage) (session.Action, error) {
	var name string
	var obj map[string]json.RawMessage
	isDict := false
	notAction := fmt.Errorf("action %s: want a dict {\"name\": \"ACTIONn\", ...} or a name string", clip(raw))
	switch {
	case bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)):
		if err := json.Unmarshal(raw, &name); err != nil {
			return session.Action{}, notAction
		}
	case json.Unmarshal(raw, &obj) == nil && obj != nil:
		isDict = true
		n, found := obj["name"]
		if !found {
			return session.Action{}, fmt.Errorf("action %s has no \"name\"", clip(raw))
		}
		if !bytes.HasPrefix(bytes.TrimSpace(n), []byte(`"`)) || json.Unmarshal(n, &name) != nil {
			return session.Action{}, notAction
		}
	default:
		return session.Action{}, notAction
	}
	a := session.Action{Name: name}
	if needXY, err := checkPlanAction(a.Name, isDict); err != nil || !needXY {
		return a, err
	}
	for _, c := range []struct {
		key string
		dst *int
	}{{"x", &a.X}, {"y", &a.Y}} {
		v, found := obj[c.key]
		var n int
		if !found || json.Unmarshal(v, &n) != nil || n < 0 || n > session.ClickMax {
			got := "None"
			if found {
				got = clip(v)
			}
			return a, fmt.Errorf("ACTION6 %q must be an int 0..63, got %s", c.key, got)
		}
		*c.dst = n
	}
	return a, nil
}

// hexRows is g as rows of uppercase hex digits.
func hexRows(g frame.Grid) []string {
	rows := make([]string, g.Height())
	const digits = "0123456789ABCDEF"
	buf := make([]byte, g.Width())
	for y := range rows {
		for x, v := range g.Row(y) {
			if v < 16 {
				buf[x] = digits[v]
			} else {
				buf[x] = '?'
			}
		}
		rows[y] = string(buf)
	}
	return rows
}

// frameResult decodes a frame of a render or override response: a list of
// rows, each a string of hex digits or a list of integers. It must be 64×64
// colours 0..15.
func frameResult(fn string, raw json.RawMessage) (frame.Grid, error) {
	var rows []json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil || rows == nil {
		return frame.Grid{}, contractErr(fn, "returned %s, want a 64x64 frame (a list of rows)", clip(raw))
	}
	if len(rows) != frame.GameSide {
		return frame.Grid{}, contractErr(fn, "returned a frame of %d rows, want 64x64", len(rows))
	}
	g, _ := frame.New(frame.GameSide, frame.GameSide)
	for y, row := range rows {
		var cells []uint8
		var hex string
		var ints []json.Number
		if len(row) > 0 && row[0] == '"' && json.Unmarshal(row, &hex) == nil {
			cells = make([]uint8, len(hex))
			for x := 0; x < len(hex); x++ {
				v, ok := hexDigit(hex[x])
				if !ok {
					return frame.Grid{}, contractErr(fn, "returned a frame whose row %d has %q at column %d, want a hex digit", y, hex[x], x)
				}
				cells[x] = v
			}
		} else if err := json.Unmarshal(row, &ints); err == nil && ints != nil {
			cells = make([]uint8, len(ints))
			for x, n := range ints {
				v, err := strconv.Atoi(n.String())
				if err != nil || v < 0 || v > 15 {
					return frame.Grid{}, contractErr(fn, "returned a frame whose cell (%d, %d) is %s, want colours 0..15", x, y, n)
				}
				cells[x] = uint8(v)
			}
		} else {
			return frame.Grid{}, contractErr(fn, "returned a frame whose row %d is %s, want a string of hex digits or a list of ints", y, clip(row))
		}
		if len(cells) != frame.GameSide {
			return frame.Grid{}, contractErr(fn, "returned a frame whose row %d has %d cells, want 64x64", y, len(cells))
		}
		copy(g.Row(y), cells)
	}
	return g, nil
}

func hexDigit(c byte) (uint8, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// clip is b for messages, at most 120 bytes.
func clip(b []byte) string {
	s := strings.ToValidUTF8(string(b), "�")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return strconv.Quote(s)
}

// tailWriter copies the program's stderr to w and keeps its last bytes.
type tailWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(p)
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

// tail returns the last tailLines lines kept (at most tailBytes).
func (t *tailWriter) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	lines := strings.Split(strings.TrimRight(strings.ToValidUTF8(string(b), "�"), "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
