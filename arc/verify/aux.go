package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	r, ctx, cancel, err := newRun(ctx, m, opts)
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
		return nil, r.modelErr(level, "aux planner "+module+" from "+src.String(), err, PlannerTooSlowMessage)
	}
	if len(plan) == 0 {
		return nil, r.fail(&Failure{Kind: NoPlan, Level: level, Report: r.head + "no plan found from " + using})
	}
	res := &AuxResult{Module: module, Plan: plan, Status: session.Running}
	where := "re-simulation of the plan from " + src.String()
	if res.Dir, err = claimNumbered(filepath.Join(r.ws, AuxFramesDir)); err != nil {
		return nil, err
	}
	write := func(stem string, st worldmodel.State) error {
		g, err := m.Render(ctx, st)
		if err != nil {
			return r.modelErr(level, where, err, PlannerTooSlowMessage)
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
			return nil, r.modelErr(level, where, err, PlannerTooSlowMessage)
		}
		if res.Status != session.Running {
			break
		}
		if err := write(fmt.Sprintf("step_%04d", i+1), s); err != nil {
			return nil, err
		}
	}
	r.printf("%splan from %s\n", r.head, using)
	if res.Status == session.LevelCompleted {
		r.printf("%ssimulated plan reached level completion\n", r.head)
	}
	r.printf("%ssimulated frames for the plan were written to %s\n", r.head, res.Dir)
	r.printf("%swritten files\n", r.head)
	for _, f := range res.Files {
		r.printf("%s\n", f)
	}
	r.printf("\nACTIONS:\n")
	for _, a := range plan {
		r.printf("%s\n", FormatAction(a))
	}
	return res, nil
}

// claimNumbered creates root if needed and then root/<N>, N the highest
// all-digit folder name there plus one (1 when none); a folder made at the
// same time by another run moves N on. It returns the new folder's path.
func claimNumbered(root string) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("verify: %w", err)
	}
	for range 1000 {
		entries, err := os.ReadDir(root)
		if err != nil {
			return "", fmt.Errorf("verify: %w", err)
		}
		top := 0
		for _, e := range entries {
			n, err := strconv.Atoi(e.Name())
			if e.IsDir() && err == nil && n > top && strings.Trim(e.Name(), "0123456789") == "" {
				top = n
			}
		}
		dir := filepath.Join(root, strconv.Itoa(top+1))
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("verify: %w", err)
		}
	}
	return "", fmt.Errorf("verify: cannot claim a numbered folder in %s", root)
}

func clipGoal(b []byte) string {
	s := strings.ToValidUTF8(string(b), "�")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
