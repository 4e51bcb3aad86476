package verify

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"evident/arc/frame"
	"evident/arc/replay"
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
	// numbered folder of artifacts per mismatch (replay.MismatchDir).
	MismatchDir = replay.MismatchDir
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

// Kind classifies a Failure (replay.Kind).
type Kind = replay.Kind

// Kinds of failure the verifier and planner commands return (see
// replay.Kind).
const (
	FrameMismatch        = replay.FrameMismatch
	InitialFrameMismatch = replay.InitialFrameMismatch
	StatusMismatch       = replay.StatusMismatch
	ModelFailure         = replay.ModelFailure
	TooSlow              = replay.TooSlow
	MissingLevel         = replay.MissingLevel
	NoPlan               = replay.NoPlan
	PlanIncomplete       = replay.PlanIncomplete
	BadSource            = replay.BadSource
)

// Failure is a verification or planning failure whose report has already
// been written to Options.Out (replay.Failure, shared with the plan
// executor). The command line exits with status 1 on it.
type Failure = replay.Failure

// run is the shared state of one command.
// Run.Head is Options.Prefix + ": ", or "".
type run struct {
	*replay.Run
	sess *session.Session
}

// newRun reads the session of opts.Workspace and starts the time limit;
// tooSlow is the line printed when it passes.
func newRun(ctx context.Context, m worldmodel.Model, opts Options, tooSlow string) (*run, context.Context, context.CancelFunc, error) {
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
	rr := &replay.Run{Model: m, Out: opts.Out, Workspace: ws, Head: head, Deadline: ctx, TooSlow: tooSlow}
	return &run{Run: rr, sess: sess}, ctx, cancel, nil
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
	r, ctx, cancel, err := newRun(ctx, m, opts, TooSlowMessage)
	if err != nil {
		return err
	}
	defer cancel()
	top := r.sess.ModelLevel()
	for level := 1; level <= top; level++ {
		lv := r.sess.Level(level)
		if lv == nil {
			return r.Fail(&Failure{Kind: MissingLevel, Level: level,
				Report: fmt.Sprintf("No level-%d attempts found in the latest session.", level)})
		}
		for i := range lv.Attempts {
			if err := r.replay(ctx, top, level, &lv.Attempts[i]); err != nil {
				return err
			}
		}
		r.Printf("%slevel %d verified\n", r.Head, level)
	}
	r.Printf("%slevels 1..%d verification passed\n", r.Head, top)
	return nil
}

// replay verifies one attempt.
func (r *run) replay(ctx context.Context, top, level int, att *session.Attempt) error {
	prefix := fmt.Sprintf("Model level %d, replay level %d, attempt %d, replay", top, level, att.Index)
	where := func(k int) string {
		if k == 0 {
			return prefix + ", initial state"
		}
		return fmt.Sprintf("%s, step %d", prefix, att.Steps[k-1].Index)
	}
	_, err := r.Replay(ctx, att, len(att.Steps), where, func(k int, s worldmodel.State, status session.Status) error {
		if k == 0 {
			return r.check(ctx, &Failure{Kind: InitialFrameMismatch, Level: level}, where(0), "rendered initial frame mismatch.", s, att.Index, 0, replay.InitialOf(att))
		}
		st := &att.Steps[k-1]
		if status != st.Observed {
			return r.Fail(&Failure{Kind: StatusMismatch, Level: level, Report: fmt.Sprintf(
				"%sverification failed for level %d\n%s: predicted status %s, observed %s.\nreal ascii: %s",
				r.Head, level, where(k), status, st.Observed, replay.FinalOf(att, st).ASCII)})
		}
		if status != session.Running {
			return nil
		}
		return r.check(ctx, &Failure{Kind: FrameMismatch, Level: level}, where(k), "rendered frame mismatch.", s, att.Index, st.Index, replay.FinalOf(att, st))
	})
	return err
}

// check renders s and, when it differs from real, writes the artifacts and
// reports f: "verification failed for level R", then "<where>: <what>" and
// the mismatch block. A model error is reported at where.
func (r *run) check(ctx context.Context, f *Failure, where, what string, s worldmodel.State, attempt, step int, real replay.Real) error {
	rendered, err := r.Render(ctx, s, attempt, step)
	if err != nil {
		return r.ModelErr(f.Level, where, err)
	}
	if frame.Equal(rendered, real.Grid) {
		return nil
	}
	return r.FrameFailure(f, []string{r.Head + "verification failed for level " + strconv.Itoa(f.Level), where + ": " + what}, real, rendered, nil)
}
