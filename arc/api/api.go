// Package api owns the wire format of the ARC-AGI-3 REST API (spec arc.md
// "The real game: ARC-AGI-3 REST API"): paths, the API-key header, request
// and response bodies, error bodies and the conversions between a
// FrameResponse and the recorder's session.Response. The game client
// (evident/arc/client) speaks it to the real server and to the local one;
// the local server (evident/arc/games) answers in it.
//
// It must not do I/O: no HTTP, no files, no retries, no game rules.
//
// # Decisions where the spec is silent
//
//   - Error bodies are {"error": CODE, "message": TEXT}; the codes the local
//     server sends are the Code* constants. The real server's bodies are not
//     documented, so the client treats the body as opaque text apart from
//     these codes and the word GAME_OVER.
//   - action_input.reasoning, when present, is kept as an extra key of the
//     recorded action_input, never sent to the world model.
//   - official.go holds the official toolkit's shapes (EnvironmentInfo,
//     EnvironmentScorecard, the older agents' LegacyScorecard and Card) with
//     the model each is written from; the local server answers in them.
//   - The local server adds one endpoint the real API lacks, PathFullFrame:
//     the current level's initial full frame when the level is larger than
//     the 64×64 view. The client writes it to initial_full_frames/level_N.txt
//     (spec "Vocabulary and contracts", load_initial_full_frame); against the
//     real server the request simply finds nothing.
package api

import (
	"encoding/json"
	"fmt"

	"evident/arc/frame"
	"evident/arc/session"
)

// HeaderAPIKey is the request header carrying the API key.
const HeaderAPIKey = "X-API-Key"

// Paths of the API, relative to the server's base URL (spec arc.md "The real
// game"). PathScorecard is followed by {card_id}[/{game_id}], PathCmd by the
// action name (RESET, ACTION1..ACTION7), PathFullFrame by a guid.
const (
	PathGames          = "/api/games"
	PathScorecardOpen  = "/api/scorecard/open"
	PathScorecardClose = "/api/scorecard/close"
	PathScorecard      = "/api/scorecard/"
	PathCmd            = "/api/cmd/"
	// PathFullFrame is the local server's extension (see the package doc):
	// GET PathFullFrame+{guid} → FullFrameResponse, 404 when the current
	// level fits the view.
	PathFullFrame = "/api/local/initial_full_frame/"
)

// Game states of FrameResponse.State (spec arc.md "The real game").
const (
	StateNotPlayed   = session.StateNotPlayed
	StateNotFinished = session.StateNotFinished
	StateWin         = session.StateWin
	StateGameOver    = session.StateGameOver
)

// Error codes the local server puts in ErrorBody.Error.
const (
	CodeRateLimited     = "RATE_LIMIT_EXCEEDED" // 429, with Retry-After in seconds
	CodeUnauthorized    = "UNAUTHORIZED"        // 401: missing or wrong X-API-Key
	CodeNotFound        = "NOT_FOUND"           // 404: unknown game, guid, scorecard or path
	CodeValidation      = "VALIDATION_ERROR"    // 400: a malformed request
	CodeGameOver        = "GAME_OVER"           // 400: a non-RESET action while the game is GAME_OVER
	CodeGameWon         = "GAME_WON"            // 400: a non-RESET action after the game was won
	CodeNotAvailable    = "ACTION_NOT_AVAILABLE"
	CodeScorecardClosed = "SCORECARD_CLOSED" // 400: the play's scorecard is closed
)

// GameInfo is one entry of GET PathGames.
type GameInfo struct {
	GameID string `json:"game_id"`
	Title  string `json:"title"`
}

// OpenScorecardRequest is the body of POST PathScorecardOpen; every field is
// optional.
type OpenScorecardRequest struct {
	SourceURL string          `json:"source_url,omitempty"`
	Tags      []string        `json:"tags,omitempty"`
	Opaque    json.RawMessage `json:"opaque,omitempty"`
}

// OpenScorecardResponse is the answer of POST PathScorecardOpen.
type OpenScorecardResponse struct {
	CardID string `json:"card_id"`
}

// CloseScorecardRequest is the body of POST PathScorecardClose.
type CloseScorecardRequest struct {
	CardID string `json:"card_id"`
}

// ResetRequest is the body of POST PathCmd+"RESET". Without GUID the server
// starts a new game; with it, it resets the level if an action was taken in
// it, else the whole game.
type ResetRequest struct {
	GameID string `json:"game_id"`
	CardID string `json:"card_id"`
	GUID   string `json:"guid,omitempty"`
}

