package main

// The arc subcommands that play games (spec arc.md "The real game", "Plan
// executor"):
//
//	evident arc client start GAME_ID [--workspace DIR] [--url URL] [--tag T]…
//	evident arc client move (ACTION | ACTION6 X Y | '{"name":"ACTION6","x":X,"y":Y}') [--reasoning JSON]
//	evident arc client status [--frame] [--scorecard]
//	evident arc client stop
//	evident arc client games [--url URL]
//	evident arc serve-games [--addr HOST:PORT] [--seed N] [--api-key K] [--rate-limit N]
//	evident arc plan-exec ACTION…  (predict, act, compare; halt at the first mismatch)
//	evident arc demo [--game ID] [--seed N] [--workspace DIR] [--keep]
//
// The API key comes from $ARC_API_KEY (never a flag, so it stays out of
// shell histories and process lists), the base URL from --url, else
// $ARC_BASE_URL, else the real server. Failures exit 1 (2 for bad
// arguments) with a one-line summary on stderr.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/planexec"
	"evident/arc/session"
	"evident/arc/verify"
	"evident/arc/worldmodel"
)

func arcPlayCommands() []*cli.Command {
	return []*cli.Command{arcClientCommand(), arcServeGamesCommand(), arcPlanExecCommand(), arcDemoCommand()}
}

// clientFlags are shared by the client subcommands and plan-exec.
func clientFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workspace", Value: ".", Usage: "agent workspace: the session goes to client/session/, the client state to client/client_state.json"},
		&cli.DurationFlag{Name: "lock-wait", Value: client.DefaultLockWait, Usage: "how long to wait for another client command in this workspace to finish"},
	}
}

// urlFlag is the server's base URL.
func urlFlag() cli.Flag {
	def := os.Getenv(client.EnvBaseURL)
	if def == "" {
		def = client.DefaultBaseURL
	}
	return &cli.StringFlag{Name: "url", Value: def, Usage: "base URL of the game server ($" + client.EnvBaseURL + "; the local one: http://127.0.0.1:8001)"}
}

// newClient builds the workspace's client; back-off notices go to stderr.
func newClient(cmd *cli.Command) (*client.Client, error) {
	return client.New(client.Options{
		Workspace: cmd.String("workspace"),
		LockWait:  cmd.Duration("lock-wait"),
		API:       client.APIOptions{Key: os.Getenv(client.EnvAPIKey), Log: cmd.Root().ErrWriter},
	})
}

// clientExit maps a client error to exit status 1 with a hint where one
// helps.
func clientExit(name string, err error) error {
	if err == nil {
		return nil
	}
	msg := name + ": " + err.Error()
	switch {
	case errors.Is(err, client.ErrGameOver):
		msg += "; send RESET: evident arc client move RESET"
	case errors.Is(err, client.ErrNotStarted):
		msg = name + ": no game started in this workspace; run: evident arc client start GAME_ID"
	}
	return cli.Exit(msg, 1)
}

