package main

// The arc subcommands around the local game server: serve-games and demo.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
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
		// The demo plays as the agent: its reconstruction of the level's
		// full map is the local server's (the client never writes it).
		if _, err := c.WriteFullFrame(ctx); err != nil {
			return err
		}
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
	var sc api.ClosedScorecard
	if err := json.Unmarshal(raw, &sc); err != nil || len(sc.Environments) != 1 || len(sc.Environments[0].Runs) == 0 {
		return fmt.Errorf("unexpected scorecard %s", raw)
	}
	env := sc.Environments[0]
	best := env.Runs[0]
	for _, r := range env.Runs[1:] {
		if r.Score > best.Score {
			best = r
		}
	}
	// The official scorecard's numbers (arc/score): a full-game RESET
	// starts a run and is no action; a level RESET is one.
	fmt.Fprintf(w, "scorecard %s closed: %s won %d/%d levels in %d actions over %d run(s), RHAE score %.2f/100\n",
		sc.CardID, env.ID, env.LevelsCompleted, env.LevelCount, env.Actions, len(env.Runs), env.Score)
	for i, ls := range best.LevelScores {
		a, b := 0, 0
		if i < len(best.LevelActions) {
			a = best.LevelActions[i]
		}
		if i < len(best.LevelBaselineActions) {
			b = best.LevelBaselineActions[i]
		}
		fmt.Fprintf(w, "level %d: %d actions, human baseline %d, score %.2f\n", i+1, a, b, ls)
	}
	return nil
}
