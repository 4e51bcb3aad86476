// Package planexec owns the plan executor (spec arc.md "Plan executor";
// seed 003 plan_executor.py): the only path by which a plan reaches the real
// game. For every action it predicts first — the world model's status, and
// its rendered frame when RUNNING — and only then sends the action through
// the game client; it re-reads the recorded step, compares status then
// frame, and halts at the first mismatch with the verifier's artifacts. An
// action the model could not predict is never sent.
//
// It must not record the session or speak HTTP (evident/arc/client does),
// run model code itself (evident/arc/worldmodel, behind worldmodel.Model),
// or draw frames (evident/arc/frame writes the artifacts). The replay of the
// current attempt, the rendered frame, the mismatch block and folder and the
// *replay.Failure it returns are the verifier's, shared through
// evident/arc/replay.
//
// # Report lines
//
//	running ACTION1
//	running ACTION6 x=15 y=47
//	level 2 completed after ACTION4; 3 remaining actions not sent
//	game won after ACTION4
//	GAME_OVER after ACTION2, as predicted; 1 remaining action not sent
//	sequence executed without mismatch
//
// A frame mismatch prints the verifier's block with the step's context, then
// the step's intermediate frames:
//
//	frame mismatch after ACTION1 (level 2, attempt 1, step 14): rendered frame mismatch.
//	real ascii: <session>/level_02_attempt_01/step_0014_final.txt
//	real png: …
//	simulated ascii: <ws>/mismatch_frames/N/simulated_frame.txt (predicted frame as text)
//	simulated png: … (predicted frame rendered)
//	mismatch region png: … (localized mismatch neighborhoods)
//	mismatch as magneta png: … (full frame with magenta mismatch pixels)
//	intermediate frames (2, earlier frames of the step's animated response):
//	<session>/level_02_attempt_01/step_0014_intermediate_01.txt
//	<session>/level_02_attempt_01/step_0014_intermediate_02.txt
//
// A status mismatch: "status mismatch after ACTION1 (level 2, attempt 1,
// step 14): predicted RUNNING, observed GAME_OVER." with the real ascii line
// and the intermediate frames, no artifacts (as in the verifier).
//
// # Baseline1's lines (Options.Baseline1)
//
// With Options.Baseline1 the report is the one baseline1's plan_executor.py
// prints (secure_baseline1 workspace_init/plan_executor.py), without its
// script-name prefix (the command line adds it, see cmd/evident
// arc_script.go): ACTION6 as compact JSON, the client's per-step summary
// (Options.StepSummary) after every action sent, and
//
//	running ACTION1
//	running {"name":"ACTION6","x":15,"y":47}
//	stopped on level completion
//	stopped on GAME_OVER
//	sequence executed without mismatch
//	status mismatch after ACTION1: predicted RUNNING, observed GAME_OVER
//	frame mismatch detected
//	real ascii: …   (the verifier's six lines)
//	the step on which mismatch was detected also generated animation. The frames are:
//	<intermediate PNGs, then the final PNG, absolute paths>
//
// Predictions use state_renderer alone, as baseline1's executor does
// (apply_render_overrides is verification-only there). A frame mismatch's
// replay.Failure.Error is "mismatch after action" (baseline1's
// AssertionError), a status mismatch's the status line. The replay check
// before the first action and the refusals keep evident's wording.
//
// # Decisions where the spec and seed are silent
//
//   - RESET anywhere in the plan refuses the whole plan before anything is
//     sent: a plan lives inside one attempt, and RESET is the controller's.
//   - The current attempt is the recorder's (session.OpenRecorder: highest
//     step_index). Its state is rebuilt as initial state + replay of its
//     recorded actions; before sending anything the rebuilt state's frame
//     must equal the attempt's latest frame. If it does not (or the replay
//     ends early), the executor stops with the artifacts of that mismatch
//     and sends nothing: predictions from a wrong state would waste real
//     actions. Run the verifier to see which step is wrong.
//   - The client's lock is held for the whole plan, so no other command
//     can slip between a prediction and its check.
//   - A correctly predicted GAME_OVER or level completion ends the run
//     cleanly (no error); remaining actions are not sent.
//   - The override warning is printed as the verifier prints it, once per
//     level per run.
package planexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"evident/arc/client"
	"evident/arc/frame"
	"evident/arc/replay"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// MismatchDir is the folder, relative to the workspace, of the numbered
