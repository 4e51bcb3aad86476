package agent

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"evident/arc/agent/policy"
	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
	"evident/arc/workspace"
)

// GameOptions configures RunGame: one workspace, one agent, one game.
type GameOptions struct {
	// Game is the game id; Server the game server's base URL.
	Game, Server string
	// Workspace is created with evident arc init when it has no
	// evident_workspace.json (Python selects the Python model stubs);
	// EvidentBin is the binary its launchers exec.
	Workspace  string
	Python     bool
	EvidentBin string
	// AgentCmd is the agent's command line (argv) and Kind its adapter
	// (KindCodex, KindClaude, KindPlain; "" guesses with DetectKind).
	AgentCmd []string
	Kind     string
	// PromptsDir overrides prompt files (LoadPrompts).
	PromptsDir string
	// Exploration is the level-1 direct-move budget (policy); negative:
	// policy.DefaultExploration.
	Exploration int
	// Thresholds, MaxRecoveries, MaxIterations: see Options.
	Thresholds    Thresholds
	MaxRecoveries int
	MaxIterations int
	// Runner runs the agent processes (watchdog); nil: defaults.
	Runner *Runner
	// Key is the API key for a server not on loopback.
	Key string
	// Log receives the controller's lines.
	Log io.Writer
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// RunGame plays one game with one agent in one workspace and writes the
// result to WORKSPACE/agent/result.json (Result). Every error is returned;
// nothing of another game is touched, so callers may run several at once.
func RunGame(ctx context.Context, o GameOptions) (*Outcome, *Result, error) {
	if o.Game == "" || o.Workspace == "" || len(o.AgentCmd) == 0 {
		return nil, nil, errors.New("agent: a game, a workspace and an agent command are needed")
	}
	if o.Server == "" {
		o.Server = workspace.DefaultServerURL
	}
	if _, err := os.Stat(filepath.Join(o.Workspace, workspace.ConfigFile)); err != nil {
		if _, err := workspace.Init(o.Workspace, workspace.Options{Python: o.Python, ServerURL: o.Server, EvidentBin: o.EvidentBin}); err != nil {
			return nil, nil, err
		}
	}
	cfg, err := workspace.ReadConfig(o.Workspace)
	if err != nil {
		return nil, nil, err
	}
	ext := ".star"
	if cfg.Model == workspace.ModelPython {
		ext = ".py"
	}
	prompts, err := LoadPrompts(o.PromptsDir, o.Workspace, ext)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(client.Options{Workspace: o.Workspace, API: client.APIOptions{Key: o.Key}, Now: o.Now})
	if err != nil {
		return nil, nil, err
	}
	kind := o.Kind
	if kind == "" {
		kind = DetectKind(o.AgentCmd)
	}
	pol := policy.Default()
	if o.Exploration >= 0 {
		pol.Exploration["1"] = o.Exploration
	}
	ctl, err := New(Options{
		Workspace: o.Workspace,
		Agent:     &CLI{Kind: kind, Base: o.AgentCmd, Runner: o.Runner},
		Prompts:   prompts,
		Start: func(ctx context.Context) (string, error) {
			res, err := c.Start(ctx, o.Server, o.Game, api.OpenScorecardRequest{Tags: []string{"evident-agent"}})
			if err != nil {
				return "", err
			}
			var b bytes.Buffer
			err = client.WriteSummary(&b, res)
			return b.String(), err
		},
		Reset: func(ctx context.Context) (string, error) {
			res, err := c.MoveWith(ctx, session.Action{Name: "RESET"}, client.MoveOptions{Via: client.ViaController})
			if err != nil {
				return "", err
			}
			var b bytes.Buffer
			err = client.WriteSummary(&b, res)
			return b.String(), err
		},
		Thresholds: o.Thresholds, MaxRecoveries: o.MaxRecoveries, MaxIterations: o.MaxIterations,
		Policy: &pol, Now: o.Now, Log: o.Log,
	})
	if err != nil {
		return nil, nil, err
	}
	out, runErr := ctl.Run(ctx)
	if out == nil {
		return nil, nil, runErr
	}
	res, err := ReadResult(o.Workspace, nil)
	if err != nil {
		return out, nil, errors.Join(runErr, err)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(o.Workspace, ResultsFile), append(b, '\n'), 0o644); err != nil {
		return out, &res, errors.Join(runErr, err)
	}
	return out, &res, runErr
}

// GameRun is one game's outcome in RunGames.
type GameRun struct {
	Game    string
	Outcome *Outcome
	Result  *Result
	Err     error
}

// RunGames plays each game in its own workspace (root/GAME) with its own
// agent, at most parallel at once (issue 11 item 5); one game's failure
// does not touch the others. base gives every option but Game and
// Workspace. The runs are returned in the order of ids.
func RunGames(ctx context.Context, ids []string, parallel int, root string, base GameOptions) []GameRun {
	if parallel < 1 {
		parallel = 1
	}
	out := make([]GameRun, len(ids))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			o := base
			o.Game, o.Workspace = id, filepath.Join(root, id)
			if base.Log != nil {
				o.Log = &prefixWriter{w: base.Log, prefix: id + ": "}
			}
			r := GameRun{Game: id}
			func() {
				defer func() {
					if p := recover(); p != nil {
						r.Err = fmt.Errorf("agent: game %s: panic: %v", id, p)
					}
				}()
				r.Outcome, r.Result, r.Err = RunGame(ctx, o)
			}()
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// prefixWriter prefixes every line and serialises writers.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

var logMu sync.Mutex

func (p *prefixWriter) Write(b []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			io.WriteString(p.w, p.prefix+l)
		}
	}
	return len(b), nil
}

