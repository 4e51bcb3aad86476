package main

// The arc subcommands: the ARC-AGI-3 world-model harness (spec arc.md).
//
//	evident arc verify [--workspace DIR] [--call-steps N] [--model-cmd CMD [--call-timeout D]]
//	evident arc planner verify [--workspace DIR] [--call-steps N] [--plan-steps N] [--model-cmd CMD]
//	evident arc planner run (--from-current | --from-initial LEVEL | --from-attempt LEVEL ATTEMPT STEP) [flags]
//
// The world model is the Starlark one of the workspace (the sandboxed
// default), or with --model-cmd any program speaking the subprocess protocol
// of package evident/arc/worldmodel; --model-cmd python runs the built-in
// adapter over seed-style world_model_*.py files (python3 with numpy).
// --call-steps and --plan-steps apply to Starlark only, --call-timeout to a
// subprocess only. Reports go to stdout exactly as package evident/arc/verify
// writes them; the world model's print() output (a subprocess's stderr) goes
// to stderr. Every failure exits with status 1 (spec "Verification") and a
// one-line summary on stderr.

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
	"time"

	"github.com/urfave/cli/v3"

	"evident/arc/verify"
	"evident/arc/worldmodel"
)

func arcCommand() *cli.Command {
	return withScriptMode(&cli.Command{
		Name:  "arc",
		Usage: "ARC-AGI-3 world-model harness: verify a world model (Starlark, or a subprocess with --model-cmd) against the recorded session, run its planner",
		Commands: append([]*cli.Command{
			arcVerifyCommand(),
			{
				Name:     "planner",
				Usage:    "check or run the world model's main planner",
				Commands: []*cli.Command{arcPlannerVerifyCommand(), arcPlannerRunCommand(), arcPlannerAuxCommand()},
			},
			arcScoreCommand(),
			arcAgentCommand(), arcResultsCommand(),
		}, append(arcPlayCommands(), arcWorkspaceCommands()...)...),
	})
}

// arcFlags are shared by every arc subcommand.
func arcFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workspace", Value: ".", Usage: "agent workspace: " + worldmodel.EngineFile + ", " + worldmodel.StateIOFile + ", " +
			worldmodel.PlannerFile + ", client/session/, initial_full_frames/; mismatch_frames/ is written here"},
		&cli.Uint64Flag{Name: "call-steps", Value: worldmodel.DefaultCallSteps, Usage: "Starlark step limit of one engine, reconstruction, renderer or overrides call"},
		&cli.Uint64Flag{Name: "plan-steps", Value: worldmodel.DefaultPlanSteps, Usage: "Starlark step limit of one planner call"},
		&cli.StringFlag{Name: "model-cmd", Usage: "run the world model as a subprocess speaking evident's JSON-lines protocol instead of Starlark: " +
			"a command line run by sh -c in the workspace; \"python\" runs the built-in adapter for " + worldmodel.PythonEngineFile + ", " +
			worldmodel.PythonStateIOFile + ", " + worldmodel.PythonPlannerFile + " (\"" + worldmodel.PythonCommandLine + "\"; " +
			worldmodel.AdapterPlaceholder + " is the adapter's path, e.g. '/usr/bin/python3 " + worldmodel.AdapterPlaceholder + "')"},
		&cli.StringFlag{Name: "python", Usage: "run a Python world model (" + worldmodel.PythonEngineFile + ", …) with this interpreter; without it a Python model " +
			"(chosen by --model-cmd python, or a workspace with " + worldmodel.PythonEngineFile + " and no " + worldmodel.EngineFile + ") runs with the first python3 on PATH " +
			"that imports numpy, else " + strings.Join(worldmodel.FallbackPythons, " or ") + "; the one chosen is named on stderr"},
		&cli.StringFlag{Name: "script-prefix", Usage: "print `NAME: ` before the report's headline lines, as baseline1's script NAME does (the workspace launchers set it)"},
		&cli.Int64Flag{Name: "model-memory", Usage: "memory limit of the world model in MiB (0: the default, " + fmt.Sprint(worldmodel.DefaultMemoryLimit>>20) +
			" MiB for Starlark, heap growth watched during each call; " + fmt.Sprint(worldmodel.DefaultSubprocessMemory>>20) + " MiB of address space for --model-cmd under bwrap)"},
		&cli.StringFlag{Name: "sandbox", Value: "auto", Usage: "with --model-cmd: auto (bubblewrap where it works, else the guard rails, with a notice), bwrap (fail without it) or off"},
		&cli.DurationFlag{Name: "call-timeout", Value: time.Minute, Usage: "with --model-cmd: time limit of one engine, reconstruction, renderer or overrides call (0: none; the planner has the run's limit)"},
		// The time limit is a rule of the harness, not an agent's choice;
		// tests shorten it.
		&cli.DurationFlag{Name: "time-limit", Value: verify.TimeLimit, Hidden: true},
	}
}

