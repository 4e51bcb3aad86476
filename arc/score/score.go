package score

import "math"

// LevelCap is the most one level can score (scorecard.py add_level: "Cap at
// 115"); 100 is the human baseline.
const LevelCap = 115.0

// Run states recorded by the scorecard (scorecard.py update_scorecard; the
// API's GameState names).
const (
	StateNotFinished = "NOT_FINISHED"
	StateWin         = "WIN"
	StateGameOver    = "GAME_OVER"
)

// Messages of a run that could not be scored against baselines
// (scorecard.py _calculate_score).
const (
	MessageNoBaselines  = "Human baseline actions are not available for this environment"
	MessageSizeMismatch = "Human baseline actions size mismatch"
)

// Level is the score of one level, 0..LevelCap: min((baseline/actions)² ·
// 100, 115) when the level was completed in actions > 0 actions, else 0
// (scorecard.py EnvironmentScoreCalculator.add_level; the operations in the
// same order, so the float64 results are the toolkit's).
func Level(baseline, actions int, completed bool) float64 {
	if !completed || actions <= 0 {
		return 0
	}
	r := float64(baseline) / float64(actions)
	return math.Min(r*r*100, LevelCap)
}

// Calculator accumulates levels and scores them as the toolkit's
// EnvironmentScoreCalculator does: one per run, and one per tag across the
// environments carrying it. The zero value is ready to use.
type Calculator struct {
	// LevelIndices are the 1-based level numbers, the weights of the score.
	LevelIndices []int
	// LevelScores, LevelActions and LevelBaselineActions are per added
	// level, in order.
	LevelScores                        []float64
	LevelActions, LevelBaselineActions []int
	// LevelsCompleted counts the completed levels added; Actions sums every
	// level's actions.
	LevelsCompleted, Actions int

	environments map[string]bool
}

// AddLevel adds level index (1-based weight) with its actions and baseline;
// gameID, when not "", is counted towards Environments (add_level).
func (c *Calculator) AddLevel(index int, completed bool, actions, baseline int, gameID string) {
	c.Actions += actions
	if gameID != "" {
		if c.environments == nil {
			c.environments = map[string]bool{}
		}
		c.environments[gameID] = true
	}
	if completed {
		c.LevelsCompleted++
	}
	c.LevelIndices = append(c.LevelIndices, index)
	c.LevelScores = append(c.LevelScores, Level(baseline, actions, completed))
	c.LevelActions = append(c.LevelActions, actions)
	c.LevelBaselineActions = append(c.LevelBaselineActions, baseline)
}

// Score is the weighted mean Σ i·s_i / Σ i of the added levels, capped at
// 100 · Σ_{s_i > 0} i / Σ i; 0 with no level (to_score).
func (c *Calculator) Score() float64 {
	if len(c.LevelScores) == 0 {
		return 0
	}
	var total float64
	var weights, scored int
	for i, s := range c.LevelScores {
		w := c.LevelIndices[i]
		total += s * float64(w)
		weights += w
		if s > 0 {
			scored += w
		}
	}
	if weights == 0 {
		return 0
	}
	return math.Min(total/float64(weights), float64(scored)/float64(weights)*100)
}

// Environments is the number of distinct game ids added.
func (c *Calculator) Environments() int { return len(c.environments) }

// Mark is one change of levels_completed within a run: the new value and the
// run's action count at that response (scorecard.py Card.actions_by_level).
type Mark struct {
	LevelsCompleted, Actions int
}

// Run is one play of a game on a scorecard, from a full-game RESET to the
// next (scorecard.py Card, one index of its lists).
type Run struct {
	GUID string
	// LevelsCompleted is the last levels_completed seen.
	LevelsCompleted int
	// State is StateNotFinished, StateWin or StateGameOver.
	State string
	// Actions counts ACTION1..7 and level RESETs; Resets the level RESETs.
	Actions, Resets int
	// Marks are the changes of levels_completed, in order.
	Marks []Mark
}

// Update is what the scorecard reads from one command's response.
type Update struct {
	GUID string
	// Action is the API's GameAction number: 0 RESET, n ACTIONn.
	Action int
	// FullReset is the response's full_reset: the RESET restarted the game.
	FullReset bool
	// State and LevelsCompleted are the response's.
	State           string
	LevelsCompleted int
}

