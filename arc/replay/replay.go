package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"evident/arc/frame"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// MismatchDir is the folder, relative to the workspace, that holds one
// numbered folder of artifacts per mismatch (spec arc.md "Verification").
const MismatchDir = "mismatch_frames"

// OverrideWarning is the line (after Run.Head, before "\n") printed the
// first time apply_render_overrides changes a frame of level L; %d is L
// (seed 003 verify_world_model.py).
const OverrideWarning = "warning: level %d uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic"

// Kind classifies a Failure. The verifier's kinds come first, then the plan
// executor's; each package re-exports the ones it returns.
type Kind int

// Kinds of failure.
const (
	// FrameMismatch: a step's rendered (or predicted) frame differs from
	// the real one.
	FrameMismatch Kind = iota + 1
	// InitialFrameMismatch: the rendered reconstructed initial state differs
	// from the attempt's initial frame.
	InitialFrameMismatch
	// StatusMismatch: a step's predicted status differs from the observed one.
	StatusMismatch
	// ModelFailure: a world-model function failed (error, step limit,
	// contract violation); Err is its error (a *worldmodel.CallError for the
	// runtimes of evident/arc/worldmodel).
	ModelFailure
	// TooSlow: the run's time limit was reached; Err wraps
	// context.DeadlineExceeded.
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
	// Refused: the plan holds RESET (nothing was sent).
	Refused
	// NotPlayable: there is no running attempt to act in (no game,
	// GAME_OVER, won); nothing was sent.
	NotPlayable
	// ReplayMismatch: the rebuilt current state does not match the recorded
	// attempt; nothing was sent.
	ReplayMismatch
)

// Failure is a verification, planning or plan-execution failure whose
// report has already been written to the run's output. The command line
// exits with status 1 on it.
type Failure struct {
	Kind Kind
	// Level is the replay level the failure belongs to, 0 when none (the
	// plan executor leaves it 0).
	Level int
	// Report is the text written for this failure, without the final
	// newline.
	Report string
	// Artifacts are the mismatch files written, for the frame kinds.
	Artifacts *frame.MismatchArtifacts
	// Err is the underlying error, for ModelFailure and TooSlow.
	Err error
	// Summary, when not empty, is the error text instead of the report's
	// first line (baseline1's plan executor: "mismatch after action").
	Summary string
}

// Error returns Summary, or else the report's first line.
func (f *Failure) Error() string {
	if f.Summary != "" {
		return f.Summary
	}
	first, _, _ := strings.Cut(f.Report, "\n")
	return first
}

// Unwrap returns Err.
func (f *Failure) Unwrap() error { return f.Err }

// Run is the shared state of one command that replays through a model and
// reports as it goes. Set the fields before the first call; the zero
// Deadline, TooSlow and Head are allowed.
type Run struct {
	// Model is the world model replayed through.
	Model worldmodel.Model
	// Out receives the report; nil discards it.
	Out io.Writer
	// Workspace is the agent workspace; artifacts go to
	// Workspace/MismatchDir (made absolute when written).
	Workspace string
	// Head is printed before the override warning: a script-name prefix
	// "verify_world_model.py: " or "".
	Head string
	// Deadline, when not nil, is the context of the run's own time limit:
	// a model error past it is a TooSlow Failure printing TooSlow.
	Deadline context.Context
	// TooSlow is the line printed for a TooSlow Failure.
	TooSlow string

	warned map[int]bool
}

// Printf writes to Out.
func (r *Run) Printf(format string, args ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, format, args...)
	}
}

// Fail writes f.Report and a newline to Out and returns f.
func (r *Run) Fail(f *Failure) *Failure {
	r.Printf("%s\n", f.Report)
	return f
}

// ModelErr turns the error of a model call at where into a printed Failure
// of the replay level: TooSlow (printing r.TooSlow) when r.Deadline has
// passed, ModelFailure ("where: detail", detail being the error with its
// traceback) otherwise. A cancellation, or a deadline that is not
// r.Deadline's, is returned as it is, unprinted.
func (r *Run) ModelErr(level int, where string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) && r.Deadline != nil && r.Deadline.Err() == context.DeadlineExceeded:
		return r.Fail(&Failure{Kind: TooSlow, Level: level, Report: r.TooSlow, Err: err})
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	}
	detail := err.Error()
	var ce *worldmodel.CallError
	if errors.As(err, &ce) {
		detail = ce.Detail()
	}
	return r.Fail(&Failure{Kind: ModelFailure, Level: level, Report: where + ": " + detail, Err: err})
}