// arcModel loads the world model of --workspace: the subprocess of
// --model-cmd; the Python adapter ("--model-cmd python", --python, or a
// workspace with world_model_engine.py and no world_model_engine.star) with
// the interpreter arcPython picks; else the Starlark model. A load failure
// is printed to stdout like any other model failure and becomes exit
// status 1.
func arcModel(ctx context.Context, cmd *cli.Command, name string) (worldmodel.Model, error) {
	var m worldmodel.Model
	var err error
	ws := cmd.String("workspace")
	if cmd.Int64("model-memory") < 0 {
		return nil, cli.Exit(name+": --model-memory must be 0 or more MiB", 2)
	}
	mib := cmd.Int64("model-memory") << 20
	command := cmd.String("model-cmd")
	if strings.TrimSpace(command) == worldmodel.PythonCommand || (command == "" && arcIsPython(cmd, ws)) {
		var py worldmodel.Python
		if py, err = worldmodel.FindPython(ctx, cmd.String("python"), os.Getenv("PATH")); err != nil {
			fmt.Fprintln(cmd.Root().Writer, err.Error())
			return nil, cli.Exit(name+": the world model failed to load", 1)
		}
		fmt.Fprintln(cmd.Root().ErrWriter, py.String())
		command = py.Command()
	}
	if command != "" {
		var mode worldmodel.SandboxMode
		switch cmd.String("sandbox") {
		case "auto":
			mode = worldmodel.SandboxAuto
		case "bwrap":
			mode = worldmodel.SandboxBwrap
		case "off":
			mode = worldmodel.SandboxOff
		default:
			return nil, cli.Exit(fmt.Sprintf("%s: --sandbox %q: want auto, bwrap or off", name, cmd.String("sandbox")), 2)
		}
		m, err = worldmodel.LoadSubprocess(ctx, worldmodel.SubprocessOptions{
			Command:     command,
			Dir:         ws,
			Print:       cmd.Root().ErrWriter,
			CallTimeout: cmd.Duration("call-timeout"),
			Sandbox:     mode,
			MemoryLimit: mib,
		})
	} else {
		m, err = worldmodel.LoadStarlark(ctx, worldmodel.StarlarkOptions{
			Dir:         ws,
			CallSteps:   cmd.Uint64("call-steps"),
			PlanSteps:   cmd.Uint64("plan-steps"),
			Print:       cmd.Root().ErrWriter,
			MemoryLimit: mib,
		})
	}
	if err != nil {
		detail := err.Error()
		var ce *worldmodel.CallError
		if errors.As(err, &ce) {
			detail = ce.Detail()
		}
		fmt.Fprintln(cmd.Root().Writer, detail)
		return nil, cli.Exit(name+": the world model failed to load", 1)
	}
	return m, nil
}

// arcIsPython reports whether, without --model-cmd, the model is Python:
// --python is set, or ws has world_model_engine.py and no
// world_model_engine.star.
func arcIsPython(cmd *cli.Command, ws string) bool {
	if cmd.String("python") != "" {
		return true
	}
	_, errStar := os.Stat(filepath.Join(ws, worldmodel.EngineFile))
	_, errPy := os.Stat(filepath.Join(ws, worldmodel.PythonEngineFile))
	return errors.Is(errStar, fs.ErrNotExist) && errPy == nil
}

func arcOptions(cmd *cli.Command) verify.Options {
	return verify.Options{Workspace: cmd.String("workspace"), Out: cmd.Root().Writer, TimeLimit: cmd.Duration("time-limit"), Prefix: cmd.String("script-prefix")}
}

// arcExit maps a verify error to exit status 1: a *verify.Failure (already
// reported on stdout) is summarised by its first line; any other error
// (an unreadable session, say) is given whole.
func arcExit(name string, err error) error {
	if err == nil {
		return nil
	}
	return cli.Exit(name+": "+err.Error(), 1)
}

func arcVerifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "replay every recorded attempt of levels 1..current through the world model; exit 1 at the first mismatch (artifacts in mismatch_frames/N/)",
		Flags: arcFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			m, err := arcModel(ctx, cmd, "arc verify")
			if err != nil {
				return err
			}
			defer m.Close()
			return arcExit("arc verify", verify.Verify(ctx, m, arcOptions(cmd)))
		},
	}
}

func arcPlannerVerifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "run the main planner from the initial state of every completed level; its plan must reach LEVEL_COMPLETED in the engine",
		Flags: arcFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			m, err := arcModel(ctx, cmd, "arc planner verify")
			if err != nil {
				return err
			}
			defer m.Close()
			return arcExit("arc planner verify", verify.VerifyPlanner(ctx, m, arcOptions(cmd)))
		},
	}
}

func arcPlannerRunCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "print the main planner's plan from a recorded state after checking it reaches LEVEL_COMPLETED in the engine (nothing is sent to the game)",
		ArgsUsage: "[LEVEL ATTEMPT STEP, with --from-attempt]",
		Flags: append(arcFlags(),
			&cli.BoolFlag{Name: "from-current", Usage: "plan from the current attempt after its last recorded step"},
			&cli.IntFlag{Name: "from-initial", Usage: "plan from the initial state of level `LEVEL`"},
			&cli.BoolFlag{Name: "from-attempt", Usage: "plan from level LEVEL attempt ATTEMPT after STEP steps (three arguments)"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			src, err := arcSource(cmd)
			if err != nil {
				return cli.Exit("arc planner run: "+err.Error(), 2)
			}
			m, err := arcModel(ctx, cmd, "arc planner run")
			if err != nil {
				return err
			}
			defer m.Close()
			_, err = verify.RunPlanner(ctx, m, src, arcOptions(cmd))
			return arcExit("arc planner run", err)
		},
	}
}

func arcPlannerAuxCommand() *cli.Command {
	return &cli.Command{
		Name: "aux",
		Usage: "run an auxiliary planner (MODULE.py or MODULE.star, e.g. level_4_planner_1) from a recorded state, re-simulate its plan in the engine, " +
			"write the simulated frames to aux_planner_frames/N/ and print the plan (baseline1 run_aux_planner.py; nothing is sent to the game)",
		ArgsUsage: "MODULE [LEVEL ATTEMPT STEP, with --from-attempt]",
		Flags: append(arcFlags(),
			&cli.StringFlag{Name: "goal", Usage: "JSON value passed to the planner as planner(state, goal=GOAL)"},
			&cli.BoolFlag{Name: "from-current", Usage: "plan from the current attempt after its last recorded step"},
			&cli.IntFlag{Name: "from-initial", Usage: "plan from the initial state of level `LEVEL`"},
			&cli.BoolFlag{Name: "from-attempt", Usage: "plan from level LEVEL attempt ATTEMPT after STEP steps (three arguments after MODULE)"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			// MODULE is the one argument that is not a number, so that
			// baseline1's "--from-attempt 4 1 5 level_4_planner_1" order
			// works as well as "level_4_planner_1 --from-attempt 4 1 5".
			var module string
			var rest []string
			for _, a := range cmd.Args().Slice() {
				if _, err := strconv.Atoi(a); err == nil || module != "" {
					rest = append(rest, a)
				} else {
					module = a
				}
			}
			if module == "" {
				return cli.Exit("arc planner aux: give the planner MODULE, e.g. level_4_planner_1", 2)
			}
			src, err := arcSourceArgs(cmd, rest)
			if err != nil {
				return cli.Exit("arc planner aux: "+err.Error(), 2)
			}
			var goal json.RawMessage
			if cmd.IsSet("goal") {
				if goal = json.RawMessage(cmd.String("goal")); !json.Valid(goal) {
					return cli.Exit(fmt.Sprintf("arc planner aux: --goal %q is not JSON", cmd.String("goal")), 2)
				}
			}
			m, err := arcModel(ctx, cmd, "arc planner aux")
			if err != nil {
				return err
			}
			defer m.Close()
			_, err = verify.RunAuxPlanner(ctx, m, module, src, goal, arcOptions(cmd))
			return arcExit("arc planner aux", err)
		},
	}
}

// arcSource reads the one start-state choice of planner run.
func arcSource(cmd *cli.Command) (verify.Source, error) {
	return arcSourceArgs(cmd, cmd.Args().Slice())
}

// arcSourceArgs reads the start-state choice, args being the positional
// arguments left for --from-attempt.
func arcSourceArgs(cmd *cli.Command, args []string) (verify.Source, error) {
	var src verify.Source
	n := 0
	if cmd.Bool("from-current") {
		src, n = verify.Source{From: verify.FromCurrent}, n+1
	}
	if cmd.IsSet("from-initial") {
		src, n = verify.Source{From: verify.FromInitial, Level: cmd.Int("from-initial")}, n+1
		if src.Level < 1 {
			return src, fmt.Errorf("--from-initial %d: want a level ≥ 1", src.Level)
		}
	}
	if cmd.Bool("from-attempt") {
		n++
		if len(args) != 3 {
			return src, fmt.Errorf("--from-attempt takes LEVEL ATTEMPT STEP, got %d arguments", len(args))
		}
		var v [3]int
		for i, a := range args {
			x, err := strconv.Atoi(a)
			if err != nil || x < 0 || (i < 2 && x < 1) {
				return src, fmt.Errorf("--from-attempt %s %s %s: want LEVEL ≥ 1, ATTEMPT ≥ 1, STEP ≥ 0", args[0], args[1], args[2])
			}
			v[i] = x
		}
		src = verify.Source{From: verify.FromAttempt, Level: v[0], Attempt: v[1], Step: v[2]}
	} else if len(args) > 0 {
		return src, fmt.Errorf("unexpected arguments %q", args)
	}
	if n != 1 {
		return src, errors.New("give exactly one of --from-current, --from-initial LEVEL, --from-attempt LEVEL ATTEMPT STEP")
	}
	return src, nil
}
