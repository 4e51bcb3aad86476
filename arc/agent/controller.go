package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"evident/arc/agent/policy"
	"evident/arc/session"
)

// Thresholds are the controller's step counts (spec arc.md "The controller,
// exactly"; secure_baseline1 agent.py).
type Thresholds struct {
	// Trouble1: steps on the level since its last trouble mark after which
	// a death gets the trouble1 prompt (100).
	Trouble1 int
	// Trouble2: steps since the last big-trouble mark after which a death
	// gets a fresh agent session with main + trouble2 (200).
	Trouble2 int
	// LevelSteps: steps on the current level that stop the run (1,500).
	LevelSteps int
}

// DefaultThresholds are 100, 200 and 1,500.
var DefaultThresholds = Thresholds{Trouble1: 100, Trouble2: 200, LevelSteps: 1500}

// Stop reasons (the "reason" of the transcript's stop entry).
const (
	StopSolved        = "solved"
	StopNoLevel       = "no level folder"
	StopLevelSteps    = "level step limit"
	StopStuck         = "no progress after the stuck prompt"
	StopRecoveryLimit = "recovery limit"
	StopNoSteps       = "the agent failed before any step"
	StopIterations    = "iteration limit"
	StopCanceled      = "canceled"
	StopError         = "error"
)

// Options configures a Controller.
type Options struct {
	// Workspace is the agent workspace (evident arc init).
	Workspace string
	// Agent plays the turns.
	Agent Agent
	// Prompts are the prompt texts (LoadPrompts).
	Prompts Prompts
	// Start starts the game and returns the client's output (the first
	// prompt carries it); Reset sends the controller's RESET and returns
	// the client's output. Both are required.
	Start, Reset func(ctx context.Context) (string, error)
	// Snapshots takes the git snapshot of every iteration; nil: Git{}.
	Snapshots Snapshotter
	// Thresholds; zero fields take DefaultThresholds'.
	Thresholds Thresholds
	// MaxRecoveries bounds the supervisor's recoveries (0: MaxRecoveries,
	// negative: none).
	MaxRecoveries int
	// MaxIterations stops the run after this many iterations (0: no
	// limit; baseline1 has none).
	MaxIterations int
	// Policy is written to agent/policy.json for the run (the client's
	// guard rails); nil: policy.Default().
	Policy *policy.Policy
	// Now is the clock of the transcript (nil: time.Now).
	Now func() time.Time
	// Log receives one line per prompt and per stop, for people; nil
	// discards.
	Log io.Writer
}

// Outcome is how a run ended.
type Outcome struct {
	Reason     string
	Iterations int
	Turns      int
	Resets     int
	Recoveries int
	Last       Inspection
}

// Controller drives one agent through one game (spec arc.md "The
// controller, exactly"; baseline1 secure_baseline1 agent.py and
// agent_runner.py). See the package documentation.
type Controller struct {
	o  Options
	tr *Transcript

	iteration  int
	hasPrev    bool
	prevSteps  int
	prevLevel  int
	trouble1   map[int]int
	trouble2   map[int]int
	hasStuck   bool
	lastStuck  int
	turns      int
	resets     int
	recoveries int
	stuckStop  bool
}

// TurnError is an agent turn that did not end well: a non-zero exit, or the
// idle watchdog stopped it. The supervisor's recovery follows.
type TurnError struct {
	Name     string
	ExitCode int
	TimedOut bool
}

func (e *TurnError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("agent turn %q: idle for the watchdog's limit, stopped", e.Name)
	}
	return fmt.Sprintf("agent turn %q: exit status %d", e.Name, e.ExitCode)
}