// Render renders s with state_renderer and then apply_render_overrides
// (attempt and step are the override's arguments, step 0 the initial
// state), printing the override warning the first time the overrides change
// a frame of s's level in this Run. Errors are the model's, unprinted.
func (r *Run) Render(ctx context.Context, s worldmodel.State, attempt, step int) (frame.Grid, error) {
	base, err := r.Model.Render(ctx, s)
	if err != nil {
		return frame.Grid{}, err
	}
	level := s.Level()
	patched, err := r.Model.Override(ctx, base, s, level, attempt, step)
	if err != nil {
		return frame.Grid{}, err
	}
	if !r.warned[level] && !frame.Equal(base, patched) {
		if r.warned == nil {
			r.warned = map[int]bool{}
		}
		r.warned[level] = true
		r.Printf("%s"+OverrideWarning+"\n", r.Head, level)
	}
	return patched, nil
}

// Replay rebuilds a state of att through the model: initial_state_reconstruction
// of its initial frame (k = 0), then world_model_engine on the actions of
// its first n steps (k = 1..n). After each, visit (when not nil) gets k, the
// state and the predicted status (RUNNING for k = 0); an error from visit
// stops the replay and is returned as it is. A model error at k is turned
// into a Failure by ModelErr at where(k) for att's level. It returns the
// state after step n. n is clamped to 0..len(att.Steps).
func (r *Run) Replay(ctx context.Context, att *session.Attempt, n int, where func(k int) string,
	visit func(k int, s worldmodel.State, status session.Status) error) (worldmodel.State, error) {
	s, err := r.Model.Reconstruct(ctx, att.Level, att.InitialFrame)
	if err != nil {
		return nil, r.ModelErr(att.Level, where(0), err)
	}
	if visit != nil {
		if err := visit(0, s, session.Running); err != nil {
			return nil, err
		}
	}
	for k, st := range att.Steps[:max(0, min(n, len(att.Steps)))] {
		var status session.Status
		if s, status, err = r.Model.Step(ctx, s, st.Action); err != nil {
			return nil, r.ModelErr(att.Level, where(k+1), err)
		}
		if visit != nil {
			if err := visit(k+1, s, status); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// Real is a recorded frame and the paths the report prints for it.
type Real struct {
	Grid frame.Grid
	// ASCII and PNG are the frame's files, or the expected path followed by
	// " (missing)" when a file is absent.
	ASCII, PNG string
}

// InitialOf is att's initial frame (initial_frame.txt / .png).
func InitialOf(att *session.Attempt) Real {
	return Real{Grid: att.InitialFrame,
		ASCII: orMissing(att.InitialFramePath, att.Dir, session.InitialFrameFile),
		PNG:   orMissing(att.InitialPNGPath, att.Dir, session.InitialPNGFile)}
}

// FinalOf is the final frame of step st of att (step_KKKK_final.txt /
// .png); its Grid is zero when the step has none (a GAME_OVER step).
func FinalOf(att *session.Attempt, st *session.Step) Real {
	return Real{Grid: st.Final,
		ASCII: orMissing(st.FinalPath, att.Dir, session.StepFinalFile(st.Index)),
		PNG:   orMissing(st.FinalPNGPath, att.Dir, session.StepFinalPNGFile(st.Index))}
}

// orMissing is path, or the expected path marked missing.
func orMissing(path, dir, name string) string {
	if path != "" {
		return path
	}
	return filepath.Join(dir, name) + " (missing)"
}

// FrameFailure writes the four artifacts of predicted against real into a
// fresh Workspace/MismatchDir/<N>/ (frame.WriteMismatchArtifacts) and
// prints and returns f (its Kind, Level and Summary set by the caller) with
// Artifacts set and Report = head lines, the six lines of the mismatch
// block (see the package doc), then tail lines. An error writing the
// artifacts is returned as it is, with nothing printed.
func (r *Run) FrameFailure(f *Failure, head []string, real Real, predicted frame.Grid, tail []string) error {
	art, err := frame.WriteMismatchArtifacts(filepath.Join(r.Workspace, MismatchDir), real.Grid, predicted)
	if err != nil {
		return err
	}
	lines := append(head[:len(head):len(head)],
		"real ascii: "+real.ASCII,
		"real png: "+real.PNG,
		"simulated ascii: "+art.SimulatedASCII+" (predicted frame as text)",
		"simulated png: "+art.SimulatedPNG+" (predicted frame rendered)",
		"mismatch region png: "+art.Region+" (localized mismatch neighborhoods)",
		"mismatch as magneta png: "+art.Magneta+" (full frame with magenta mismatch pixels)")
	f.Report = strings.Join(append(lines, tail...), "\n")
	f.Artifacts = &art
	return r.Fail(f)
}

// FormatAction formats one plan action as baseline1's scripts print it
// (seed format_action): the bare name ("ACTION1"), or compact JSON for
// ACTION6 ({"name":"ACTION6","x":15,"y":47}).
func FormatAction(a session.Action) string {
	if a.Name != "ACTION6" {
		return a.Name
	}
	b, _ := a.MarshalJSON()
	return string(b)
}
