package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"evident/arc/internal/numbered"
	"evident/arc/session"
	"evident/arc/worldmodel"
)

// AuxFramesDir is the folder, relative to the workspace, that holds one
// numbered folder of simulated frames per auxiliary-planner run (baseline1
// mismatch_artifacts.AUX_PLANNER_ROOT).
const AuxFramesDir = "aux_planner_frames"

// AuxResult is what RunAuxPlanner found and wrote.
type AuxResult struct {
	// Module is the planner module as printed (".py"/".star" stripped).
	Module string
	// Plan is the planner's plan (never empty).
	Plan []session.Action
	// Status is the engine's status where the re-simulation stopped: the
	// first non-RUNNING status, or RUNNING when every action ran.
	Status session.Status
	// Dir is the absolute folder aux_planner_frames/<N> written.
	Dir string
	// Files are the base names written into Dir, in order:
	// step_0000_initial.txt, step_0000_initial.png, then step_KKKK.txt and
	// step_KKKK.png for every action K whose status was RUNNING.
	Files []string
}

// AuxModuleName strips one ".py" or ".star" from module, as baseline1's
// normalize_planner_module_name strips ".py".
func AuxModuleName(module string) string {
	if s, ok := strings.CutSuffix(module, ".py"); ok {
		return s
	}
	if s, ok := strings.CutSuffix(module, ".star"); ok {
		return s
	}
	return module
}

// RunAuxPlanner runs an auxiliary planner (baseline1 run_aux_planner.py):
// it reconstructs the state src names (as RunPlanner does), calls
// module.planner(state) — planner(state, goal=G) when goal is not nil, G the
// JSON value goal — through m (which must implement worldmodel.AuxPlanner),
// re-simulates the plan in the engine and writes the simulated frames to
// <workspace>/aux_planner_frames/<N>/ (N = highest all-digit folder + 1):
// step_0000_initial (the rendered start state) and step_KKKK for every
// action K (1-based) after which the status is RUNNING, each as .txt (hex
// ASCII) and .png. Frames are state_renderer's, without
// apply_render_overrides, as in baseline1. The report, with P the prefix
// (Options.Prefix + ": ", or ""):
//
//	P plan from <source> using <module>
//	P simulated plan reached level completion        (only when it did)
//	P simulated frames for the plan were written to <dir>
//	P written files
//	step_0000_initial.txt
//	step_0000_initial.png
//	step_0001.txt
//	…
//	                                                 (an empty line)
//	ACTIONS:
//	<one action a line, FormatAction>
//
// As in baseline1, a non-empty plan is accepted whatever the re-simulation
// reaches (the prompts make the planner check its own target); the
// completion line says whether it completed the level, and
// AuxResult.Status tells the caller. "P no plan found from <source> using
// <module>" (None or an empty plan), a model error (where: "aux planner
// <module> from <source>" or "re-simulation of the plan from <source>"), a
// bad source or PlannerTooSlowMessage are written and returned as a
// *Failure. Nothing is sent to the game.
func RunAuxPlanner(ctx context.Context, m worldmodel.Model, module string, src Source, goal json.RawMessage, opts Options) (*AuxResult, error) {
	aux, ok := m.(worldmodel.AuxPlanner)
	if !ok {
		return nil, fmt.Errorf("verify: this world model runtime (%T) cannot run auxiliary planners", m)
	}
	module = AuxModuleName(module)
	if goal != nil && !json.Valid(goal) {
		return nil, fmt.Errorf("goal %q is not JSON", clipGoal(goal))
	}
	r, ctx, cancel, err := newRun(ctx, m, opts, PlannerTooSlowMessage)
	if err != nil {
		return nil, err
	}
	defer cancel()
	s, level, err := r.stateFrom(ctx, src)
	if err != nil {
		return nil, err
	}
	using := src.String() + " using " + module
	plan, err := aux.AuxPlan(ctx, s, module, goal)
	if err != nil {
		return nil, r.ModelErr(level, "aux planner "+module+" from "+src.String(), err)
	}
	if len(plan) == 0 {
		return nil, r.Fail(&Failure{Kind: NoPlan, Level: level, Report: r.Head + "no plan found from " + using})
	}
	res := &AuxResult{Module: module, Plan: plan, Status: session.Running}
	where := "re-simulation of the plan from " + src.String()
	if res.Dir, _, err = numbered.Claim(filepath.Join(r.Workspace, AuxFramesDir)); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	write := func(stem string, st worldmodel.State) error {
		g, err := m.Render(ctx, st)
		if err != nil {
			return r.ModelErr(level, where, err)
		}
		if err := g.WriteASCIIFile(filepath.Join(res.Dir, stem+".txt")); err != nil {
			return err
		}
		if err := g.WritePNGFile(filepath.Join(res.Dir, stem+".png")); err != nil {
			return err
		}
		res.Files = append(res.Files, stem+".txt", stem+".png")
		return nil
	}
	if err := write("step_0000_initial", s); err != nil {
		return nil, err
	}
	for i, a := range plan {
		if s, res.Status, err = m.Step(ctx, s, a); err != nil {
			return nil, r.ModelErr(level, where, err)
		}
		if res.Status != session.Running {
			break
		}
		if err := write(fmt.Sprintf("step_%04d", i+1), s); err != nil {
			return nil, err
		}
	}
	r.Printf("%splan from %s\n", r.Head, using)
	if res.Status == session.LevelCompleted {
		r.Printf("%ssimulated plan reached level completion\n", r.Head)
	}
	r.Printf("%ssimulated frames for the plan were written to %s\n", r.Head, res.Dir)
	r.Printf("%swritten files\n", r.Head)
	for _, f := range res.Files {
		r.Printf("%s\n", f)
	}
	r.Printf("\nACTIONS:\n")
	for _, a := range plan {
		r.Printf("%s\n", FormatAction(a))
	}
	return res, nil
}

func clipGoal(b []byte) string {
	s := strings.ToValidUTF8(string(b), "�")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