// Card is every run of one game on one scorecard.
type Card struct {
	GameID string
	Runs   []Run
}

// Update applies one response (scorecard.py Scorecard.update_scorecard):
// a full RESET opens a new run, a level RESET is an action and a reset, an
// action is an action; GAME_OVER and WIN set the state; a change of
// levels_completed adds a mark.
func (c *Card) Update(u Update) {
	if u.Action == 0 && u.FullReset {
		c.Runs = append(c.Runs, Run{GUID: u.GUID, State: StateNotFinished})
	}
	r := c.run(u.GUID)
	if r == nil {
		return
	}
	switch {
	case u.Action == 0 && !u.FullReset:
		r.Resets++
		r.Actions++
	case u.Action >= 1 && u.Action <= 7:
		r.Actions++
	}
	if u.State == StateGameOver || u.State == StateWin {
		r.State = u.State
	}
	if u.LevelsCompleted != r.LevelsCompleted {
		r.Marks = append(r.Marks, Mark{LevelsCompleted: u.LevelsCompleted, Actions: r.Actions})
	}
	r.LevelsCompleted = u.LevelsCompleted
}

// run is the latest run of guid, else the latest run (Card.index_of_guid);
// nil before the first run.
func (c *Card) run(guid string) *Run {
	for i := len(c.Runs) - 1; i >= 0; i-- {
		if c.Runs[i].GUID == guid {
			return &c.Runs[i]
		}
	}
	if len(c.Runs) == 0 {
		return nil
	}
	return &c.Runs[len(c.Runs)-1]
}

// Best is the index of the first run with the most levels completed, -1
// without runs (from_scorecard best_idx).
func (c *Card) Best() int {
	best, most := -1, -1
	for i, r := range c.Runs {
		if r.LevelsCompleted > most {
			best, most = i, r.LevelsCompleted
		}
	}
	return best
}

// RunScore is the score of one run: the official EnvironmentScore of a run.
type RunScore struct {
	GUID                 string
	Score                float64
	LevelsCompleted      int
	Actions, Resets      int
	State                string
	Completed            bool
	LevelScores          []float64
	LevelActions         []int
	LevelBaselineActions []int
	Message              string

	levelDone     []bool
	baselinesUsed bool
}

// levels splits a run's actions over the game's levels (_calculate_score):
// level i (0-based) with a mark is completed with the actions since the
// previous mark; the first level without a mark gets the rest, later ones 0.
func levels(r Run, n int) (done []bool, actions []int) {
	prev := 0
	for i := 0; i < n; i++ {
		if i < len(r.Marks) {
			done = append(done, true)
			actions = append(actions, r.Marks[i].Actions-prev)
			prev = r.Marks[i].Actions
		} else {
			done = append(done, false)
			actions = append(actions, r.Actions-prev)
			prev = r.Actions
		}
	}
	return done, actions
}

// ScoreRun scores r against the game's per-level human baselines
// (baselines[l-1] for level l). Without baselines, or with fewer baselines
// than marks, the score is 0 and Message says why; the levels are then the
// raw ones (_raw_scores_from_card): one per mark plus, unless the run is
// won, the actions after the last mark, with baseline -1.
func ScoreRun(r Run, baselines []int) RunScore {
	out := RunScore{GUID: r.GUID, LevelsCompleted: r.LevelsCompleted, Actions: r.Actions, Resets: r.Resets,
		State: r.State, Completed: r.State == StateWin}
	if len(baselines) == 0 || len(baselines) < len(r.Marks) {
		out.Message = MessageNoBaselines
		if len(baselines) > 0 {
			out.Message = MessageSizeMismatch
		}
		prev := 0
		for _, m := range r.Marks {
			out.LevelActions = append(out.LevelActions, m.Actions-prev)
			out.LevelScores = append(out.LevelScores, 0)
			out.LevelBaselineActions = append(out.LevelBaselineActions, -1)
			prev = m.Actions
		}
		if r.State != StateWin {
			out.LevelActions = append(out.LevelActions, r.Actions-prev)
			out.LevelScores = append(out.LevelScores, 0)
			out.LevelBaselineActions = append(out.LevelBaselineActions, -1)
		}
		return out
	}
	var c Calculator
	done, actions := levels(r, len(baselines))
	for i, b := range baselines {
		c.AddLevel(i+1, done[i], actions[i], b, "")
	}
	out.Score = c.Score()
	// The calculator's counts, as to_score reports them.
	out.LevelsCompleted, out.Actions = c.LevelsCompleted, c.Actions
	out.LevelScores, out.LevelActions, out.LevelBaselineActions = c.LevelScores, c.LevelActions, c.LevelBaselineActions
	out.levelDone, out.baselinesUsed = done, true
	return out
}

