package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"evident/arc/frame"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// Limits and fixed messages (spec arc.md "Verification"; seed 003
// verify_world_model.py, verify_main_planner.py, run_main_planner.py).
const (
	// TimeLimit bounds one whole verification, planner verification or
	// planner run (seed TIMEOUT_SECONDS = 180).
	TimeLimit = 180 * time.Second
	// TooSlowMessage is printed when Verify runs out of time.
	TooSlowMessage = "Your world model is too slow, please consider refactoring it."
	// PlannerTooSlowMessage is printed when VerifyPlanner or RunPlanner runs
	// out of time.
	PlannerTooSlowMessage = "Planner too slow, please consider using a faster planner."
	// MismatchDir is the folder, relative to the workspace, that holds one
	// numbered folder of artifacts per mismatch.
	MismatchDir = "mismatch_frames"
)

// Options configures Verify, VerifyPlanner and RunPlanner.
type Options struct {
	// Workspace is the agent workspace: the session is read from
	// Workspace/client/session and artifacts go to Workspace/mismatch_frames.
	Workspace string
	// Out receives the report, line by line, as the run proceeds; nil
	// discards it.
	Out io.Writer
	// TimeLimit bounds the whole run; 0 means TimeLimit.
	TimeLimit time.Duration
	// Prefix, when not "", is the script name baseline1 prints before its
	// headline lines ("verify_world_model.py", "verify_main_planner.py",
	// "run_main_planner.py", "run_aux_planner.py"): those lines get
	// Prefix + ": " in front, exactly where baseline1's scripts print it (see
	// the package doc, "Script-name prefix"). Workspace launchers set it.
	Prefix string
}

// Kind classifies a Failure.
type Kind int

// Kinds of failure.
const (
	// FrameMismatch: a step's rendered frame differs from the real one.
	FrameMismatch Kind = iota + 1
	// InitialFrameMismatch: the rendered reconstructed initial state differs
	// from the attempt's initial frame.
	InitialFrameMismatch
	// StatusMismatch: a step's predicted status differs from the observed one.
	StatusMismatch
	// ModelFailure: a world-model function failed (error, step limit,
	// contract violation); Err is the *worldmodel.CallError.
	ModelFailure
	// TooSlow: the run's time limit was reached.
	TooSlow
	// MissingLevel: a level below the model level has no attempt folder.
	MissingLevel
	// NoPlan: the planner returned None or an empty plan.
	NoPlan
	// PlanIncomplete: re-simulating the plan in the engine did not reach
	// LEVEL_COMPLETED.
	PlanIncomplete
	// BadSource: the state to plan from does not exist or is terminal.
	BadSource
)

// Failure is a verification or planning failure whose report has already
// been written to Options.Out. The command line exits with status 1 on it.
type Failure struct {
	Kind Kind
	// Level is the replay level the failure belongs to, 0 when none.
	Level int
	// Report is the text written to Out for this failure, without the
	// final newline.
	Report string
	// Artifacts are the mismatch files written, for the frame kinds.
	Artifacts *frame.MismatchArtifacts
	// Err is the underlying error, for ModelFailure and TooSlow.
	Err error
}

// Error returns the report's first line.
func (f *Failure) Error() string {
	first, _, _ := strings.Cut(f.Report, "\n")
	return first
}

// Unwrap returns Err.
func (f *Failure) Unwrap() error { return f.Err }

// run is the shared state of one command.
type run struct {
	m        worldmodel.Model
	out      io.Writer
	ws       string
	sess     *session.Session
	warned   map[int]bool
	deadline context.Context
	head     string // Options.Prefix + ": ", or ""
}

func newRun(ctx context.Context, m worldmodel.Model, opts Options) (*run, context.Context, context.CancelFunc, error) {
	limit := opts.TimeLimit
	if limit <= 0 {
		limit = TimeLimit
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	sess, err := session.Read(filepath.Join(ws, session.Dir))
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	if sess.ModelLevel() == 0 {
		cancel()
		return nil, nil, nil, fmt.Errorf("no attempt recorded in %s", sess.Root)
	}
	head := ""
	if opts.Prefix != "" {
		head = opts.Prefix + ": "
	}
	return &run{m: m, out: out, ws: ws, sess: sess, warned: map[int]bool{}, deadline: ctx, head: head}, ctx, cancel, nil
}

func (r *run) printf(format string, args ...any) { fmt.Fprintf(r.out, format, args...) }

// fail writes report (plus a newline) and returns the Failure.
func (r *run) fail(f *Failure) *Failure {
	r.printf("%s\n", f.Report)
	return f
}

// modelErr turns an error of a model call into a Failure: TooSlow (printing
// tooSlow) when the run's time limit passed, ModelFailure (printing where and
// the error with its traceback) otherwise. A cancellation by the caller is
// returned as is.
func (r *run) modelErr(level int, where string, err error, tooSlow string) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) && r.deadline.Err() == context.DeadlineExceeded:
		return r.fail(&Failure{Kind: TooSlow, Level: level, Report: tooSlow, Err: err})
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	}
	detail := err.Error()
	var ce *worldmodel.CallError
	if errors.As(err, &ce) {
		detail = ce.Detail()
	}
	return r.fail(&Failure{Kind: ModelFailure, Level: level, Report: where + ": " + detail, Err: err})
}