func arcClientCommand() *cli.Command {
	return &cli.Command{
		Name:  "client",
		Usage: "play a game on the ARC-AGI-3 server (or the local one) and record every response in client/session/",
		Commands: []*cli.Command{
			{
				Name:      "start",
				Usage:     "open a scorecard, RESET the game and record level_01_attempt_01",
				ArgsUsage: "GAME_ID",
				Flags: append(clientFlags(), urlFlag(),
					&cli.StringSliceFlag{Name: "tag", Usage: "scorecard tag (repeatable)"},
					&cli.StringFlag{Name: "source-url", Usage: "scorecard source_url"}),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return cli.Exit("arc client start: want one GAME_ID (list them with: evident arc client games)", 2)
					}
					c, err := newClient(cmd)
					if err != nil {
						return clientExit("arc client start", err)
					}
					res, err := c.Start(ctx, cmd.String("url"), cmd.Args().First(),
						api.OpenScorecardRequest{Tags: cmd.StringSlice("tag"), SourceURL: cmd.String("source-url")})
					if err != nil {
						return clientExit("arc client start", err)
					}
					printResult(cmd.Root().Writer, res)
					return nil
				},
			},
			{
				Name:      "move",
				Usage:     "send one command (RESET or ACTION1..7) and record the response",
				ArgsUsage: `ACTION | ACTION6 X Y | '{"name":"ACTION6","x":X,"y":Y}'`,
				Flags:     append(clientFlags(), &cli.StringFlag{Name: "reasoning", Usage: "JSON value sent as the action's reasoning"}),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					a, err := parseMoveArgs(cmd.Args().Slice())
					if err != nil {
						return cli.Exit("arc client move: "+err.Error(), 2)
					}
					var reasoning json.RawMessage
					if r := cmd.String("reasoning"); r != "" {
						if !json.Valid([]byte(r)) {
							return cli.Exit("arc client move: --reasoning is not valid JSON", 2)
						}
						reasoning = json.RawMessage(r)
					}
					c, err := newClient(cmd)
					if err != nil {
						return clientExit("arc client move", err)
					}
					res, err := c.Move(ctx, a, reasoning)
					if err != nil {
						return clientExit("arc client move", err)
					}
					printResult(cmd.Root().Writer, res)
					return nil
				},
			},
			{
				Name:  "status",
				Usage: "show the game's state and the current attempt (sends nothing unless --scorecard)",
				Flags: append(clientFlags(),
					&cli.BoolFlag{Name: "frame", Usage: "also print the latest frame"},
					&cli.BoolFlag{Name: "scorecard", Usage: "also fetch and print the scorecard"}),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					c, err := newClient(cmd)
					if err != nil {
						return clientExit("arc client status", err)
					}
					s, err := c.Status()
					if err != nil {
						return clientExit("arc client status", err)
					}
					w := cmd.Root().Writer
					st := s.State
					fmt.Fprintf(w, "game %s at %s (scorecard %s, guid %s)\n", st.GameID, st.BaseURL, st.CardID, st.GUID)
					printState(w, st)
					if st.Stopped {
						fmt.Fprintln(w, "stopped: the scorecard is closed")
					}
					if p := s.Position; p.Dir != "" {
						fmt.Fprintf(w, "current attempt: level %d attempt %d, %d steps\n", p.Level, p.Attempt, p.Step)
					}
					if s.Frame != "" {
						fmt.Fprintf(w, "frame: %s\n", s.Frame)
						if cmd.Bool("frame") {
							b, err := os.ReadFile(s.Frame)
							if err != nil {
								return clientExit("arc client status", err)
							}
							w.Write(b)
						}
					}
					if cmd.Bool("scorecard") {
						sc, err := c.Scorecard(ctx)
						if err != nil {
							return clientExit("arc client status", err)
						}
						printJSON(w, sc)
					}
					return nil
				},
			},
			{
				Name:  "stop",
				Usage: "close the scorecard and print it",
				Flags: clientFlags(),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					c, err := newClient(cmd)
					if err != nil {
						return clientExit("arc client stop", err)
					}
					sc, err := c.Stop(ctx)
					if err != nil {
						return clientExit("arc client stop", err)
					}
					printJSON(cmd.Root().Writer, sc)
					return nil
				},
			},
			{
				Name:  "games",
				Usage: "list the server's games",
				Flags: []cli.Flag{urlFlag()},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					a, err := client.NewAPI(cmd.String("url"), client.APIOptions{Key: os.Getenv(client.EnvAPIKey), Log: cmd.Root().ErrWriter})
					if err != nil {
						return cli.Exit("arc client games: "+err.Error(), 2)
					}
					gs, err := a.Games(ctx)
					if err != nil {
						return cli.Exit("arc client games: "+err.Error(), 1)
					}
					for _, g := range gs {
						fmt.Fprintf(cmd.Root().Writer, "%s\t%s\n", g.GameID, g.Title)
					}
					return nil
				},
			},
		},
	}
}

// parseMoveArgs reads ACTION, ACTION6 X Y, or the JSON dict.
func parseMoveArgs(args []string) (session.Action, error) {
	switch len(args) {
	case 1:
		return client.ParseAction(args[0])
	case 3:
		if !strings.EqualFold(args[0], "ACTION6") {
			return session.Action{}, fmt.Errorf("only ACTION6 takes X Y, got %q", args)
		}
		x, errX := strconv.Atoi(args[1])
		y, errY := strconv.Atoi(args[2])
		if errX != nil || errY != nil {
			return session.Action{}, fmt.Errorf("ACTION6 %s %s: X and Y must be integers 0..63", args[1], args[2])
		}
		return client.Click(x, y)
	}
	return session.Action{}, fmt.Errorf(`want one action: ACTION1, RESET, ACTION6 X Y or '{"name":"ACTION6","x":X,"y":Y}', got %d arguments`, len(args))
}