// EnvironmentScore is one game on a scorecard: the official
// EnvironmentScoreList.
type EnvironmentScore struct {
	ID   string
	Runs []RunScore
	// Score is the best run's; LevelsCompleted the most of any run;
	// Actions and Resets sum the runs; Completed is true when a run was
	// won; LevelCount is the most levels of any run's LevelScores.
	Score           float64
	Actions, Resets int
	LevelsCompleted int
	Completed       bool
	LevelCount      int
	// Best is the index of the run whose levels count for tags (Card.Best).
	Best int
}

// Environment scores every run of c; ok is false when c has no run (the
// toolkit leaves such a card out).
func Environment(c Card, baselines []int) (e EnvironmentScore, ok bool) {
	e = EnvironmentScore{ID: c.GameID, Best: c.Best()}
	if e.Best < 0 {
		return e, false
	}
	for i, r := range c.Runs {
		rs := ScoreRun(r, baselines)
		e.Runs = append(e.Runs, rs)
		if i == 0 || rs.Score > e.Score {
			e.Score = rs.Score
		}
		e.Actions += rs.Actions
		e.Resets += rs.Resets
		e.LevelsCompleted = max(e.LevelsCompleted, rs.LevelsCompleted)
		e.Completed = e.Completed || rs.Completed
		e.LevelCount = max(e.LevelCount, len(rs.LevelScores))
	}
	return e, true
}

// Mean is the scorecard's score: the mean of the environments' scores, 0
// without any (from_scorecard avg_score).
func Mean(envs []EnvironmentScore) float64 {
	if len(envs) == 0 {
		return 0
	}
	var sum float64
	for _, e := range envs {
		sum += e.Score
	}
	return sum / float64(len(envs))
}

// TagScore is one entry of the scorecard's tags_scores.
type TagScore struct {
	ID                                   string
	Score                                float64
	LevelsCompleted, Actions             int
	NumberOfLevels, NumberOfEnvironments int
}

// Tags accumulates tags_scores over a scorecard's environments. The zero
// value is ready to use.
type Tags struct {
	order []string
	calc  map[string]*Calculator
}

// Add adds the levels of e's best run, scored against baselines, to each of
// tags (the environment's EnvironmentInfo tags). Runs scored without
// baselines add nothing, as in the toolkit.
func (t *Tags) Add(tags []string, e EnvironmentScore, baselines []int) {
	if e.Best < 0 || e.Best >= len(e.Runs) || !e.Runs[e.Best].baselinesUsed {
		return
	}
	r := e.Runs[e.Best]
	for i, b := range baselines {
		for _, tag := range tags {
			if t.calc == nil {
				t.calc = map[string]*Calculator{}
			}
			c := t.calc[tag]
			if c == nil {
				c = &Calculator{}
				t.calc[tag] = c
				t.order = append(t.order, tag)
			}
			c.AddLevel(i+1, r.levelDone[i], r.LevelActions[i], b, e.ID)
		}
	}
}

// Scores returns one TagScore per tag, in the order tags were first added.
func (t *Tags) Scores() []TagScore {
	out := []TagScore{}
	for _, tag := range t.order {
		c := t.calc[tag]
		out = append(out, TagScore{ID: tag, Score: c.Score(), LevelsCompleted: c.LevelsCompleted, Actions: c.Actions,
			NumberOfLevels: len(c.LevelScores), NumberOfEnvironments: c.Environments()})
	}
	return out
}