//go:embed testdata/fake_agent.py
var fakeAgentScript []byte

// DemoScenario writes, into dir, the scripted agent, the reference world
// model of g and a scenario that plays g (seed) with the controller
// (issue 11 "Show"): turn 1 sends one direct exploration move and tries a
// RESET of its own (refused), writes the model, verifies and plays a plan
// that dies (Trek: wall bumps until the move budget is gone); after the
// death and the controller's RESET it plays level 1's solution; on level 2
// its first continuation turn sends nothing (the stuck arm follows) and the
// stuck turn plays the level; later levels are played on their first
// continuation. It returns the agent's command line. The scenario assumes
// the controller with Thresholds.Trouble1 ≤ the death's steps on level 1
// (the trouble1 arm after the RESET); see DemoThresholds.
func DemoScenario(g *games.Game, seed uint64, dir string) ([]string, error) {
	if g.Levels() < 2 {
		return nil, fmt.Errorf("agent: demo: %s has fewer than 2 levels", g.ID)
	}
	models := filepath.Join(dir, "models")
	if err := os.MkdirAll(models, 0o755); err != nil {
		return nil, err
	}
	if err := games.WriteModel(g.ID, models); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "fake_agent.py")
	if err := os.WriteFile(script, fakeAgentScript, 0o755); err != nil {
		return nil, err
	}
	first := g.Actions[0]
	probe := session.Action{Name: fmt.Sprintf("ACTION%d", first)}
	var deathPlan []string
	lv := g.NewLevel(seed, 1)
	if _, o := lv.Act(probe); o != games.Playing {
		return nil, fmt.Errorf("agent: demo: the probe %s ends level 1 of %s", probe.Name, g.ID)
	}
	for _, try := range g.Actions {
		a := session.Action{Name: fmt.Sprintf("ACTION%d", try)}
		lv = g.NewLevel(seed, 1)
		lv.Act(probe)
		var plan []string
		for n := 0; n < 1000; n++ {
			_, o := lv.Act(a)
			plan = append(plan, a.Name)
			if o == games.Lost {
				deathPlan = plan
				break
			}
			if o == games.Completed {
				break
			}
		}
		if deathPlan != nil {
			break
		}
	}
	if deathPlan == nil {
		return nil, fmt.Errorf("agent: demo: no repeated action loses level 1 of %s", g.ID)
	}
	planArgs := func(acts []session.Action) []string {
		out := []string{"python3", "plan_executor.py"}
		for _, a := range acts {
			if a.Name == "ACTION6" {
				b, _ := a.MarshalJSON()
				out = append(out, string(b))
			} else {
				out = append(out, a.Name)
			}
		}
		return out
	}
	copyModel := map[string]string{}
	for _, n := range games.ModelFiles {
		copyModel[n] = filepath.Join(models, n)
	}
	type step map[string]any
	var turns [][]step
	// main: probe, a refused RESET, the model, verify, the deadly plan.
	turns = append(turns, []step{
		{"run": []string{"python3", "client.py", "move", probe.Name}, "cwd": "client"},
		{"run": []string{"python3", "client.py", "move", "RESET"}, "cwd": "client"},
		{"copy": copyModel},
		{"run": []string{"python3", "verify_world_model.py"}},
		{"run": append([]string{"python3", "plan_executor.py"}, deathPlan...)},
	})
	// death, simplification_level1: nothing; trouble1: level 1's solution.
	turns = append(turns, nil, nil, []step{{"run": planArgs(g.Solution(seed, 1))}})
	// level 2: new_level, 7 simplifications, continuation (nothing: stuck
	// next), 7 simplifications, stuck: the solution.
	for i := 0; i < 1+len(SimplificationLater); i++ {
		turns = append(turns, nil)
	}
	turns = append(turns, []step{{"run": []string{"python3", "verify_world_model.py"}}})
	for i := 0; i < len(SimplificationLater); i++ {
		turns = append(turns, nil)
	}
	turns = append(turns, []step{{"run": planArgs(g.Solution(seed, 2))}})
	// later levels: new_level, 7 simplifications, continuation: solution.
	for l := 3; l <= g.Levels(); l++ {
		for i := 0; i < 1+len(SimplificationLater); i++ {
			turns = append(turns, nil)
		}
		turns = append(turns, []step{{"run": planArgs(g.Solution(seed, l))}})
	}
	b, err := json.MarshalIndent(map[string]any{"turns": turns}, "", " ")
	if err != nil {
		return nil, err
	}
	sc := filepath.Join(dir, "scenario.json")
	if err := os.WriteFile(sc, b, 0o644); err != nil {
		return nil, err
	}
	os.Remove(sc + ".turn")
	return []string{"python3", script, "--scenario", sc}, nil
}

// DemoThresholds are the controller thresholds of the demo: trouble1 after
// 20 steps (the demo's single death on level 1 takes more, so its arm
// shows), the others as DefaultThresholds.
var DemoThresholds = Thresholds{Trouble1: 20, Trouble2: DefaultThresholds.Trouble2, LevelSteps: DefaultThresholds.LevelSteps}
