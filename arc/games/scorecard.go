package games

import (
	"time"

	"evident/arc/api"
	"evident/arc/score"
)

// card is one open scorecard.
type card struct {
	id           string
	req          api.OpenScorecardRequest
	tags         []string
	opened, last time.Time
	games        map[string]*score.Card
	order        []string
}

// game returns the card's runs of g, creating the record.
func (c *card) game(g *Game) *score.Card {
	sc := c.games[g.ID]
	if sc == nil {
		sc = &score.Card{GameID: g.ID}
		c.games[g.ID] = sc
		c.order = append(c.order, g.ID)
	}
	return sc
}

// scorecard is c as the official EnvironmentScorecard (arc_agi
// scorecard.py from_scorecard), scored by package score.
func (s *Server) scorecard(c *card) api.EnvironmentScorecard {
	out := api.EnvironmentScorecard{SourceURL: c.req.SourceURL, Tags: c.tags, Opaque: c.req.Opaque, CardID: c.id,
		Environments: []api.EnvironmentScoreList{}}
	var envs []score.EnvironmentScore
	var tags score.Tags
	for _, id := range c.order {
		g := s.games[id]
		e, ok := score.Environment(*c.games[id], g.Baselines)
		if !ok {
			continue
		}
		tags.Add(g.Tags, e, g.Baselines)
		envs = append(envs, e)
		out.Environments = append(out.Environments, EnvironmentList(e))
		if e.Completed {
			out.TotalEnvironmentsCompleted++
		}
		out.TotalLevelsCompleted += e.LevelsCompleted
		out.TotalLevels += e.LevelCount
		out.TotalActions += e.Actions
	}
	out.TotalEnvironments = len(envs)
	out.Score = score.Mean(envs)
	out.TagsScores = []api.EnvironmentScore{}
	for _, t := range tags.Scores() {
		n, k := t.NumberOfLevels, t.NumberOfEnvironments
		out.TagsScores = append(out.TagsScores, api.EnvironmentScore{ID: t.ID, Score: t.Score, LevelsCompleted: t.LevelsCompleted,
			Actions: t.Actions, NumberOfLevels: &n, NumberOfEnvironments: &k})
	}
	return out
}

// EnvironmentList converts a scored environment to its wire form, the
// official EnvironmentScoreList (one element of environments[]), runs in
// order. `evident arc score --json` prints the same form.
func EnvironmentList(e score.EnvironmentScore) api.EnvironmentScoreList {
	out := api.EnvironmentScoreList{ID: e.ID, Runs: []api.EnvironmentScore{}, Score: e.Score, Actions: e.Actions,
		LevelsCompleted: e.LevelsCompleted, Completed: e.Completed, LevelCount: e.LevelCount, Resets: e.Resets}
	for _, r := range e.Runs {
		resets, completed := r.Resets, r.Completed
		w := api.EnvironmentScore{GUID: r.GUID, Score: r.Score, LevelsCompleted: r.LevelsCompleted, Actions: r.Actions,
			Resets: &resets, State: r.State, Completed: &completed, LevelScores: r.LevelScores, LevelActions: r.LevelActions,
			LevelBaselineActions: r.LevelBaselineActions, Message: r.Message}
		if r.Message != "" {
			// The toolkit names the game on runs it could not score.
			w.ID = e.ID
		}
		out.Runs = append(out.Runs, w)
	}
	return out
}

// legacyCards is c's games as the older agents' cards; only is "" for all,
// else the one game (none when it was not played).
func (s *Server) legacyCards(c *card, only string) map[string]api.Card {
	out := map[string]api.Card{}
	for _, id := range c.order {
		if only != "" && id != only {
			continue
		}
		sc := c.games[id]
		lc := api.Card{GameID: id, TotalPlays: len(sc.Runs), GUIDs: []string{}, Scores: []int{}, LevelsCompleted: []int{},
			States: []string{}, Actions: []int{}, ActionsByLevel: [][][2]int{}, Resets: []int{}}
		for _, r := range sc.Runs {
			lc.GUIDs = append(lc.GUIDs, r.GUID)
			lc.Scores = append(lc.Scores, r.LevelsCompleted)
			lc.LevelsCompleted = append(lc.LevelsCompleted, r.LevelsCompleted)
			lc.States = append(lc.States, r.State)
			lc.Actions = append(lc.Actions, r.Actions)
			marks := [][2]int{}
			for _, m := range r.Marks {
				marks = append(marks, [2]int{m.LevelsCompleted, m.Actions})
			}
			lc.ActionsByLevel = append(lc.ActionsByLevel, marks)
			lc.Resets = append(lc.Resets, r.Resets)
			lc.TotalActions += r.Actions
		}
		out[id] = lc
	}
	return out
}

// legacy is c as the older agents' scorecard for game (arc_agi
// scorecard.py get_json_for, plus their "score").
func (s *Server) legacy(c *card, game string) api.LegacyScorecard {
	out := api.LegacyScorecard{CardID: c.id, Cards: s.legacyCards(c, game)}
	for _, lc := range s.legacyCards(c, "") {
		if lc.TotalPlays > 0 {
			out.Played++
		}
		if contains(lc.States, score.StateWin) {
			out.Won++
		}
		out.TotalActions += lc.TotalActions
		most := 0
		for _, n := range lc.LevelsCompleted {
			most = max(most, n)
		}
		out.LevelsCompleted += most
	}
	out.Score = out.LevelsCompleted
	return out
}