// ActionRequest is the body of POST PathCmd+"ACTION1".."ACTION7". X and Y
// (0..63, origin top-left) are set for ACTION6 only.
type ActionRequest struct {
	GameID    string          `json:"game_id"`
	GUID      string          `json:"guid"`
	X         *int            `json:"x,omitempty"`
	Y         *int            `json:"y,omitempty"`
	Reasoning json.RawMessage `json:"reasoning,omitempty"`
}

// ActionInput is FrameResponse.action_input: the command as the server
// echoes it. ID is the API's GameAction number (0 RESET, n for ACTIONn).
type ActionInput struct {
	ID        int             `json:"id"`
	Data      json.RawMessage `json:"data,omitempty"`
	Reasoning json.RawMessage `json:"reasoning,omitempty"`
}

// FrameResponse is the answer to every command (spec arc.md "The real
// game"). Frame holds one or more grids of colours 0..15, rows of columns
// (Frame[i][y][x]); several when the game animates, the last one settled.
type FrameResponse struct {
	GameID           string      `json:"game_id"`
	GUID             string      `json:"guid"`
	Frame            [][][]int   `json:"frame"`
	State            string      `json:"state"`
	LevelsCompleted  int         `json:"levels_completed"`
	WinLevels        int         `json:"win_levels"`
	ActionInput      ActionInput `json:"action_input"`
	AvailableActions []int       `json:"available_actions"`
	// FullReset is true on the response to a RESET that restarted the whole
	// game (a new run on the scorecard), false otherwise (arcengine
	// FrameData.full_reset; spec arc.md "Compatibility facts").
	FullReset bool `json:"full_reset"`
}

// FullFrameResponse is the answer of GET PathFullFrame+{guid}: the initial
// full frame of the play's current level (Level, 1-based), rows of columns.
type FullFrameResponse struct {
	GameID string  `json:"game_id"`
	GUID   string  `json:"guid"`
	Level  int     `json:"level"`
	Frame  [][]int `json:"frame"`
}

// ErrorBody is the JSON body of an error response.
type ErrorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// Rows returns g as rows of ints, the API's form of one grid.
func Rows(g frame.Grid) [][]int {
	rows := make([][]int, g.Height())
	for y := range rows {
		r := g.Row(y)
		row := make([]int, len(r))
		for x, v := range r {
			row[x] = int(v)
		}
		rows[y] = row
	}
	return rows
}

// Grids decodes r.Frame. It fails when a grid is empty, ragged or larger
// than frame.MaxSide; values outside 0..15 become frame.Invalid (the
// recorder then records them as black and returns a warning:
// session.OutOfPaletteWarning).
func (r *FrameResponse) Grids() ([]frame.Grid, error) {
	out := make([]frame.Grid, 0, len(r.Frame))
	for i, rows := range r.Frame {
		g, err := frame.FromRows(rows)
		if err != nil {
			return nil, fmt.Errorf("api: frame %d of the response: %w", i, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// Metadata is the step metadata the recorder writes for r (spec arc.md
// "Session recording"): stepIndex is the client's server-wide command
// counter; action_input keeps the integer id, data ({} when absent) and
// reasoning (as an extra key).
func (r *FrameResponse) Metadata(stepIndex int) session.Metadata {
	in := &session.ActionInput{ID: session.ActionIDFromCode(r.ActionInput.ID), Data: r.ActionInput.Data}
	if len(in.Data) == 0 {
		in.Data = json.RawMessage(`{}`)
	}
	if len(r.ActionInput.Reasoning) > 0 && string(r.ActionInput.Reasoning) != "null" {
		in.Extra = map[string]json.RawMessage{"reasoning": r.ActionInput.Reasoning}
	}
	return session.Metadata{
		StepIndex:        stepIndex,
		State:            r.State,
		LevelsCompleted:  r.LevelsCompleted,
		WinLevels:        r.WinLevels,
		AvailableActions: append([]int(nil), r.AvailableActions...),
		ActionInput:      in,
	}
}

// Session converts r into what session.Recorder stores.
func (r *FrameResponse) Session(stepIndex int) (session.Response, error) {
	frames, err := r.Grids()
	if err != nil {
		return session.Response{}, err
	}
	return session.Response{Frames: frames, Metadata: r.Metadata(stepIndex)}, nil
}

// ActionID is the API's GameAction number of an action name: 0 for RESET,
// n for ACTIONn; ok is false for any other name.
func ActionID(name string) (id int, ok bool) {
	for i, n := range session.ActionNames {
		if n == name {
			return i, true
		}
	}
	return 0, false
}
