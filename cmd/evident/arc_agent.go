package main

// evident arc agent: the controller that plays a whole game with a coding
// agent (issue 11; spec arc.md "The agent loop", "The controller,
// exactly"), and evident arc results, the table across runs.
//
//	evident arc agent --game ID --agent-cmd 'codex -m gpt-5.5 --dangerously-bypass-approvals-and-sandbox' [--server URL] [--workspace DIR]
//	evident arc agent --games a,b,c --parallel N --agent-cmd '…' [--workspace ROOT]
//	evident arc agent --demo [--game trek-v1] [--workspace DIR]
//	evident arc results RUN_DIR…
//
// Without --server the built-in local game server runs in this process on
// a loopback port. Exit status: 0 when every game ran to a stop (solved or
// not), 1 when a game failed (its error is printed; other games go on), 2
// for bad arguments.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/urfave/cli/v3"

	"evident/arc/agent"
	"evident/arc/client"
	"evident/arc/games"
)

func arcAgentCommand() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "play a game end to end with a coding agent (Codex, Claude Code, any CLI) driven by baseline1's controller; transcript in WORKSPACE/agent/transcript.jsonl",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "game", Usage: "game id (with --demo: " + games.Trek.ID + " by default)"},
			&cli.StringFlag{Name: "games", Usage: "several game ids, comma-separated: one workspace and one agent each (WORKSPACE/GAME)"},
			&cli.IntFlag{Name: "parallel", Value: 1, Usage: "with --games: how many games at once"},
			&cli.StringFlag{Name: "server", Usage: "game server base URL (the real one: " + client.DefaultBaseURL + ", key in $" + client.EnvAPIKey + "); default: the built-in local server, started here"},
			&cli.Uint64Flag{Name: "seed", Usage: "level seed of the built-in local server"},
			&cli.StringFlag{Name: "workspace", Usage: "the workspace (made with evident arc init if new); with --games the folder of the workspaces; default arc-agent-GAME, or arc-agent-runs"},
			&cli.BoolFlag{Name: "python", Usage: "a new workspace gets the Python model stubs"},
			&cli.StringFlag{Name: "agent-cmd", Usage: "the agent's command line (shell quoting); the adapter adds its flags and the prompt goes to stdin"},
			&cli.StringFlag{Name: "agent-kind", Usage: "adapter: codex (exec --json, thread resume), claude (-p --output-format stream-json, --resume), plain (one process per turn); default from the program's name"},
			&cli.StringFlag{Name: "prompts", Usage: "folder of prompt files replacing the built-in ones (names: " + strings.Join(agent.PromptFiles, ", ") + ")"},
			&cli.IntFlag{Name: "exploration", Value: -1, Usage: "direct client moves allowed on level 1 (default 3); later levels allow none"},
			&cli.IntFlag{Name: "max-iterations", Usage: "stop after this many controller iterations (0: no limit)"},
			&cli.DurationFlag{Name: "idle-limit", Value: agent.DefaultIdleLimit, Usage: "stop an agent turn whose output is idle this long (then recover, at most 10 times)"},
			&cli.BoolFlag{Name: "demo", Usage: "play with a scripted stand-in agent (no model account): it dies once, is reset by the controller, and wins"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			w := cmd.Root().Writer
			ids := splitList(cmd.String("games"))
			if g := cmd.String("game"); g != "" {
				if len(ids) > 0 {
					return cli.Exit("arc agent: give --game or --games, not both", 2)
				}
				ids = []string{g}
			}
			demo := cmd.Bool("demo")
			if demo && len(ids) == 0 {
				ids = []string{games.Trek.ID}
			}
			if len(ids) == 0 {
				return cli.Exit("arc agent: give --game ID or --games a,b,c (or --demo)", 2)
			}
			argv, err := splitCommand(cmd.String("agent-cmd"))
			if err != nil {
				return cli.Exit("arc agent: --agent-cmd: "+err.Error(), 2)
			}
			if !demo && len(argv) == 0 {
				return cli.Exit("arc agent: give --agent-cmd (or --demo)", 2)
			}
			server := cmd.String("server")
			if server == "" {
				srv := games.NewServer(games.Config{Seed: cmd.Uint64("seed")})
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					return cli.Exit("arc agent: "+err.Error(), 1)
				}
				hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
				go hs.Serve(ln)
				defer hs.Close()
				server = "http://" + ln.Addr().String()
				fmt.Fprintf(w, "local game server at %s (seed %d)\n", server, cmd.Uint64("seed"))
			}
			bin, err := os.Executable()
			if err != nil {
				return cli.Exit("arc agent: "+err.Error(), 1)
			}
			base := agent.GameOptions{
				Server: server, Python: cmd.Bool("python"), EvidentBin: bin, AgentCmd: argv, Kind: cmd.String("agent-kind"),
				PromptsDir: cmd.String("prompts"), Exploration: cmd.Int("exploration"), MaxIterations: cmd.Int("max-iterations"),
				Runner: &agent.Runner{Idle: cmd.Duration("idle-limit")}, Key: os.Getenv(client.EnvAPIKey), Log: w,
			}
			root := cmd.String("workspace")
			if len(ids) == 1 {
				ws := root
				if ws == "" {
					ws = "arc-agent-" + ids[0]
				}
				o := base
				o.Game, o.Workspace = ids[0], ws
				if demo {
					g := games.Lookup(ids[0])
					if g == nil {
						return cli.Exit(fmt.Sprintf("arc agent --demo: %q is not a built-in game; want one of %s", ids[0], gameIDs()), 2)
					}
					if o.Workspace, err = filepath.Abs(ws); err != nil {
						return cli.Exit("arc agent: "+err.Error(), 1)
					}
					dir, err := os.MkdirTemp("", "evident-agent-demo-")
					if err != nil {
						return cli.Exit("arc agent: "+err.Error(), 1)
					}
					defer os.RemoveAll(dir)
					if o.AgentCmd, err = agent.DemoScenario(g, cmd.Uint64("seed"), dir); err != nil {
						return cli.Exit("arc agent: "+err.Error(), 1)
					}
					o.Kind, o.Thresholds = agent.KindCodex, agent.DemoThresholds
					fmt.Fprintf(w, "demo: a scripted agent plays %s in %s\n", g.ID, o.Workspace)
				}
				out, res, err := agent.RunGame(ctx, o)
				if res != nil {
					agent.WriteResultsTable(w, []agent.Result{*res})
				}
				if err != nil {
					return cli.Exit("arc agent: "+err.Error(), 1)
				}
				fmt.Fprintf(w, "stopped: %s after %d iterations, %d agent turns, %d controller RESETs\n", out.Reason, out.Iterations, out.Turns, out.Resets)
				return nil
			}
			if demo {
				return cli.Exit("arc agent --demo plays one game", 2)
			}
			if root == "" {
				root = "arc-agent-runs"
			}
			runs := agent.RunGames(ctx, ids, cmd.Int("parallel"), root, base)
			var results []agent.Result
			var failed []string
			for _, r := range runs {
				if r.Result != nil {
					results = append(results, *r.Result)
				}
				if r.Err != nil {
					failed = append(failed, r.Game)
					fmt.Fprintf(cmd.Root().ErrWriter, "arc agent: %s: %v\n", r.Game, r.Err)
				}
			}
			agent.WriteResultsTable(w, results)
			if len(failed) > 0 {
				return cli.Exit("arc agent: failed: "+strings.Join(failed, ", "), 1)
			}
			return nil
		},
	}
}

func arcResultsCommand() *cli.Command {
	return &cli.Command{
		Name:      "results",
		Usage:     "results table across agent runs (RHAE per game and level, actions, resets, agent turns, time), shaped like baseline1's",
		ArgsUsage: "RUN_DIR… (agent workspaces)",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return cli.Exit("arc results: give at least one RUN_DIR", 2)
			}
			var rs []agent.Result
			var errs []error
			for _, d := range cmd.Args().Slice() {
				r, err := agent.ReadResult(d, nil)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				rs = append(rs, r)
			}
			if len(rs) > 0 { // no table at all when no run could be read
				agent.WriteResultsTable(cmd.Root().Writer, rs)
			}
			if len(errs) > 0 {
				return cli.Exit("arc results: "+errors.Join(errs...).Error(), 1)
			}
			return nil
		},
	}
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// splitCommand splits a command line into words as sh does for plain
// words, single and double quotes and backslashes (no expansions).
func splitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			if i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
				in = true
			}
		case unicode.IsSpace(r):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in %q", quote, s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}