func printState(w io.Writer, st client.State) {
	acts := make([]string, len(st.AvailableActions))
	for i, a := range st.AvailableActions {
		acts[i] = strconv.Itoa(a)
	}
	fmt.Fprintf(w, "state %s, levels completed %d/%d, step_index %d, available actions %s\n",
		st.State, st.LevelsCompleted, st.WinLevels, st.StepIndex, strings.Join(acts, " "))
}

func printResult(w io.Writer, res *client.Result) {
	r := res.Recorded
	if res.Action.Name == "RESET" {
		fmt.Fprintf(w, "RESET: new attempt level %d attempt %d\n", r.Level, r.Attempt)
	} else {
		fmt.Fprintf(w, "%s: level %d attempt %d step %d: %s\n", res.Action, r.Level, r.Attempt, r.Step, res.Status)
	}
	printState(w, res.State)
	if res.Final != "" {
		fmt.Fprintf(w, "frame: %s\n", res.Final)
	}
	for _, p := range res.Intermediates {
		fmt.Fprintf(w, "intermediate frame: %s\n", p)
	}
	if n := res.Next; n.Dir != r.Dir {
		fmt.Fprintf(w, "next: level %d attempt %d (initial frame %s/%s)\n", n.Level, n.Attempt, n.Dir, session.InitialFrameFile)
	}
	if res.FullFrame != "" {
		fmt.Fprintf(w, "initial full frame: %s\n", res.FullFrame)
	}
}

func printJSON(w io.Writer, raw json.RawMessage) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		fmt.Fprintf(w, "%s\n", raw)
		return
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}

func arcServeGamesCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve-games",
		Usage: "serve the built-in games over the ARC-AGI-3 REST API until interrupted",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8001", Usage: "listen address (port 0: any free port)"},
			&cli.Uint64Flag{Name: "seed", Usage: "level seed (0: the levels as drawn)"},
			&cli.StringFlag{Name: "api-key", Usage: "accept only this X-API-Key (default: any)"},
			&cli.IntFlag{Name: "rate-limit", Usage: "requests per minute per key before 429 (0: no limit; the real server allows 600)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv := games.NewServer(games.Config{Seed: cmd.Uint64("seed"), APIKey: cmd.String("api-key"), RateLimit: int(cmd.Int("rate-limit"))})
			ln, err := net.Listen("tcp", cmd.String("addr"))
			if err != nil {
				return cli.Exit("arc serve-games: "+err.Error(), 1)
			}
			w := cmd.Root().Writer
			fmt.Fprintf(w, "serving %d games at http://%s (seed %d)\n", len(games.All()), ln.Addr(), cmd.Uint64("seed"))
			for _, g := range games.All() {
				fmt.Fprintf(w, "%s\t%s\t%d levels\thuman baselines %v\tactions %v\n", g.ID, g.Title, g.Levels(), g.Baselines, g.Actions)
			}
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(ln) }()
			select {
			case err := <-errc:
				return cli.Exit("arc serve-games: "+err.Error(), 1)
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
			st := srv.Stats()
			fmt.Fprintf(w, "stopped after %d requests (%d RESETs, %d actions)\n", st.Requests, st.Resets, st.Actions)
			return nil
		},
	}
}

func arcPlanExecCommand() *cli.Command {
	return &cli.Command{
		Name:      "plan-exec",
		Usage:     "execute actions in the real game, predicting each with the world model first; halt at the first mismatch (artifacts in mismatch_frames/N/)",
		ArgsUsage: `ACTION… (ACTION1, or '{"name":"ACTION6","x":15,"y":47}'; RESET is refused)`,
		Flags:     append(arcFlags(), &cli.DurationFlag{Name: "lock-wait", Value: client.DefaultLockWait, Usage: "how long to wait for another client command in this workspace to finish"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return cli.Exit("arc plan-exec: give at least one action", 2)
			}
			var plan []session.Action
			for _, s := range cmd.Args().Slice() {
				a, err := client.ParseAction(s)
				if err != nil {
					return cli.Exit("arc plan-exec: "+err.Error(), 2)
				}
				plan = append(plan, a)
			}
			c, err := newClient(cmd)
			if err != nil {
				return clientExit("arc plan-exec", err)
			}
			m, err := arcModel(ctx, cmd, "arc plan-exec")
			if err != nil {
				return err
			}
			defer m.Close()
			_, err = planexec.Run(ctx, m, c, plan, planexec.Options{Out: cmd.Root().Writer})
			return clientExit("arc plan-exec", err)
		},
	}
}

func arcDemoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "start the local game server, play a game with its reference world model (planner + plan-exec), verify, print the result",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "game", Value: games.Trek.ID, Usage: "game to play: " + gameIDs()},
			&cli.Uint64Flag{Name: "seed", Usage: "level seed (0: the levels as drawn)"},
			&cli.StringFlag{Name: "workspace", Usage: "workspace to play in (must not hold a session); default: a temporary folder"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the temporary workspace"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			g := games.Lookup(cmd.String("game"))
			if g == nil {
				return cli.Exit(fmt.Sprintf("arc demo: unknown game %q; want one of %s", cmd.String("game"), gameIDs()), 2)
			}
			ws := cmd.String("workspace")
			if ws == "" {
				dir, err := os.MkdirTemp("", "evident-arc-demo-")
				if err != nil {
					return cli.Exit("arc demo: "+err.Error(), 1)
				}
				ws = dir
				if !cmd.Bool("keep") {
					defer os.RemoveAll(dir)
				}
			}
			if err := runDemo(ctx, cmd.Root().Writer, g, cmd.Uint64("seed"), ws); err != nil {
				// Failures of the verifier and the executor are already
				// reported on stdout; this is the summary.
				return cli.Exit("arc demo: "+err.Error(), 1)
			}
			return nil
		},
	}
}

func gameIDs() string {
	var ids []string
	for _, g := range games.All() {
		ids = append(ids, g.ID)
	}
	return strings.Join(ids, ", ")
}

// runDemo plays g on a local server at 127.0.0.1:0 from workspace ws: the
// reference model's planner proposes a plan from the current state, the plan
// executor plays it, level after level, until the game is won; then the
// verifier checks the model against the whole session and the scorecard is
// closed and summarised.
func runDemo(ctx context.Context, w io.Writer, g *games.Game, seed uint64, ws string) error {
	srv := games.NewServer(games.Config{Seed: seed})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(w, "local game server at %s (seed %d); workspace %s\n", url, seed, ws)

	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if err := games.WriteModel(g.ID, ws); err != nil {
		return err
	}
	c, err := client.New(client.Options{Workspace: ws})
	if err != nil {
		return err
	}
	if _, err := c.Start(ctx, url, g.ID, api.OpenScorecardRequest{Tags: []string{"evident-demo"}}); err != nil {
		return err
	}
	fmt.Fprintf(w, "started %s (%s): %d levels, human baselines %v\n", g.ID, g.Title, g.Levels(), g.Baselines)
	m, err := worldmodel.LoadStarlark(ctx, worldmodel.StarlarkOptions{Dir: ws, Print: w})
	if err != nil {
		return err
	}
	defer m.Close()
	opts := verify.Options{Workspace: ws, Out: w}
	for round := 0; round < 2*g.Levels(); round++ {
		plan, err := verify.RunPlanner(ctx, m, verify.Source{From: verify.FromCurrent}, opts)
		if err != nil {
			return err
		}
		pr, err := planexec.Run(ctx, m, c, plan, planexec.Options{Out: w})
		if err != nil {
			return err
		}
		if pr.Won {
			break
		}
		if pr.Final != session.LevelCompleted {
			return fmt.Errorf("the plan ended with %s instead of completing the level", pr.Final)
		}
	}
	if err := verify.Verify(ctx, m, opts); err != nil {
		return err
	}
	raw, err := c.Stop(ctx)
	if err != nil {
		return err
	}
	var sc games.Scorecard
	if err := json.Unmarshal(raw, &sc); err != nil || len(sc.Games) != 1 {
		return fmt.Errorf("unexpected scorecard %s", raw)
	}
	gs := sc.Games[0]
	fmt.Fprintf(w, "scorecard %s closed: %s won %d/%d levels in %d actions (RESETs included), RHAE score %.3f\n",
		sc.CardID, gs.GameID, gs.LevelsCompleted, gs.WinLevels, gs.Actions, gs.Score)
	for _, l := range gs.Levels {
		fmt.Fprintf(w, "level %d: %d actions, human baseline %d, score %.3f\n", l.Level, l.Actions, l.Baseline, l.Score)
	}
	return nil
}