// artifact folders (the verifier's, replay.MismatchDir).
const MismatchDir = replay.MismatchDir

// Options configures Run.
type Options struct {
	// Out receives the report line by line; nil discards it.
	Out io.Writer
	// Baseline1 selects the lines of baseline1's plan_executor.py (see
	// the package doc) instead of evident's.
	Baseline1 bool
	// StepSummary, when set, is called after every action sent, with the
	// client's result, to write the client's per-step summary to w (Out):
	// baseline1's executor runs its client once per action, whose summary
	// lands between the "running" lines. An error from it stops the run.
	StepSummary func(w io.Writer, res *client.Result) error
}

// Result is what Run did.
type Result struct {
	// Sent is the number of actions sent to the game.
	Sent int
	// Final is the observed status of the last action sent: RUNNING when
	// the whole plan ran; LEVEL_COMPLETED or GAME_OVER when it stopped
	// early or ended on one.
	Final session.Status
	// Won is true when the last action won the game.
	Won bool
}

// run is the state of one Run: the shared replay state.
type run struct{ *replay.Run }

// intermediates lists a step's intermediate frames.
func intermediates(st *session.Step) []string {
	if len(st.IntermediatePaths) == 0 {
		return nil
	}
	return append([]string{fmt.Sprintf("intermediate frames (%d, earlier frames of the step's animated response):", len(st.IntermediatePaths))},
		st.IntermediatePaths...)
}

func plural(n int) string {
	if n == 1 {
		return "1 remaining action not sent"
	}
	return fmt.Sprintf("%d remaining actions not sent", n)
}

