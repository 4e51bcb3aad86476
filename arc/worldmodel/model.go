package worldmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"evident/arc/frame"
	"evident/arc/session"
)

// File names of a Starlark world model inside its folder (the agent's
// workspace). They are also the only module names load() accepts.
const (
	EngineFile  = "world_model_engine.star"
	StateIOFile = "world_model_state_io.star"
	PlannerFile = "world_model_main_planner.star"
)

// Names of the world-model functions (spec arc.md "Vocabulary and
// contracts"; seed 003). EngineFile must define FuncEngine; StateIOFile must
// define FuncReconstruct and FuncRender and may define FuncOverrides;
// PlannerFile must define FuncPlanner.
const (
	FuncEngine      = "world_model_engine"
	FuncReconstruct = "initial_state_reconstruction"
	FuncRender      = "state_renderer"
	FuncOverrides   = "apply_render_overrides"
	FuncPlanner     = "planner"
)

// Model is one loaded world model: the five functions of the seed behind one
// interface, so that the Starlark runtime (LoadStarlark) and a later
// subprocess runtime (see the package doc, "Subprocess protocol") fit the
// verifier and the planner commands alike.
//
// Every method runs model code under ctx: when ctx is done the call stops
// promptly and its error wraps ctx.Err() (errors.Is(err,
// context.DeadlineExceeded) for the whole-run time limit). Every other model
// failure is a *CallError naming the function. A Model is not safe for
// concurrent use.
type Model interface {
	// Reconstruct is initial_state_reconstruction(level, initial): the only
	// entry point that builds a state from an observation. level is 1-based;
	// initial is the attempt's initial frame (64×64). The model must not
	// modify initial.
	Reconstruct(ctx context.Context, level int, initial frame.Grid) (State, error)
	// Step is world_model_engine(s, a): the state and status after one real
	// action inside one attempt. a is never RESET in the verifier's use.
	Step(ctx context.Context, s State, a session.Action) (State, session.Status, error)
	// Render is state_renderer(s): the 64×64 frame of a RUNNING state, before
	// overrides. The returned grid must not be modified by the caller.
	Render(ctx context.Context, s State) (frame.Grid, error)
	// Override is apply_render_overrides(f, s, level, attempt, step): the
	// last-resort patch applied after Render. step is 0 for the initial
	// frame, else the 1-based step number. It returns f itself (same cells)
	// or a new grid; it never modifies f.
	Override(ctx context.Context, f frame.Grid, s State, level, attempt, step int) (frame.Grid, error)
	// Plan is planner(s), or planner(s, goal=G) when goal is not nil (G
	// decoded from the JSON object goal). nil with a nil error is the
	// planner's None; an empty plan is returned as an empty non-nil slice.
	// Plans never contain RESET.
	Plan(ctx context.Context, s State, goal json.RawMessage) ([]session.Action, error)
	// Close releases the runtime (a subprocess; nothing for Starlark).
	Close() error
}

// AuxPlanner is a Model that can also run an auxiliary planner: a planner
// function in a module of its own, named by the agent (baseline1
// run_aux_planner.py: "level_N_planner_i", e.g. level_4_planner_1, the file
// level_4_planner_1.py or, for Starlark, level_4_planner_1.star). Both
// runtimes of this package implement it.
type AuxPlanner interface {
	Model
	// AuxPlan is module.planner(s), or module.planner(s, goal=G) when goal
	// is not nil (G decoded from the JSON value goal). module is a bare
	// module name (letters, digits, '_'; not starting with a digit; a
	// trailing ".py" or ".star" is the caller's to strip). The result is as
	// for Plan. A module that does not exist wraps ErrNoPlanner; one
	// without a planner function is an ErrContract naming it.
	AuxPlan(ctx context.Context, s State, module string, goal json.RawMessage) ([]session.Action, error)
}

// checkAuxModule checks an auxiliary planner's module name (see
// AuxPlanner).
func checkAuxModule(module string) error {
	ok := module != "" && (module[0] < '0' || module[0] > '9')
	for _, c := range module {
		ok = ok && (c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}
	if !ok {
		return fmt.Errorf("planner module %q: want a module name such as level_4_planner_1 (letters, digits, _)", module)
	}
	return nil
}

// State is a world-model state as a Model hands it out. Only the Model that
// produced it accepts it back (ErrForeignState otherwise). States are
// immutable: no later call changes a state already returned.
type State interface {
	// Level is the state's "level" field (1-based), which every state must
	// have (spec arc.md "Vocabulary and contracts").
	Level() int
	// Key is a 128-bit hash of the state's value: equal states have equal
	// keys, and distinct states collide with probability about 2⁻¹²⁸ per
	// pair. Keys are comparable only within one process. It fails when the
	// state holds a value that has no key (a function, say).
	Key() (StateKey, error)
	// String is a short printable form of the state, for messages.
	String() string
}

// StateKey is the value hash of a State (see State.Key), usable as a map key.
type StateKey [2]uint64

// Errors a Model's calls wrap (test with errors.Is).
var (
	// ErrStepLimit: one call ran more than its per-call step limit
	// (StarlarkOptions.CallSteps or PlanSteps).
	ErrStepLimit = errors.New("step limit exceeded")
	// ErrContract: a function returned something the seed's contract does
	// not allow (a state without "level", an unknown status, a frame that is
	// not 64×64 colours 0..15, a plan with RESET, ...).
	ErrContract = errors.New("world model contract violated")
	// ErrNoPlanner: the model has no planner (PlannerFile is missing).
	ErrNoPlanner = errors.New("world model has no planner")
	// ErrForeignState: a State from another Model (or nil) was passed in.
	ErrForeignState = errors.New("state does not belong to this world model")
)

// CallError is a failure inside one world-model function call.
type CallError struct {
	// Func is the world-model function, e.g. "world_model_engine", or the
	// file name when loading a file failed.
	Func string
	// Err is the cause: a Starlark error, ErrStepLimit, ErrContract or a
	// context error, possibly wrapped.
	Err error
	// Backtrace is the Starlark traceback (most recent call last) when the
	// failure happened in model code, else "".
	Backtrace string
}

// Error returns "Func: cause".
func (e *CallError) Error() string { return e.Func + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

// Detail is the form printed to the agent: Error(), then the traceback on
// the following lines when there is one.
func (e *CallError) Detail() string {
	if e.Backtrace == "" {
		return e.Error()
	}
	return e.Error() + "\n" + strings.TrimRight(e.Backtrace, "\n")
}
