package api

import "encoding/json"

// Paths of the official API besides those in api.go (arcprize/ARC-AGI
// arc_agi/server.py create_app; spec arc.md "Compatibility facts").
const (
	// PathHealthcheck answers 200 with the text "okay" (text/plain).
	PathHealthcheck = "/api/healthcheck"
	// PathAnonKey answers AnonKeyResponse; the toolkit asks for it when it
	// has no ARC_API_KEY (arc_agi base.py _get_anonymous_api_key).
	PathAnonKey = "/api/games/anonkey"
)

// CodeServerError is the official error code of an unknown game_id, guid or
// card_id (arc_agi api.py: "game {game_id} not found", "card_id `{id}` not
// found"); the other official codes are CodeValidation and the two below.
const (
	CodeServerError      = "SERVER_ERROR"
	CodeGameNotAvailable = "GAME_NOT_AVAILABLE_ERROR"
	CodeGameNotStarted   = "GAME_NOT_STARTED_ERROR"
)

// AnonKeyResponse is the answer of GET PathAnonKey.
type AnonKeyResponse struct {
	APIKey string `json:"api_key"`
}

// EnvironmentInfo is one game as GET PathGames lists it and GET
// PathGames+"/"+{game_id} answers it (arc_agi models.py EnvironmentInfo;
// every field but GameID is optional). BaselineActions[l-1] is level l's
// human baseline action count.
type EnvironmentInfo struct {
	GameID          string   `json:"game_id"`
	Title           string   `json:"title,omitempty"`
	DefaultFPS      int      `json:"default_fps,omitempty"`
	Tags            []string `json:"tags,omitempty"`
	BaselineActions []int    `json:"baseline_actions,omitempty"`
	DateDownloaded  string   `json:"date_downloaded,omitempty"`
	ClassName       string   `json:"class_name,omitempty"`
}

// EnvironmentScorecard is the official scorecard: the answer of GET
// PathScorecard+{card_id} and of POST PathScorecardClose (arc_agi
// scorecard.py EnvironmentScorecard, dumped with exclude_none). Score is
// 0..100, the mean of the environments' scores.
type EnvironmentScorecard struct {
	SourceURL       string                 `json:"source_url,omitempty"`
	Tags            []string               `json:"tags,omitempty"`
	Opaque          json.RawMessage        `json:"opaque,omitempty"`
	CardID          string                 `json:"card_id"`
	Score           float64                `json:"score"`
	Environments    []EnvironmentScoreList `json:"environments"`
	TagsScores      []EnvironmentScore     `json:"tags_scores"`
	CompetitionMode *bool                  `json:"competition_mode,omitempty"`
	// The computed totals: environments won (any run WIN), environments,
	// Σ levels_completed (best run each), Σ level_count, Σ actions.
	TotalEnvironmentsCompleted int `json:"total_environments_completed"`
	TotalEnvironments          int `json:"total_environments"`
	TotalLevelsCompleted       int `json:"total_levels_completed"`
	TotalLevels                int `json:"total_levels"`
	TotalActions               int `json:"total_actions"`
}

// EnvironmentScoreList is one game of an EnvironmentScorecard: every run and
// the computed fields (scorecard.py EnvironmentScoreList): Score the best
// run's, Actions and Resets the sums, LevelsCompleted the most, Completed
// any run won, LevelCount the most levels of a run.
type EnvironmentScoreList struct {
	ID              string             `json:"id"`
	Runs            []EnvironmentScore `json:"runs"`
	Score           float64            `json:"score"`
	Actions         int                `json:"actions"`
	LevelsCompleted int                `json:"levels_completed"`
	Completed       bool               `json:"completed"`
	LevelCount      int                `json:"level_count"`
	Resets          int                `json:"resets"`
}

// EnvironmentScore is one run of a game, or one entry of tags_scores
// (scorecard.py EnvironmentScore). A run has GUID, Resets, State, Completed
// and the Level* lists (LevelScores 0..115 per level); a tag has ID,
// NumberOfLevels and NumberOfEnvironments instead.
type EnvironmentScore struct {
	ID                   string    `json:"id,omitempty"`
	GUID                 string    `json:"guid,omitempty"`
	Score                float64   `json:"score"`
	LevelsCompleted      int       `json:"levels_completed"`
	Actions              int       `json:"actions"`
	Resets               *int      `json:"resets,omitempty"`
	State                string    `json:"state,omitempty"`
	Completed            *bool     `json:"completed,omitempty"`
	LevelScores          []float64 `json:"level_scores,omitempty"`
	LevelActions         []int     `json:"level_actions,omitempty"`
	LevelBaselineActions []int     `json:"level_baseline_actions,omitempty"`
	NumberOfLevels       *int      `json:"number_of_levels,omitempty"`
	NumberOfEnvironments *int      `json:"number_of_environments,omitempty"`
	Message              string    `json:"message,omitempty"`
}

// Card is one game of the older agents' scorecard (ARC-AGI-3-Agents
// agents/structs.py Card before the toolkit, and arc_agi scorecard.py Card
// now; the union of both): per run, in order, its guid, levels completed
// (Scores repeats them: the older agents' per-play score), state, actions
// and level resets; ActionsByLevel holds each run's [levels_completed,
// actions] marks.
type Card struct {
	GameID          string     `json:"game_id"`
	TotalPlays      int        `json:"total_plays"`
	GUIDs           []string   `json:"guids"`
	Scores          []int      `json:"scores"`
	LevelsCompleted []int      `json:"levels_completed"`
	States          []string   `json:"states"`
	Actions         []int      `json:"actions"`
	ActionsByLevel  [][][2]int `json:"actions_by_level"`
	Resets          []int      `json:"resets"`
	TotalActions    int        `json:"total_actions"`
}

// LegacyScorecard is the older agents' scorecard, the answer of GET
// PathScorecard+{card_id}/{game_id} (ARC-AGI-3-Agents agents/agent.py
// get_scorecard validates it as structs.py Scorecard; arc_agi scorecard.py
// get_json_for serves it): totals over the whole scorecard, Cards only the
// asked game ({} when it was not played). Won counts games with a won run,
// Played games with a run, Score and LevelsCompleted sum each game's most
// levels completed.
type LegacyScorecard struct {
	// CardID is an addition to get_json_for's keys (structs.py Scorecard
	// has the field), so that the answer names its scorecard.
	CardID          string          `json:"card_id,omitempty"`
	Won             int             `json:"won"`
	Played          int             `json:"played"`
	TotalActions    int             `json:"total_actions"`
	LevelsCompleted int             `json:"levels_completed"`
	Score           int             `json:"score"`
	Cards           map[string]Card `json:"cards"`
}

// ClosedScorecard is the answer of POST PathScorecardClose: the official
// EnvironmentScorecard plus the older agents' "cards" (their swarm validates
// the close answer as structs.py Scorecard, whose other fields are computed
// or optional). The toolkit ignores the extra key.
type ClosedScorecard struct {
	EnvironmentScorecard
	Cards map[string]Card `json:"cards"`
}
