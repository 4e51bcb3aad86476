package verify

import (
	"context"
	"fmt"

	"evident/arc/replay"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// From selects the state RunPlanner plans from.
type From int

// Sources of the start state (seed script_tools.add_start_source_arguments).
const (
	// FromCurrent: the current attempt (the one whose latest record has the
	// highest step_index; ties go to the higher level, then attempt — the
	// rule of session.OpenRecorder) after all its recorded steps.
	FromCurrent From = iota + 1
	// FromInitial: the initial state of Source.Level, reconstructed from the
	// initial frame of its highest-numbered attempt.
	FromInitial
	// FromAttempt: attempt Source.Attempt of Source.Level after its first
	// Source.Step steps (0: its initial state).
	FromAttempt
)

// Source is where RunPlanner starts.
type Source struct {
	From                 From
	Level, Attempt, Step int
}

// String is the seed's description of the source: "current state",
// "initial state of level 2" or "level 2 attempt 1 step 5".
func (s Source) String() string {
	switch s.From {
	case FromCurrent:
		return "current state"
	case FromInitial:
		return fmt.Sprintf("initial state of level %d", s.Level)
	case FromAttempt:
		return fmt.Sprintf("level %d attempt %d step %d", s.Level, s.Attempt, s.Step)
	}
	return "unknown source"
}

// FormatAction formats one plan action as the planner commands print it
// (replay.FormatAction, seed format_action): the bare name ("ACTION1"), or
// compact JSON for ACTION6 ({"name":"ACTION6","x":15,"y":47}).
func FormatAction(a session.Action) string { return replay.FormatAction(a) }

// current returns the current attempt (see FromCurrent).
func current(sess *session.Session) *session.Attempt {
	var best *session.Attempt
	bestIndex := -1
	for li := range sess.Levels {
		for ai := range sess.Levels[li].Attempts {
			att := &sess.Levels[li].Attempts[ai]
			idx := att.InitialMetadata.StepIndex
			if n := len(att.Steps); n > 0 {
				idx = att.Steps[n-1].Metadata.StepIndex
			}
			if idx >= bestIndex { // levels and attempts are sorted: ≥ prefers the later
				best, bestIndex = att, idx
			}
		}
	}
	return best
}

// latest returns the highest-numbered attempt of level, or nil.
func latest(sess *session.Session, level int) *session.Attempt {
	lv := sess.Level(level)
	if lv == nil || len(lv.Attempts) == 0 {
		return nil
	}
	return &lv.Attempts[len(lv.Attempts)-1]
}

// simulate runs plan through the engine from s and returns the status at
// the first non-RUNNING step, or RUNNING (seed simulate_actions).
func simulate(ctx context.Context, m worldmodel.Model, s worldmodel.State, plan []session.Action) (session.Status, error) {
	status := session.Running
	for _, a := range plan {
		var err error
		if s, status, err = m.Step(ctx, s, a); err != nil {
			return "", err
		}
		if status != session.Running {
			break
		}
	}
	return status, nil
}

// stateFrom reconstructs the state src names: initial state plus replay of
// the recorded actions through the engine, never loaded.
func (r *run) stateFrom(ctx context.Context, src Source) (worldmodel.State, int, error) {
	var att *session.Attempt
	steps := 0
	switch src.From {
	case FromCurrent:
		att = current(r.sess)
		steps = len(att.Steps)
	case FromInitial:
		if att = latest(r.sess, src.Level); att == nil {
			return nil, 0, r.Fail(&Failure{Kind: BadSource, Level: src.Level,
				Report: fmt.Sprintf("No level-%d attempts found in the latest session.", src.Level)})
		}
	case FromAttempt:
		if lv := r.sess.Level(src.Level); lv != nil {
			for i := range lv.Attempts {
				if lv.Attempts[i].Index == src.Attempt {
					att = &lv.Attempts[i]
				}
			}
		}
		if att == nil {
			return nil, 0, r.Fail(&Failure{Kind: BadSource, Level: src.Level,
				Report: fmt.Sprintf("No level-%d attempt-%d found in the latest session.", src.Level, src.Attempt)})
		}
		if src.Step < 0 || src.Step > len(att.Steps) {
			return nil, 0, r.Fail(&Failure{Kind: BadSource, Level: src.Level,
				Report: fmt.Sprintf("level %d attempt %d has %d steps; step %d does not exist.", src.Level, src.Attempt, len(att.Steps), src.Step)})
		}
		steps = src.Step
	default:
		return nil, 0, fmt.Errorf("verify: unknown plan source %d", src.From)
	}
	where := src.String()
	s, err := r.Replay(ctx, att, steps, func(k int) string {
		if k == 0 {
			return where
		}
		return fmt.Sprintf("%s, replay of step %d", where, att.Steps[k-1].Index)
	}, func(k int, _ worldmodel.State, status session.Status) error {
		if status == session.Running {
			return nil
		}
		return r.Fail(&Failure{Kind: BadSource, Level: att.Level, Report: fmt.Sprintf(
			"cannot plan from %s: the world model's status after step %d of level %d attempt %d is %s.",
			where, att.Steps[k-1].Index, att.Level, att.Index, status)})
	})
	if err != nil {
		return nil, 0, err
	}
	return s, att.Level, nil
}

// RunPlanner reconstructs the state src names, calls the main planner on
// it, re-simulates the plan in the engine and writes the report to opts.Out
// (seed run_main_planner.py): "plan from <source>" and one action a line
// (FormatAction) when the plan reaches LEVEL_COMPLETED. Otherwise it writes
// and returns a *Failure: "no plan found from <source>" (None or an empty
// plan), "planner returned a plan from <source>, but world model execution
// ended with <STATUS>.", a model error with its traceback, a bad source, or
// PlannerTooSlowMessage past opts.TimeLimit. As in the seed, the
// re-simulation stops at the first non-RUNNING status, so actions after the
// completing one are printed but never matter. It does not send the plan to
// the game.
func RunPlanner(ctx context.Context, m worldmodel.Model, src Source, opts Options) ([]session.Action, error) {
	r, ctx, cancel, err := newRun(ctx, m, opts, PlannerTooSlowMessage)
	if err != nil {
		return nil, err
	}
	defer cancel()
	s, level, err := r.stateFrom(ctx, src)
	if err != nil {
		return nil, err
	}
	plan, err := m.Plan(ctx, s, nil)
	if err != nil {
		return nil, r.ModelErr(level, "planner from "+src.String(), err)
	}
	if len(plan) == 0 {
		return nil, r.Fail(&Failure{Kind: NoPlan, Level: level, Report: r.Head + "no plan found from " + src.String()})
	}
	status, err := simulate(ctx, m, s, plan)
	if err != nil {
		return nil, r.ModelErr(level, "re-simulation of the plan from "+src.String(), err)
	}
	if status != session.LevelCompleted {
		return nil, r.Fail(&Failure{Kind: PlanIncomplete, Level: level, Report: fmt.Sprintf(
			"%splanner returned a plan from %s, but world model execution ended with %s.", r.Head, src, status)})
	}
	r.Printf("%splan from %s\n", r.Head, src)
	for _, a := range plan {
		r.Printf("%s\n", FormatAction(a))
	}
	return plan, nil
}

// VerifyPlanner checks the main planner on every completed level (seed
// verify_main_planner.py) and writes the report to opts.Out. For level
// R = 1, 2, … up to the model level it stops, printing "No level-R attempts
// found, we skip this level" or "No completed level-R attempt found, we skip
// this level", at the first level without attempts or without an attempt
// that ended LEVEL_COMPLETED; otherwise it plans from the initial state of
// R's highest-numbered attempt, requires a non-empty plan whose
// re-simulation reaches LEVEL_COMPLETED, and prints "level R verified". It
// ends with "levels 1..V planner verification passed", or "no completed
// levels to verify". A failure writes "verification failed for level R" and
// "Main planner did not find a plan from the level-R initial state." or
// "Main planner plan from the level-R initial state did not reach
// completion.", a model error, or PlannerTooSlowMessage, and returns a
// *Failure.
func VerifyPlanner(ctx context.Context, m worldmodel.Model, opts Options) error {
	r, ctx, cancel, err := newRun(ctx, m, opts, PlannerTooSlowMessage)
	if err != nil {
		return err
	}
	defer cancel()
	verified := 0
	for level := 1; level <= r.sess.ModelLevel(); level++ {
		lv := r.sess.Level(level)
		if lv == nil {
			r.Printf("%sNo level-%d attempts found, we skip this level\n", r.Head, level)
			break
		}
		completed := false
		for _, att := range lv.Attempts {
			completed = completed || att.Status == session.LevelCompleted
		}
		if !completed {
			r.Printf("%sNo completed level-%d attempt found, we skip this level\n", r.Head, level)
			break
		}
		where := fmt.Sprintf("level %d initial state", level)
		s, err := r.Replay(ctx, latest(r.sess, level), 0, func(int) string { return where }, nil)
		if err != nil {
			return err
		}
		plan, err := m.Plan(ctx, s, nil)
		if err != nil {
			return r.ModelErr(level, where, err)
		}
		if len(plan) == 0 {
			return r.Fail(&Failure{Kind: NoPlan, Level: level, Report: fmt.Sprintf(
				"%sverification failed for level %d\nMain planner did not find a plan from the level-%d initial state.", r.Head, level, level)})
		}
		status, err := simulate(ctx, m, s, plan)
		if err != nil {
			return r.ModelErr(level, where+", re-simulation of the plan", err)
		}
		if status != session.LevelCompleted {
			return r.Fail(&Failure{Kind: PlanIncomplete, Level: level, Report: fmt.Sprintf(
				"%sverification failed for level %d\nMain planner plan from the level-%d initial state did not reach completion.", r.Head, level, level)})
		}
		r.Printf("%slevel %d verified\n", r.Head, level)
		verified = level
	}
	if verified > 0 {
		r.Printf("%slevels 1..%d planner verification passed\n", r.Head, verified)
	} else {
		r.Printf("%sno completed levels to verify\n", r.Head)
	}
	return nil
}