// Run executes plan in the game of c's workspace with m predicting every
// step, writing the report to opts.Out (see the package doc). It returns a
// *replay.Failure for everything it reported as one (RESET in the plan, no
// running attempt, a replay mismatch, a model failure, a status or frame
// mismatch; Level is 0);
// client errors (HTTP, lock, recording) are returned as they are, and the
// actions sent before them stay sent.
func Run(ctx context.Context, m worldmodel.Model, c *client.Client, plan []session.Action, opts Options) (*Result, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	r := &run{&replay.Run{Model: m, Out: out, Workspace: c.Workspace()}}
	res := &Result{Final: session.Running}
	for i, a := range plan {
		if a.Name == "RESET" {
			return res, r.Fail(&replay.Failure{Kind: replay.Refused, Report: fmt.Sprintf(
				"RESET refused (action %d of the plan): a plan runs inside one attempt; send RESET with the game client, then plan again. Nothing was sent.", i+1)})
		}
	}
	if len(plan) == 0 {
		return res, errors.New("planexec: empty plan")
	}
	h, err := c.Lock(ctx)
	if err != nil {
		return res, err
	}
	defer h.Unlock()
	st, err := c.ReadState()
	if err != nil {
		return res, r.Fail(&replay.Failure{Kind: replay.NotPlayable, Report: err.Error()})
	}
	switch {
	case st.Stopped:
		return res, r.Fail(&replay.Failure{Kind: replay.NotPlayable, Report: "the game was stopped; nothing was sent."})
	case st.State == session.StateGameOver:
		return res, r.Fail(&replay.Failure{Kind: replay.NotPlayable, Report: "the game is in state GAME_OVER; send RESET with the game client first. Nothing was sent."})
	case st.State == session.StateWin:
		return res, r.Fail(&replay.Failure{Kind: replay.NotPlayable, Report: "the game is won; nothing was sent."})
	}
	s, pos, err := r.current(ctx, c)
	if err != nil {
		return res, err
	}
	step := pos.Step
	for i, a := range plan {
		next, predicted, err := m.Step(ctx, s, a)
		if err != nil {
			return res, r.ModelErr(0, fmt.Sprintf("predicting %s (level %d, attempt %d, step %d)", a, pos.Level, pos.Attempt, step+1), err)
		}
		var want frame.Grid
		if predicted == session.Running && opts.Baseline1 {
			// baseline1's executor predicts with state_renderer alone:
			// apply_render_overrides is verification-only.
			if want, err = m.Render(ctx, next); err != nil {
				return res, r.ModelErr(0, fmt.Sprintf("rendering the prediction of %s (level %d, attempt %d, step %d)", a, pos.Level, pos.Attempt, step+1), err)
			}
		} else if predicted == session.Running {
			if want, err = r.Render(ctx, next, pos.Attempt, step+1); err != nil {
				return res, r.ModelErr(0, fmt.Sprintf("rendering the prediction of %s (level %d, attempt %d, step %d)", a, pos.Level, pos.Attempt, step+1), err)
			}
		}
		if opts.Baseline1 {
			r.Printf("running %s\n", replay.FormatAction(a))
		} else {
			r.Printf("running %s\n", a)
		}
		// Via plan-exec: the agent-run policy (evident/arc/agent/policy)
		// lets predicted actions through and counts direct moves only.
		mv, err := h.MoveWith(ctx, a, client.MoveOptions{Via: client.ViaPlanExec})
		if err != nil {
			return res, err
		}
		res.Sent++
		if opts.StepSummary != nil {
			if err := opts.StepSummary(r.Out, mv); err != nil {
				return res, err
			}
		}
		step++
		att, err := session.ReadAttempt(mv.Recorded.Dir)
		if err != nil {
			return res, err
		}
		if len(att.Steps) < mv.Recorded.Step {
			return res, fmt.Errorf("planexec: step %d of %s is not recorded", mv.Recorded.Step, mv.Recorded.Dir)
		}
		got := &att.Steps[mv.Recorded.Step-1]
		where := fmt.Sprintf("after %s (level %d, attempt %d, step %d)", a, att.Level, att.Index, got.Index)
		res.Final = got.Observed
		if opts.Baseline1 {
			if done, err := r.baseline1Check(a, &att, got, predicted, want); done || err != nil {
				return res, err
			}
			s = next
			if predicted != session.Running {
				res.Won = mv.State.State == session.StateWin
				return res, nil
			}
			continue
		}
		if got.Observed != predicted {
			lines := []string{fmt.Sprintf("status mismatch %s: predicted %s, observed %s.", where, predicted, got.Observed),
				"real ascii: " + replay.FinalOf(&att, got).ASCII}
			return res, r.Fail(&replay.Failure{Kind: replay.StatusMismatch, Report: strings.Join(append(lines, intermediates(got)...), "\n")})
		}
		if predicted == session.Running && !frame.Equal(want, got.Final) {
			return res, r.FrameFailure(&replay.Failure{Kind: replay.FrameMismatch}, []string{"frame mismatch " + where + ": rendered frame mismatch."},
				replay.FinalOf(&att, got), want, intermediates(got))
		}
		s = next
		left := len(plan) - i - 1
		switch predicted {
		case session.LevelCompleted:
			if mv.State.State == session.StateWin {
				res.Won = true
				r.Printf("game won after %s", a)
			} else {
				r.Printf("level %d completed after %s", att.Level, a)
			}
			if left > 0 {
				r.Printf("; %s", plural(left))
			}
			r.Printf("\n")
		case session.GameOver:
			r.Printf("GAME_OVER after %s, as predicted", a)
			if left > 0 {
				r.Printf("; %s", plural(left))
			}
			r.Printf("\n")
		}
		if predicted != session.Running {
			break
		}
	}
	r.Printf("sequence executed without mismatch\n")
	return res, nil
}

