package main

// The arc subcommands that play games (spec arc.md "The real game", "Plan
// executor"):
//
//	evident arc client start GAME_ID [--workspace DIR] [--url URL] [--tag T]…
//	evident arc client move (ACTION | ACTION6 X Y | '{"name":"ACTION6","x":X,"y":Y}') [--reasoning JSON] [--force]
//	evident arc client status [--frame] [--scorecard] [--verbose]
//	evident arc client stop
//	evident arc client games [--url URL]
//	evident arc serve-games [--addr HOST:PORT] [--seed N] [--api-key K] [--rate-limit N]
//	evident arc plan-exec ACTION…  (predict, act, compare; halt at the first mismatch)
//	evident arc demo [--game ID] [--seed N] [--workspace DIR] [--keep]
//
// The API key comes from $ARC_API_KEY (never a flag, so it stays out of
// shell histories and process lists), the base URL from --url, else
// $ARC_BASE_URL, else the real server. GAME_ID may be the id without its
// "-version" suffix when that names one game (as the official tools take
// it: "ls20" for "ls20-016295f7601e").
//
// start, move and status print baseline1's per-step client summary
// (client.WriteSummary; status after "Last step information:"), read from
// the recorded session. Warnings go to stderr, one line each:
//
//	warning: no command for 11m3s: the server closes scorecard C after 15m0s without one (3m57s left)
//	  (a move or status more than 10 min after the last command)
//	warning: the server has no scorecard C to close (…): it closes a scorecard after 15m0s idle or 3 days open; …
//	  (stop answered 404: a warning, exit 0)
//	the expired game G (scorecard C): its session is kept in WS/client/session.expired-N
//	  (start in a workspace whose game expired)
//
// Exit codes, with a one-line message on stderr:
//
//	0  done
//	1  failure: the server's errors, I/O, and the refusals of baseline1
//	   v1.6's rules, in baseline1's words:
//	   "Only RESET is allowed when the game is in GAME_OVER state. Send RESET: evident arc client move RESET"
//	   "RESET is not allowed before taking any action in the current attempt. …" (move RESET --force sends it)
//	   "Current level action limit reached: N actions on level L across all attempts (limit: 1500)."
//	   also a 400 of the server saying the game is over, in any wording (with the same RESET hint)
//	2  bad arguments
//	3  exitScorecardExpired: the game's scorecard expired (more than 15 min
//	   since the last command by the state file's clock, or the server's 400
//	   "game … not found"); the message gives the idle gap. The game cannot
//	   go on: `client start GAME_ID` in the same workspace moves the old
//	   session to client/session.expired-N/ and starts anew.
//	4  exitSessionLags: the server may have played a command whose answer
//	   the session lacks (it could not be recorded, read, or never came);
//	   later commands are refused the same way, and `client start GAME_ID`
//	   moves the session aside as for 3. start and move ignore SIGINT and
//	   SIGTERM while they run (as baseline1's client.py does), so an
//	   interrupt never causes this.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/session"
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

// exitScorecardExpired is the exit status of a client command refused
// because the game's scorecard expired (client.ErrScorecardExpired).
const exitScorecardExpired = 3

// exitSessionLags is the exit status of a client command refused or failed
// because the session lags the game (client.ErrLagging).
const exitSessionLags = 4

// newClient builds the workspace's client; back-off notices and warnings
// go to stderr.
func newClient(cmd *cli.Command) (*client.Client, error) {
	return client.New(client.Options{
		Workspace: cmd.String("workspace"),
		LockWait:  cmd.Duration("lock-wait"),
		API:       client.APIOptions{Key: os.Getenv(client.EnvAPIKey), Log: cmd.Root().ErrWriter},
		Warn:      cmd.Root().ErrWriter,
	})
}

