package main

// evident arc score SESSION_DIR [--baseline FILE] [--game ID] [--json]:
// RHAE of a recorded session, computed as the official scorecard computes
// it (package evident/arc/score).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/score"
	"evident/arc/session"
	"evident/internal/file"
)

// maxBaselineFile and maxStateFile cap what arc score reads from users.
const (
	maxBaselineFile = 1 << 20
	maxStateFile    = 4 << 20
)

func arcScoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "score",
		Usage:     "score a recorded session (RHAE, 0-100) exactly as the official scorecard scores the same play",
		ArgsUsage: "SESSION_DIR (a client/session folder, or a workspace holding one)",
		Description: "Each full-game RESET starts a new run (not an action); a level RESET is one action and one reset; level l scores\n" +
			"min((baseline_l/actions_l)^2*100, 115) when completed; a run scores sum(l*s_l)/sum(l) capped at 100*sum(l scored)/sum(l);\n" +
			"the game scores its best run. The game id comes from --game or the workspace's client/client_state.json; the\n" +
			"baselines from --baseline FILE (a JSON list [18, 52, 44], or an object with baseline_actions such as the local\n" +
			"server's GET /api/games/{id} answer or a toolkit metadata.json), else from the built-in game of that id.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "baseline", Usage: "per-level human baseline action counts, level 1 first (JSON list or EnvironmentInfo object)"},
			&cli.StringFlag{Name: "game", Usage: "game id (default: the workspace's client state file)"},
			&cli.BoolFlag{Name: "json", Usage: "print the official EnvironmentScoreList (one entry of a scorecard's environments) as JSON"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return cli.Exit("arc score: want one SESSION_DIR argument", 2)
			}
			e, err := arcScore(cmd.Args().First(), cmd.String("game"), cmd.String("baseline"))
			if err != nil {
				return cli.Exit("arc score: "+err.Error(), 1)
			}
			w := cmd.Root().Writer
			if cmd.Bool("json") {
				b, _ := json.MarshalIndent(games.EnvironmentList(e), "", "  ")
				fmt.Fprintf(w, "%s\n", b)
				return nil
			}
			printScore(w, e)
			return nil
		},
	}
}

// sessionDirs resolves SESSION_DIR to the session folder and the client
// state file next to it.
func sessionDirs(dir string) (sessionDir, stateFile string) {
	if st, err := os.Stat(filepath.Join(dir, session.Dir)); err == nil && st.IsDir() {
		return filepath.Join(dir, session.Dir), filepath.Join(dir, client.StateFile)
	}
	return dir, filepath.Join(filepath.Dir(dir), filepath.Base(client.StateFile))
}

// arcScore scores the session at dir. gameID and baselineFile may be "".
func arcScore(dir, gameID, baselineFile string) (score.EnvironmentScore, error) {
	sdir, stateFile := sessionDirs(dir)
	if gameID == "" {
		b, err := file.ReadCapped(stateFile, maxStateFile)
		switch {
		case err == nil:
			var st struct {
				GameID string `json:"game_id"`
			}
			if err := json.Unmarshal(b, &st); err != nil {
				return score.EnvironmentScore{}, fmt.Errorf("%s: %v", stateFile, err)
			}
			gameID = st.GameID
		case !errors.Is(err, os.ErrNotExist):
			return score.EnvironmentScore{}, err
		}
	}
	var baselines []int
	if baselineFile != "" {
		b, err := file.ReadCapped(baselineFile, maxBaselineFile)
		if err != nil {
			return score.EnvironmentScore{}, err
		}
		if baselines, err = score.ParseBaselines(b); err != nil {
			return score.EnvironmentScore{}, fmt.Errorf("%s: %v", baselineFile, err)
		}
	} else {
		g := games.Lookup(gameID)
		switch {
		case gameID == "":
			return score.EnvironmentScore{}, fmt.Errorf("no game id (no %s): give --game ID or --baseline FILE", stateFile)
		case g == nil:
			return score.EnvironmentScore{}, fmt.Errorf("game %s is not a built-in game, so its baselines are unknown: give --baseline FILE", gameID)
		}
		baselines = g.Baselines
	}
	s, err := session.Read(sdir)
	if err != nil {
		return score.EnvironmentScore{}, err
	}
	updates, err := score.SessionUpdates(s)
	if err != nil {
		return score.EnvironmentScore{}, err
	}
	if gameID == "" {
		gameID = "unknown"
	}
	e, _ := score.Environment(score.Replay(gameID, updates), baselines)
	return e, nil
}

// printScore writes e for people: the game, then each run and its levels.
func printScore(w io.Writer, e score.EnvironmentScore) {
	fmt.Fprintf(w, "%s: score %.2f (best of %d runs), %d levels completed, %d actions, %d resets\n",
		e.ID, e.Score, len(e.Runs), e.LevelsCompleted, e.Actions, e.Resets)
	for i, r := range e.Runs {
		fmt.Fprintf(w, "run %d: score %.2f, %d levels completed, %d actions, %d resets, state %s\n",
			i+1, r.Score, r.LevelsCompleted, r.Actions, r.Resets, r.State)
		if r.Message != "" {
			fmt.Fprintf(w, "  %s\n", r.Message)
		}
		for l, s := range r.LevelScores {
			fmt.Fprintf(w, "  level %d: %d actions, baseline %d, score %.2f\n", l+1, r.LevelActions[l], r.LevelBaselineActions[l], s)
		}
	}
}