// New returns a controller; it checks the options and opens nothing.
func New(o Options) (*Controller, error) {
	if o.Workspace == "" || o.Agent == nil || o.Start == nil || o.Reset == nil {
		return nil, errors.New("agent: Options need Workspace, Agent, Start and Reset")
	}
	for _, k := range append([]string{"main", "continuation", "continuation_level1", "continuation_later", "death", "new_level", "stuck",
		"trouble1", "trouble1_level1", "trouble2", "trouble2_level1", "recovery", "client_output", "reset_output", "simplification_level1"}, SimplificationLater...) {
		if _, ok := o.Prompts[k]; !ok {
			return nil, fmt.Errorf("agent: prompt %q missing", k)
		}
	}
	if o.Snapshots == nil {
		o.Snapshots = Git{}
	}
	d := DefaultThresholds
	if o.Thresholds.Trouble1 == 0 {
		o.Thresholds.Trouble1 = d.Trouble1
	}
	if o.Thresholds.Trouble2 == 0 {
		o.Thresholds.Trouble2 = d.Trouble2
	}
	if o.Thresholds.LevelSteps == 0 {
		o.Thresholds.LevelSteps = d.LevelSteps
	}
	if o.MaxRecoveries == 0 {
		o.MaxRecoveries = MaxRecoveries
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return &Controller{o: o, trouble1: map[int]int{}, trouble2: map[int]int{}}, nil
}

func (c *Controller) logf(format string, args ...any) { fmt.Fprintf(c.o.Log, format+"\n", args...) }

func (c *Controller) append(e Entry) error {
	e.Iteration = c.iteration
	return c.tr.Append(e)
}

// send runs one turn: prompt entry, the agent's lines, the turn entry.
func (c *Controller) send(ctx context.Context, name, text string, fresh bool) error {
	sess := SessionResume
	if fresh || c.turns == 0 {
		sess = SessionFresh
	}
	if err := c.append(Entry{Kind: KindPrompt, Name: name, Text: text, Session: sess}); err != nil {
		return err
	}
	c.logf("iteration %d: prompt %s (%s session)", c.iteration, name, sess)
	c.turns++
	var werr error
	res, err := c.o.Agent.Turn(ctx, TurnRequest{Prompt: text, Fresh: sess == SessionFresh, Dir: c.o.Workspace, Line: func(stream string, b []byte) {
		ev := EventJSON(b)
		if stream == "stderr" {
			ev, _ = jsonMarshal(map[string]string{"stream": "stderr", "text": string(b)})
		}
		if e := c.append(Entry{Kind: KindAgentEvent, Event: ev}); e != nil && werr == nil {
			werr = e
		}
	}})
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	if err := c.append(Entry{Kind: KindTurn, ExitCode: res.ExitCode, Seconds: res.Seconds, TimedOut: res.TimedOut, AgentSession: res.Session}); err != nil {
		return err
	}
	if res.TimedOut || res.ExitCode != 0 {
		return &TurnError{Name: name, ExitCode: res.ExitCode, TimedOut: res.TimedOut}
	}
	return nil
}

func (c *Controller) inspect() (Inspection, error) {
	return Inspect(filepath.Join(c.o.Workspace, session.Dir))
}

// reset sends the controller's RESET and records its output.
func (c *Controller) reset(ctx context.Context) (string, error) {
	out, err := c.o.Reset(ctx)
	if err != nil {
		return "", fmt.Errorf("agent: the controller's RESET: %w", err)
	}
	c.resets++
	c.logf("iteration %d: controller sent RESET", c.iteration)
	return out, c.append(Entry{Kind: KindReset, Output: out})
}

func (c *Controller) p(name string) string { return c.o.Prompts[name] }

// simpleContinuation is continuation_level1 (level 1) or
// continuation_later, then the continuation string (agent.py
// get_simple_contination_prompt).
func (c *Controller) simpleContinuation(in Inspection) string {
	if in.Level == 1 {
		return c.p("continuation_level1") + "\n" + c.p("continuation")
	}
	return c.p("continuation_later") + "\n" + c.p("continuation")
}

func (c *Controller) simplification(ctx context.Context, in Inspection) error {
	if in.Level == 1 {
		return c.send(ctx, "simplification_level1", c.p("simplification_level1"), false)
	}
	for _, n := range SimplificationLater {
		if err := c.send(ctx, n, c.p(n), false); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) normalContinuation(ctx context.Context, in Inspection) error {
	if err := c.simplification(ctx, in); err != nil {
		return err
	}
	return c.send(ctx, "continuation", c.simpleContinuation(in), false)
}

// Protocol names (the inspection entry's "next").
const (
	NextStop         = "stop"
	NextDeath        = "death"
	NextNewLevel     = "new_level"
	NextStuck        = "stuck"
	NextContinuation = "continuation"
	NextRecovery     = "recovery"
)

// Choose is the controller's decision for an inspection: a stop reason (""
// when the run goes on) and the protocol (NextDeath, NextNewLevel,
// NextStuck, NextContinuation, or NextStop). It changes nothing.
func (c *Controller) Choose(in Inspection) (stop, next string) {
	switch {
	case in.Level == 0:
		return StopNoLevel, NextStop
	case in.StepsLevel >= c.o.Thresholds.LevelSteps:
		return StopLevelSteps, NextStop
	case c.hasStuck && in.StepsTotal == c.lastStuck:
		return StopStuck, NextStop
	case in.Solved:
		return StopSolved, NextStop
	case in.GameOver:
		return "", NextDeath
	case in.Level != 1 && in.Level != c.prevLevel:
		return "", NextNewLevel
	case c.hasPrev && c.prevSteps == in.StepsTotal:
		return "", NextStuck
	}
	return "", NextContinuation
}

// iterate runs the chosen protocol (agent.py iteration_loop).
func (c *Controller) iterate(ctx context.Context, in Inspection, next string) error {
	var err error
	switch next {
	case NextDeath:
		err = c.resetProtocol(ctx, in)
	case NextNewLevel:
		if err = c.send(ctx, "new_level", c.p("new_level"), false); err == nil {
			err = c.normalContinuation(ctx, in)
		}
	case NextStuck:
		if err = c.simplification(ctx, in); err == nil {
			err = c.send(ctx, "stuck", c.simpleContinuation(in)+"\n"+c.p("stuck"), false)
		}
		c.hasStuck, c.lastStuck = true, in.StepsTotal
	default:
		err = c.normalContinuation(ctx, in)
	}
	if err != nil {
		return err
	}
	c.prevLevel = in.Level
	c.hasPrev, c.prevSteps = true, in.StepsTotal
	return nil
}

// resetProtocol: death prompt, simplification, the controller's RESET, then
// trouble2 (fresh session), trouble1 or the normal reset prompt.
func (c *Controller) resetProtocol(ctx context.Context, in Inspection) error {
	if err := c.send(ctx, "death", c.p("death"), false); err != nil {
		return err
	}
	if err := c.simplification(ctx, in); err != nil {
		return err
	}
	out, err := c.reset(ctx)
	if err != nil {
		return err
	}
	tail := "\n\n" + c.p("reset_output") + "\n" + out
	steps, level := in.StepsLevel, in.Level
	suffix := ""
	if level == 1 {
		suffix = "_level1"
	}
	switch {
	case steps > c.trouble2[level]+c.o.Thresholds.Trouble2:
		c.trouble2[level], c.trouble1[level] = steps, steps
		text := c.p("main") + "\n\n" + c.p("continuation") + "\n\n" + c.p("trouble2"+suffix) + "\n" + c.p("continuation") + tail
		return c.send(ctx, "trouble2", text, true)
	case steps > c.trouble1[level]+c.o.Thresholds.Trouble1:
		c.trouble1[level] = steps
		return c.send(ctx, "trouble1", c.p("trouble1"+suffix)+"\n"+c.p("continuation")+tail, false)
	}
	return c.send(ctx, "reset", c.simpleContinuation(in)+tail, false)
}

// supervisorStop is agent_runner.py stop_conditions_met: no level, the
// level step limit, or solved (not the stuck rule).
func (c *Controller) supervisorStop(in Inspection) string {
	switch {
	case in.Level == 0:
		return StopNoLevel
	case in.StepsLevel >= c.o.Thresholds.LevelSteps:
		return StopLevelSteps
	case in.Solved:
		return StopSolved
	}
	return ""
}

// Run plays the game to a stop (see the package documentation) and returns
// how it ended. Agent turn failures are recovered as baseline1's
// supervisor does; other errors (the transcript, the client's start or
// RESET, git, inspection) end the run with a stop entry and are returned.
func (c *Controller) Run(ctx context.Context) (out *Outcome, err error) {
	tr, err := OpenTranscript(filepath.Join(c.o.Workspace, TranscriptPath), c.o.Now)
	if err != nil {
		return nil, err
	}
	c.tr = tr
	defer tr.Close()
	pol := policy.Default()
	if c.o.Policy != nil {
		pol = *c.o.Policy
	}
	writePolicy := func() error {
		pol.Iteration = c.iteration
		return policy.Write(c.o.Workspace, pol)
	}
	if err := writePolicy(); err != nil {
		return nil, err
	}
	defer policy.Remove(c.o.Workspace)
	var last Inspection
	finish := func(reason string, e error) (*Outcome, error) {
		msg := reason
		if e != nil {
			msg = reason + ": " + e.Error()
		}
		c.append(Entry{Kind: KindStop, Reason: msg})
		c.logf("stop: %s", msg)
		return &Outcome{Reason: reason, Iterations: c.iteration, Turns: c.turns, Resets: c.resets, Recoveries: c.recoveries, Last: last}, e
	}
	startOut, err := c.o.Start(ctx)
	if err != nil {
		return finish(StopError, fmt.Errorf("agent: start: %w", err))
	}
	turnErr := c.send(ctx, "main", c.p("main")+"\n\n"+c.p("continuation")+"\n\n"+c.p("client_output")+"\n"+startOut, true)
	for {
		if ctx.Err() != nil {
			return finish(StopCanceled, ctx.Err())
		}
		var te *TurnError
		if turnErr != nil && !errors.As(turnErr, &te) {
			return finish(StopError, turnErr)
		}
		if turnErr != nil {
			c.logf("iteration %d: %v", c.iteration, turnErr)
			// The supervisor (agent_runner.py): recover unless a stop
			// condition holds, the agent made no step, or the limit is
			// reached.
			if last, err = c.inspect(); err != nil {
				return finish(StopError, err)
			}
			r := c.supervisorStop(last)
			if r == "" && c.stuckStop && (c.o.MaxRecoveries < 0 || c.recoveries >= c.o.MaxRecoveries) {
				r = StopStuck
			}
			c.stuckStop = false
			if !errors.As(turnErr, &te) || te.Name != "stuck stop" {
				next := NextRecovery
				if r != "" {
					next = NextStop
				}
				if err := c.append(Entry{Kind: KindInspection, Level: last.Level, Attempt: last.Attempt, StepsTotal: last.StepsTotal,
					StepsLevel: last.StepsLevel, GameOver: last.GameOver, Solved: last.Solved, NewSteps: c.newSteps(last), Next: next}); err != nil {
					return finish(StopError, err)
				}
			}
			if r != "" {
				return finish(r, nil)
			}
			if last.StepsTotal == 0 {
				return finish(StopNoSteps, nil)
			}
			if c.o.MaxRecoveries < 0 || c.recoveries >= c.o.MaxRecoveries {
				return finish(StopRecoveryLimit, nil)
			}
			c.recoveries++
			// A recovery is a new controller process in baseline1: its
			// memory (trouble marks, stuck step, previous level) starts
			// afresh; the iteration count goes on, so tags stay unique.
			c.trouble1, c.trouble2, c.hasStuck, c.prevLevel = map[int]int{}, map[int]int{}, false, 0
			if last.GameOver {
				if _, err := c.reset(ctx); err != nil {
					return finish(StopError, err)
				}
				if last, err = c.inspect(); err != nil {
					return finish(StopError, err)
				}
			}
			c.hasPrev, c.prevSteps = true, last.StepsTotal
			turnErr = c.send(ctx, "recovery", c.p("main")+"\n\n"+c.p("recovery"), true)
			if turnErr == nil {
				turnErr = c.normalContinuation(ctx, last)
			}
			continue
		}
		if c.o.MaxIterations > 0 && c.iteration >= c.o.MaxIterations {
			return finish(StopIterations, nil)
		}
		c.iteration++
		if err := writePolicy(); err != nil {
			return finish(StopError, err)
		}
		if last, err = c.inspect(); err != nil {
			return finish(StopError, err)
		}
		stop, next := c.Choose(last)
		if stop == StopStuck {
			next = NextRecovery
		}
		if err := c.append(Entry{Kind: KindInspection, Level: last.Level, Attempt: last.Attempt, StepsTotal: last.StepsTotal,
			StepsLevel: last.StepsLevel, GameOver: last.GameOver, Solved: last.Solved, NewSteps: c.newSteps(last), Next: next}); err != nil {
			return finish(StopError, err)
		}
		if stop == StopStuck {
			// baseline1's controller stops here; its supervisor then
			// recovers (its stop conditions do not include this one).
			turnErr = &TurnError{Name: "stuck stop"}
			c.stuckStop = true
			continue
		}
		if stop != "" {
			return finish(stop, nil)
		}
		msg, tag := SnapshotMessage(last.Level, last.StepsTotal, c.iteration), SnapshotTag(c.iteration)
		commit, err := c.o.Snapshots.Snapshot(ctx, c.o.Workspace, msg, tag)
		if err != nil {
			return finish(StopError, err)
		}
		if err := c.append(Entry{Kind: KindSnapshot, Commit: commit, Tag: tag, Message: msg}); err != nil {
			return finish(StopError, err)
		}
		turnErr = c.iterate(ctx, last, next)
	}
}

// newSteps is the steps since the previous iteration's inspection.
func (c *Controller) newSteps(in Inspection) int {
	if !c.hasPrev {
		return in.StepsTotal
	}
	return in.StepsTotal - c.prevSteps
}