// clientExit maps a client error to exit status 1 with a hint where one
// helps.
func clientExit(name string, err error) error {
	if err == nil {
		return nil
	}
	if e := scriptClientExit(err); e != nil {
		return e
	}
	msg := name + ": " + err.Error()
	sep := "; "
	if strings.HasSuffix(msg, ".") {
		sep = " "
	}
	switch {
	case errors.Is(err, client.ErrScorecardExpired):
		return cli.Exit(msg+sep+"start a new game here with: evident arc client start GAME_ID (this session is then moved to "+client.ExpiredSessionPrefix+"N/)", exitScorecardExpired)
	case errors.Is(err, client.ErrLagging):
		return cli.Exit(msg+sep+"start a new game here with: evident arc client start GAME_ID (this session is then moved to "+client.ExpiredSessionPrefix+"N/)", exitSessionLags)
	case errors.Is(err, client.ErrGameOver):
		msg += sep + "Send RESET: evident arc client move RESET"
	case errors.Is(err, client.ErrResetBeforeAction):
		msg += sep + "On the official server it would reset the whole game to level 1; add --force to send it anyway."
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
					defer seeThrough()()
					c, err := newClient(cmd)
					if err != nil {
						return clientExit("arc client start", err)
					}
					res, err := c.Start(ctx, cmd.String("url"), cmd.Args().First(),
						api.OpenScorecardRequest{Tags: cmd.StringSlice("tag"), SourceURL: cmd.String("source-url")})
					if err != nil {
						return clientExit("arc client start", err)
					}
					if err := client.WriteSummary(cmd.Root().Writer, res); err != nil {
						return clientExit("arc client start", err)
					}
					return nil
				},
			},
			{
				Name:      "move",
				Usage:     "send one command (RESET or ACTION1..7) and record the response",
				ArgsUsage: `ACTION | ACTION6 X Y | '{"name":"ACTION6","x":X,"y":Y}'`,
				Flags: append(clientFlags(), &cli.StringFlag{Name: "reasoning", Usage: "JSON value sent as the action's reasoning"},
					&cli.BoolFlag{Name: "force", Usage: "send a RESET before the attempt's first action (it resets the whole game to level 1)"}),
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
					defer seeThrough()()
					c, err := newClient(cmd)
					if err != nil {
						return clientExit("arc client move", err)
					}
					res, err := c.MoveWith(ctx, a, client.MoveOptions{Reasoning: reasoning, Force: cmd.Bool("force")})
					if err != nil {
						return clientExit("arc client move", err)
					}
					if err := client.WriteSummary(cmd.Root().Writer, res); err != nil {
						return clientExit("arc client move", err)
					}
					return nil
				},
			},
			{
				Name:  "status",
				Usage: "show the game's state and the current attempt (sends nothing unless --scorecard)",
				Flags: append(clientFlags(),
					&cli.BoolFlag{Name: "frame", Usage: "also print the latest frame"},
					&cli.BoolFlag{Name: "verbose", Usage: "also print the game, server, scorecard and guid"},
					&cli.BoolFlag{Name: "scorecard", Usage: "also fetch and print the scorecard"}),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					c, err := newClient(cmd)
					if err != nil {
						return clientExit("arc client status", err)
					}
					last, err := c.LastStep()
					if err != nil {
						return clientExit("arc client status", err)
					}
					w := cmd.Root().Writer
					fmt.Fprintln(w, client.StatusHeader)
					if err := client.WriteSummary(w, last); err != nil {
						return clientExit("arc client status", err)
					}
					if warn := client.IdleWarning(&last.State, c.Now()); warn != "" {
						fmt.Fprintln(cmd.Root().ErrWriter, warn)
					}
					if st := last.State; (st.Lagging || st.Expired) && st.Ended != "" {
						fmt.Fprintln(cmd.Root().ErrWriter, "warning: the game in this workspace has ended, further moves are refused: "+st.Ended)
					}
					if cmd.Bool("verbose") {
						st := last.State
						fmt.Fprintf(w, "game %s at %s (scorecard %s, guid %s)\n", st.GameID, st.BaseURL, st.CardID, st.GUID)
						if st.Stopped {
							fmt.Fprintln(w, "stopped: the scorecard is closed")
						}
					}
					if cmd.Bool("frame") {
						s, err := c.Status()
						if err != nil {
							return clientExit("arc client status", err)
						}
						if s.Frame != "" {
							b, err := os.ReadFile(s.Frame)
							if err != nil {
								return clientExit("arc client status", err)
							}
							fmt.Fprintf(w, "frame: %s\n", s.Frame)
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
					if sc != nil {
						printJSON(cmd.Root().Writer, sc)
					}
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

func printJSON(w io.Writer, raw json.RawMessage) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		fmt.Fprintf(w, "%s\n", raw)
		return
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}

// seeThrough ignores SIGINT and SIGTERM until the returned function runs,
// as baseline1's client.py does: a command the server may already have
// played is always recorded, so an interrupt cannot leave the session
// behind the game. The command is short (one request, bounded by the
// client's HTTP timeout).
func seeThrough() (restore func()) {
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	return func() { signal.Reset(os.Interrupt, syscall.SIGTERM) }
}