// render renders s and applies the overrides, printing the override warning
// the first time the overrides change a frame of the state's level.
func (r *run) render(ctx context.Context, s worldmodel.State, attempt, step int) (frame.Grid, error) {
	base, err := r.m.Render(ctx, s)
	if err != nil {
		return frame.Grid{}, err
	}
	level := s.Level()
	patched, err := r.m.Override(ctx, base, s, level, attempt, step)
	if err != nil {
		return frame.Grid{}, err
	}
	if !r.warned[level] && !frame.Equal(base, patched) {
		r.warned[level] = true
		r.printf("%swarning: level %d uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic\n", r.head, level)
	}
	return patched, nil
}

// realPath is path, or the expected path marked missing when the file is
// absent.
func realPath(path, dir, name string) string {
	if path != "" {
		return path
	}
	return filepath.Join(dir, name) + " (missing)"
}

// frameMismatch writes the artifacts and the report of a frame mismatch.
func (r *run) frameMismatch(kind Kind, level int, context string, real frame.Grid, realASCII, realPNG string, predicted frame.Grid) error {
	art, err := frame.WriteMismatchArtifacts(filepath.Join(r.ws, MismatchDir), real, predicted)
	if err != nil {
		return err
	}
	report := strings.Join([]string{
		r.head + "verification failed for level " + fmt.Sprint(level),
		context,
		"real ascii: " + realASCII,
		"real png: " + realPNG,
		"simulated ascii: " + art.SimulatedASCII + " (predicted frame as text)",
		"simulated png: " + art.SimulatedPNG + " (predicted frame rendered)",
		"mismatch region png: " + art.Region + " (localized mismatch neighborhoods)",
		"mismatch as magneta png: " + art.Magneta + " (full frame with magenta mismatch pixels)",
	}, "\n")
	return r.fail(&Failure{Kind: kind, Level: level, Report: report, Artifacts: &art})
}

// Verify replays every attempt of levels 1..M (M the highest level folder,
// the "Model level") through m and writes the report to opts.Out (spec
// arc.md "Verification"):
//
//   - per attempt, initial_state_reconstruction of its initial frame, rendered
//     (with apply_render_overrides, step_count 0), must equal the initial
//     frame;
//   - per step, world_model_engine's status must equal the observed status,
//     and on RUNNING steps the rendered frame (step_count = the 1-based step)
//     must equal the final frame;
//   - "level R verified" after each level, "levels 1..M verification passed"
//     at the end.
//
// The first mismatch writes the four artifacts to mismatch_frames/<N>/ and
// the block "verification failed for level R" + message; a model error
// writes its context and traceback; running past opts.TimeLimit writes
// TooSlowMessage. All of these return a *Failure. Errors reading the session
// or writing artifacts are returned as they are (nothing printed).
func Verify(ctx context.Context, m worldmodel.Model, opts Options) error {
	r, ctx, cancel, err := newRun(ctx, m, opts)
	if err != nil {
		return err
	}
	defer cancel()
	top := r.sess.ModelLevel()
	for level := 1; level <= top; level++ {
		lv := r.sess.Level(level)
		if lv == nil {
			return r.fail(&Failure{Kind: MissingLevel, Level: level,
				Report: fmt.Sprintf("No level-%d attempts found in the latest session.", level)})
		}
		for i := range lv.Attempts {
			if err := r.replay(ctx, top, level, &lv.Attempts[i]); err != nil {
				return err
			}
		}
		r.printf("%slevel %d verified\n", r.head, level)
	}
	r.printf("%slevels 1..%d verification passed\n", r.head, top)
	return nil
}

// replay verifies one attempt.
func (r *run) replay(ctx context.Context, top, level int, att *session.Attempt) error {
	prefix := fmt.Sprintf("Model level %d, replay level %d, attempt %d, replay", top, level, att.Index)
	where := prefix + ", initial state"
	s, err := r.m.Reconstruct(ctx, level, att.InitialFrame)
	if err != nil {
		return r.modelErr(level, where, err, TooSlowMessage)
	}
	rendered, err := r.render(ctx, s, att.Index, 0)
	if err != nil {
		return r.modelErr(level, where, err, TooSlowMessage)
	}
	if !frame.Equal(rendered, att.InitialFrame) {
		return r.frameMismatch(InitialFrameMismatch, level, where+": rendered initial frame mismatch.",
			att.InitialFrame, att.InitialFramePath, realPath(att.InitialPNGPath, att.Dir, session.InitialPNGFile), rendered)
	}
	for i := range att.Steps {
		st := &att.Steps[i]
		where := fmt.Sprintf("%s, step %d", prefix, st.Index)
		var status session.Status
		if s, status, err = r.m.Step(ctx, s, st.Action); err != nil {
			return r.modelErr(level, where, err, TooSlowMessage)
		}
		if status != st.Observed {
			return r.fail(&Failure{Kind: StatusMismatch, Level: level, Report: fmt.Sprintf(
				"%sverification failed for level %d\n%s: predicted status %s, observed %s.\nreal ascii: %s",
				r.head, level, where, status, st.Observed, realPath(st.FinalPath, att.Dir, session.StepFinalFile(st.Index)))})
		}
		if status != session.Running {
			continue
		}
		rendered, err := r.render(ctx, s, att.Index, st.Index)
		if err != nil {
			return r.modelErr(level, where, err, TooSlowMessage)
		}
		if !frame.Equal(rendered, st.Final) {
			return r.frameMismatch(FrameMismatch, level, where+": rendered frame mismatch.",
				st.Final, st.FinalPath, realPath(st.FinalPNGPath, att.Dir, session.StepFinalPNGFile(st.Index)), rendered)
		}
	}
	return nil
}