// baseline1Check compares one step as baseline1's plan_executor.py does:
// status first, then the stop on a terminal status, then the frame. done
// is true when the run ends here (a stop or a failure, already reported).
func (r *run) baseline1Check(a session.Action, att *session.Attempt, got *session.Step, predicted session.Status, want frame.Grid) (bool, error) {
	if got.Observed != predicted {
		line := fmt.Sprintf("status mismatch after %s: predicted %s, observed %s", replay.FormatAction(a), predicted, got.Observed)
		return true, r.Fail(&replay.Failure{Kind: replay.StatusMismatch, Report: line})
	}
	switch got.Observed {
	case session.LevelCompleted:
		r.Printf("stopped on level completion\n")
		return true, nil
	case session.GameOver:
		r.Printf("stopped on GAME_OVER\n")
		return true, nil
	}
	if frame.Equal(want, got.Final) {
		return false, nil
	}
	real := replay.FinalOf(att, got)
	var tail []string
	if len(got.IntermediatePNGPaths) > 0 {
		tail = append(tail, "the step on which mismatch was detected also generated animation. The frames are:")
		tail = append(tail, got.IntermediatePNGPaths...)
		tail = append(tail, real.PNG)
	}
	return true, r.FrameFailure(&replay.Failure{Kind: replay.FrameMismatch, Summary: "mismatch after action"}, []string{"frame mismatch detected"}, real, want, tail)
}

// current rebuilds the state of the current attempt by replay and checks
// it against the attempt's latest frame.
func (r *run) current(ctx context.Context, c *client.Client) (worldmodel.State, session.Position, error) {
	rec, err := session.OpenRecorder(c.SessionRoot())
	if err != nil {
		return nil, session.Position{}, err
	}
	pos := rec.Position()
	if pos.Dir == "" {
		return nil, pos, r.Fail(&replay.Failure{Kind: replay.NotPlayable, Report: "no attempt recorded yet; start the game first. Nothing was sent."})
	}
	att, err := session.ReadAttempt(pos.Dir)
	if err != nil {
		return nil, pos, err
	}
	if att.Status != session.Running {
		return nil, pos, r.Fail(&replay.Failure{Kind: replay.NotPlayable, Report: fmt.Sprintf(
			"level %d attempt %d ended with %s; send RESET with the game client first. Nothing was sent.", att.Level, att.Index, att.Status)})
	}
	where := fmt.Sprintf("level %d, attempt %d", att.Level, att.Index)
	s, err := r.Replay(ctx, &att, len(att.Steps), func(k int) string {
		if k == 0 {
			return "rebuilding the current state: " + where + ", initial state"
		}
		return fmt.Sprintf("rebuilding the current state: %s, step %d", where, att.Steps[k-1].Index)
	}, func(k int, _ worldmodel.State, status session.Status) error {
		if status == session.Running {
			return nil
		}
		return r.Fail(&replay.Failure{Kind: replay.ReplayMismatch, Report: fmt.Sprintf(
			"rebuilding the current state: %s, step %d: predicted status %s, observed RUNNING. Nothing was sent; run the verifier.", where, att.Steps[k-1].Index, status)})
	})
	if err != nil {
		return nil, pos, err
	}
	step := len(att.Steps)
	real := replay.InitialOf(&att)
	if step > 0 {
		real = replay.FinalOf(&att, &att.Steps[step-1])
	}
	got, err := r.Render(ctx, s, att.Index, step)
	if err != nil {
		return nil, pos, r.ModelErr(0, "rebuilding the current state: "+where+", rendering", err)
	}
	if !frame.Equal(got, real.Grid) {
		return nil, pos, r.FrameFailure(&replay.Failure{Kind: replay.ReplayMismatch},
			[]string{fmt.Sprintf("rebuilding the current state: %s, step %d: rendered frame mismatch. Nothing was sent; run the verifier.", where, step)},
			real, got, nil)
	}
	return s, pos, nil
}
