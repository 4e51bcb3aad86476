package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"evident/arc/games"
	"evident/arc/score"
	"evident/arc/session"
	"evident/internal/file"
)

// Result is one agent run's numbers (issue 11 item 4): RHAE of the game and
// per level, computed by evident/arc/score from the recorded session exactly
// as the official scorecard computes it, and the run's counts from the
// transcript.
type Result struct {
	// Dir is the run's workspace; Game its game id.
	Dir, Game string
	// Score is the game's RHAE (0–100, the best run's); Levels and
	// LevelsCompleted the game's level count and the best count reached.
	Score           float64
	Levels          int
	LevelsCompleted int
	// LevelScores, LevelActions and LevelBaselines are the best run's per
	// level (level 1 first).
	LevelScores    []float64
	LevelActions   []int
	LevelBaselines []int
	// Actions and Resets are the scorecard's (every run summed; a level
	// RESET is an action and a reset).
	Actions, Resets int
	// StepsSolved are the actions of the completed levels of the best run;
	// StepsUnsolved those of the level it was on when the run ended (0 when
	// won).
	StepsSolved, StepsUnsolved int
	// Turns, ControllerResets, Refusals count transcript entries; Seconds
	// is from its first entry to its last; Stop is the last stop reason.
	Turns, ControllerResets, Refusals int
	Seconds                           float64
	Stop                              string
	// Message is the scorer's note (no baselines known for the game).
	Message string
}

// ResultsFile is where Run writes the result, inside the workspace.
const ResultsFile = "agent/result.json"

// ReadResult computes the Result of the workspace dir: the session under
// dir/client/session, the game id of dir/client/client_state.json,
// baselines of the built-in game of that id (baselines may override; a game
// without known baselines scores 0 with Message set, as the toolkit does),
// and dir/agent/transcript.jsonl when present. Errors name the file.
func ReadResult(dir string, baselines []int) (Result, error) {
	r := Result{Dir: dir}
	b, err := file.ReadCapped(filepath.Join(dir, "client", "client_state.json"), 16<<20)
	if err != nil {
		return r, fmt.Errorf("results: %w", err)
	}
	var st struct {
		GameID string `json:"game_id"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return r, fmt.Errorf("results: %s: %w", filepath.Join(dir, "client", "client_state.json"), err)
	}
	r.Game = st.GameID
	if baselines == nil {
		if g := games.Lookup(r.Game); g != nil {
			baselines = g.Baselines
		}
	}
	s, err := session.Read(filepath.Join(dir, session.Dir))
	if err != nil {
		return r, fmt.Errorf("results: %w", err)
	}
	ups, err := score.SessionUpdates(s)
	if err != nil {
		return r, fmt.Errorf("results %s: %w", dir, err)
	}
	e, ok := score.Environment(score.Replay(r.Game, ups), baselines)
	if ok {
		best := e.Runs[0]
		for _, x := range e.Runs[1:] {
			if x.Score > best.Score {
				best = x
			}
		}
		r.Score, r.LevelsCompleted, r.Actions, r.Resets = e.Score, e.LevelsCompleted, e.Actions, e.Resets
		r.LevelScores, r.LevelActions, r.LevelBaselines, r.Message = best.LevelScores, best.LevelActions, best.LevelBaselineActions, best.Message
		for i, a := range best.LevelActions {
			if i < best.LevelsCompleted {
				r.StepsSolved += a
			} else if i == best.LevelsCompleted && !best.Completed {
				r.StepsUnsolved += a
			}
		}
	}
	r.Levels = len(baselines)
	if r.Levels == 0 && len(s.Levels) > 0 {
		for _, l := range s.Levels {
			for _, a := range l.Attempts {
				r.Levels = max(r.Levels, a.InitialMetadata.WinLevels)
			}
		}
	}
	es, err := ReadTranscript(filepath.Join(dir, TranscriptPath))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, fmt.Errorf("results: %w", err)
	}
	for _, x := range es {
		switch x.Kind {
		case KindTurn:
			r.Turns++
		case KindReset:
			r.ControllerResets++
		case KindRefusal:
			r.Refusals++
		case KindStop:
			r.Stop = x.Reason
		}
	}
	if len(es) > 1 {
		r.Seconds = es[len(es)-1].Time.Sub(es[0].Time).Seconds()
	}
	return r, nil
}

// formatScore writes a score with two decimals (baseline1
// print_results_md.py format_score).
func formatScore(x float64) string { return fmt.Sprintf("%.2f", x) }

// WriteResultsTable writes the results of runs as baseline1's results table
// (papers/paper02/agents/analysis_scripts/print_results_md.py): "# Results",
// a Markdown table with Game, Run (only when a game has several runs),
// Levels solved (n/N), Score, Steps on Solved, Steps on Unsolved ("-" when
// every level is solved), then evident's columns Level scores, Resets,
// Agent turns, Time and Stop; then "fully solved games: k/n" and "mean
// per-game RHAE: x" (each game's runs averaged, then the games).
func WriteResultsTable(w io.Writer, runs []Result) error {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Game < runs[j].Game })
	count := map[string]int{}
	for _, r := range runs {
		count[r.Game]++
	}
	several := false
	for _, n := range count {
		several = several || n > 1
	}
	var sb strings.Builder
	sb.WriteString("# Results\n\n")
	if several {
		sb.WriteString("| Game | Run | Levels solved | Score | Steps on Solved | Steps on Unsolved | Level scores | Resets | Agent turns | Time | Stop |\n")
		sb.WriteString("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|\n")
	} else {
		sb.WriteString("| Game | Levels solved | Score | Steps on Solved | Steps on Unsolved | Level scores | Resets | Agent turns | Time | Stop |\n")
		sb.WriteString("|---|---:|---:|---:|---:|---|---:|---:|---:|---|\n")
	}
	for _, r := range runs {
		unsolved := "-"
		if r.LevelsCompleted < r.Levels || r.Levels == 0 {
			unsolved = fmt.Sprint(r.StepsUnsolved)
		}
		var ls []string
		for i, s := range r.LevelScores {
			ls = append(ls, fmt.Sprintf("%d: %s", i+1, formatScore(s)))
		}
		cells := []string{r.Game}
		if several {
			cells = append(cells, r.Dir)
		}
		cells = append(cells, fmt.Sprintf("%d/%d", r.LevelsCompleted, r.Levels), formatScore(r.Score), fmt.Sprint(r.StepsSolved), unsolved,
			strings.Join(ls, ", "), fmt.Sprint(r.Resets), fmt.Sprint(r.Turns), fmt.Sprintf("%.0fs", r.Seconds), strings.ReplaceAll(r.Stop, "|", "/"))
		sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	byGame := map[string][]Result{}
	var order []string
	for _, r := range runs {
		if _, ok := byGame[r.Game]; !ok {
			order = append(order, r.Game)
		}
		byGame[r.Game] = append(byGame[r.Game], r)
	}
	solved, mean := 0, 0.0
	for _, g := range order {
		all, sum := true, 0.0
		for _, r := range byGame[g] {
			all = all && r.Levels > 0 && r.LevelsCompleted == r.Levels
			sum += r.Score
		}
		if all {
			solved++
		}
		mean += sum / float64(len(byGame[g]))
	}
	if len(order) > 0 {
		mean /= float64(len(order))
	}
	fmt.Fprintf(&sb, "\nfully solved games: %d/%d\nmean per-game RHAE: %s\n", solved, len(order), formatScore(mean))
	_, err := io.WriteString(w, sb.String())
	return err
}
