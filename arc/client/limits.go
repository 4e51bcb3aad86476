package client

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"evident/arc/api"
	"evident/arc/session"
)

// Limits of the official server and of baseline1's client that the client
// enforces (spec arc.md "Compatibility facts").
const (
	// ScorecardIdleLimit is how long the official server keeps a scorecard
	// open without a command ("Scorecards close after 15 minutes idle");
	// after it the server answers 400 "game … not found" to the game's
	// commands and 404 to closing the scorecard.
	ScorecardIdleLimit = 15 * time.Minute
	// IdleWarnAfter: a command sent, or a status read, more than this long
	// after the last command carries a warning that the scorecard will
	// close at ScorecardIdleLimit.
	IdleWarnAfter = 10 * time.Minute
	// MaxLevelActions is baseline1 v1.6's limit of actions per level
	// (client.py MAX_LEVEL_ACTIONS), counted as Held.Move documents.
	MaxLevelActions = 1500
	// ExpiredSessionPrefix and ExpiredStatePrefix name where Start moves
	// the session and the state file of an expired game:
	// client/session.expired-N/ and client/client_state.expired-N.json, N
	// the first number from 1 for which neither exists.
	ExpiredSessionPrefix = "client/session.expired-"
	ExpiredStatePrefix   = "client/client_state.expired-"
)

// More errors of the game client; test with errors.Is.
var (
	// ErrScorecardExpired: the game's scorecard expired (see
	// ExpiredError); the game cannot go on, start a new one.
	ErrScorecardExpired = errors.New("the scorecard expired")
	// ErrResetBeforeAction: RESET before the first action of an attempt,
	// refused unless forced (baseline1 v1.6 client.py
	// validate_action_for_state): on the official server a RESET with no
	// action in the level resets the whole game to level 1.
	ErrResetBeforeAction = errors.New("RESET before the first action of the attempt")
	// ErrLevelActionLimit: MaxLevelActions reached on the current level.
	ErrLevelActionLimit = errors.New("level action limit reached")
)

// RuleError is a command the client refused to send by one of baseline1
// v1.6's rules. Error is baseline1's message, word for word; Unwrap gives
// the sentinel (ErrGameOver, ErrResetBeforeAction, ErrLevelActionLimit).
type RuleError struct {
	Msg string
	Err error
}

// Error returns baseline1's message.
func (e *RuleError) Error() string { return e.Msg }

// Unwrap returns the sentinel of the rule.
func (e *RuleError) Unwrap() error { return e.Err }

// Baseline1 v1.6's messages (client.py validate_action_for_state and
// move_command).
const (
	MsgOnlyReset           = "Only RESET is allowed when the game is in GAME_OVER state."
	MsgResetBeforeAction   = "RESET is not allowed before taking any action in the current attempt."
	msgLevelActionLimitFmt = "Current level action limit reached: %d actions on level %d across all attempts (limit: %d)."
)

// ExpiredError says that the game's scorecard expired: found from the
// state file's timestamp (Server nil: more than ScorecardIdleLimit since
// the last command, nothing was sent), or from the server's answer (Server
// the HTTPError: 400 "game … not found", or SCORECARD_CLOSED, to a command
// of a game it knew). It matches ErrScorecardExpired.
type ExpiredError struct {
	GameID, CardID, GUID string
	// Last is the time of the last command the server answered (zero when
	// unknown: a state file written before it was kept); Idle is the gap
	// from it to the refused command.
	Last time.Time
	Idle time.Duration
	// Server is the server's error, nil when the client found the expiry
	// itself.
	Server error
	// Earlier is the message of the ExpiredError that ended the game in an
	// earlier command (State.Ended); set, it is the whole story.
	Earlier string
}

// Error says it in plain words, with the idle gap.
func (e *ExpiredError) Error() string {
	limit := ScorecardIdleLimit.String()
	gap := "an unknown time"
	if !e.Last.IsZero() {
		gap = fmt.Sprintf("%s (the last command was at %s)", e.Idle.Round(time.Second), e.Last.UTC().Format(time.RFC3339))
	}
	switch {
	case e.Earlier != "":
		return "the game in this workspace ended earlier: " + e.Earlier + "; nothing was sent"
	case e.Server == nil:
		return fmt.Sprintf("the scorecard %s of game %s has expired: no command for %s, and the server closes a scorecard after %s without one; nothing was sent, the game cannot go on",
			e.CardID, e.GameID, gap, limit)
	case e.Last.IsZero() || e.Idle < IdleWarnAfter:
		// Too soon for the idle limit (even with the two clocks apart): the
		// server restarted, or closed the scorecard for another reason.
		ago := "at an unknown time"
		if !e.Last.IsZero() {
			ago = "only " + e.Idle.Round(time.Second).String() + " ago"
		}
		return fmt.Sprintf("the server no longer knows game %s (guid %s) although the last command was %s, within its %s idle limit: it was restarted, or its scorecard %s was closed (or opened over 3 days ago); the game cannot go on (%v)",
			e.GameID, e.GUID, ago, limit, e.CardID, e.Server)
	}
	return fmt.Sprintf("the server no longer knows game %s (guid %s) after %s without a command: its scorecard %s expired (the server closes a scorecard after %s idle, or 3 days after it opened); the game cannot go on (%v)",
		e.GameID, e.GUID, gap, e.CardID, limit, e.Server)
}

// Is matches ErrScorecardExpired.
func (e *ExpiredError) Is(target error) bool { return target == ErrScorecardExpired }

// Unwrap returns the server's error, if any.
func (e *ExpiredError) Unwrap() error { return e.Server }

// Idle returns the time from the last command the server answered to now;
// ok is false when the state has no LastCommand (a state file written
// before it was kept).
func (st *State) Idle(now time.Time) (d time.Duration, ok bool) {
	if st.LastCommand.IsZero() {
		return 0, false
	}
	return now.Sub(st.LastCommand), true
}

// IdleWarning returns the warning for a game idle since its last command
// at now: "" up to IdleWarnAfter (or when the gap is unknown, or the game
// is stopped or expired); past it, how long is left before
// ScorecardIdleLimit; past that, that the scorecard has most likely
// expired.
func IdleWarning(st *State, now time.Time) string {
	d, ok := st.Idle(now)
	if !ok || st.Stopped || st.Expired || d <= IdleWarnAfter {
		return ""
	}
	d = d.Round(time.Second)
	if d > ScorecardIdleLimit {
		return fmt.Sprintf("warning: no command for %s: the server closes a scorecard after %s without one, so scorecard %s has most likely expired", d, ScorecardIdleLimit, st.CardID)
	}
	return fmt.Sprintf("warning: no command for %s: the server closes scorecard %s after %s without one (%s left)", d, st.CardID, ScorecardIdleLimit, ScorecardIdleLimit-d)
}

// ErrLagging: the server may have played a command whose response the
// session lacks (State.Lagging); the game cannot go on from this session.
var ErrLagging = errors.New("the session lags the game")

// mayHavePlayed reports whether a failed command may still have been played
// by the server: anything but an HTTP error status (the server refused it)
// and a failure to connect (nothing reached it) — a timeout, a connection
// cut mid-answer, an answer that could not be read.
func mayHavePlayed(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	return true
}

// lag marks the state Lagging, with why and cause (when not nil) as
// State.Ended, and returns the error for it, wrapping cause.
func (h *Held) lag(st *State, why string, cause error) error {
	if cause != nil {
		why += ": " + cause.Error()
	}
	st.Lagging, st.Ended = true, why
	err := fmt.Errorf("client: %w: %s; the recorded session no longer matches the game, so later commands are refused", ErrLagging, why)
	if cause != nil {
		err = &lagError{err: err, cause: cause}
	}
	if werr := h.c.writeState(st); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// lagError is lag's error: its text already holds the cause's, which it
// also wraps (errors.Is and As reach both).
type lagError struct{ err, cause error }

func (e *lagError) Error() string   { return e.err.Error() }
func (e *lagError) Unwrap() []error { return []error{e.err, e.cause} }

// gameGone reports whether err is the server's answer for a game or
// scorecard it no longer has: 400 or 404 whose text says "not found"
// (official: SERVER_ERROR "game {id} not found"), or SCORECARD_CLOSED
// (evident's local server).
func gameGone(err error) bool {
	var he *HTTPError
	if !errors.As(err, &he) || (he.Status != http.StatusBadRequest && he.Status != http.StatusNotFound) {
		return false
	}
	return he.Code == api.CodeScorecardClosed || strings.Contains(strings.ToLower(he.Code+" "+he.Message), "not found")
}

// saysGameOver reports whether an error body's code or message says the
// game is over, whatever its wording: GAME_OVER, "game over", "Game is
// over", "game-over" (case-insensitive; underscores and hyphens read as
// spaces, as is all punctuation).
func saysGameOver(code, msg string) bool {
	norm := func(s string) string {
		words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		return " " + strings.Join(words, " ") + " "
	}
	for _, s := range []string{code, msg} {
		n := norm(s)
		if strings.Contains(n, " game over ") || strings.Contains(n, " game is over ") {
			return true
		}
	}
	return false
}

// levelActions counts the actions on the level of pos as baseline1 v1.6
// does (client.py current_level_action_count): the step_index of pos's
// metadata (the attempt's initial_metadata.json at step 0) minus that of
// the level's first attempt's initial_metadata.json, RESETs included. It
// fails, naming the file, when either is missing or bad.
func levelActions(pos session.Position) (int, error) {
	first := filepath.Join(filepath.Dir(pos.Dir), session.AttemptDirName(pos.Level, 1), session.InitialMetadataFile)
	last := filepath.Join(pos.Dir, session.InitialMetadataFile)
	if pos.Step > 0 {
		last = filepath.Join(pos.Dir, session.StepMetadataFile(pos.Step))
	}
	fm, err := readMetadata(first)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("client: missing metadata for the first attempt of the current level: %s", first)
	}
	if err != nil {
		return 0, err
	}
	lm, err := readMetadata(last)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("client: missing metadata for the current client state: %s", last)
	}
	if err != nil {
		return 0, err
	}
	return lm.StepIndex - fm.StepIndex, nil
}

// ResolveGameID picks the game that id names among games as the official
// tools accept it (arc_agi api.py get_game_info): the game whose game_id
// is id, else the one whose game_id starts with id + "-" (the id without
// its version suffix, "ls20" for "ls20-016295f7601e"). It fails when none
// or several match, listing the candidates (for none: the games whose id
// merely starts with id, else every game).
func ResolveGameID(games []api.GameInfo, id string) (string, error) {
	var ids, versions, prefixed []string
	for _, g := range games {
		if g.GameID == id {
			return id, nil
		}
		ids = append(ids, g.GameID)
		if strings.HasPrefix(g.GameID, id+"-") {
			versions = append(versions, g.GameID)
		} else if id != "" && strings.HasPrefix(g.GameID, id) {
			prefixed = append(prefixed, g.GameID)
		}
	}
	switch {
	case len(versions) == 1:
		return versions[0], nil
	case len(versions) > 1:
		slices.Sort(versions)
		return "", fmt.Errorf("client: game id %q is ambiguous: it names %s; give the whole id", id, strings.Join(versions, ", "))
	case len(prefixed) > 0:
		slices.Sort(prefixed)
		return "", fmt.Errorf("client: the server has no game %q (a prefix must end where the id's \"-version\" starts); did you mean %s?", id, strings.Join(prefixed, ", "))
	}
	return "", fmt.Errorf("client: the server has no game %q; it has %s", id, strings.Join(ids, ", "))
}

// moveAside moves an expired game's session and state file to
// ExpiredSessionPrefix+N and ExpiredStatePrefix+N+".json" (N the first
// free number from 1) and returns the session's new path ("" when there
// was no session). Nothing is deleted.
func (c *Client) moveAside() (string, error) {
	for n := 1; ; n++ {
		sess := filepath.Join(c.ws, fmt.Sprintf("%s%d", ExpiredSessionPrefix, n))
		state := filepath.Join(c.ws, fmt.Sprintf("%s%d.json", ExpiredStatePrefix, n))
		if exists(sess) || exists(state) {
			continue
		}
		moved := ""
		if exists(c.SessionRoot()) {
			if err := os.Rename(c.SessionRoot(), sess); err != nil {
				return "", fmt.Errorf("client: moving the expired session aside: %w", err)
			}
			moved = sess
		}
		if err := os.Rename(filepath.Join(c.ws, StateFile), state); err != nil {
			return moved, fmt.Errorf("client: moving the expired state aside: %w", err)
		}
		return moved, nil
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// LevelActions returns the number of actions on the current level as
// baseline1 v1.6 counts them (client.py current_level_action_count): the
// step_index of the current attempt's latest metadata minus that of the
// level's attempt 1 initial_metadata.json, RESETs included; Move refuses
// every command once it reaches MaxLevelActions. It reads the session only
// and fails with ErrNotStarted, without an attempt, or naming a missing or
// bad metadata file.
func (c *Client) LevelActions() (int, error) {
	if _, err := c.ReadState(); err != nil {
		return 0, err
	}
	rec, err := session.OpenRecorder(c.SessionRoot())
	if err != nil {
		return 0, err
	}
	if rec.Position().Dir == "" {
		return 0, errors.New("client: the session has no attempt yet (" + c.SessionRoot() + ")")
	}
	return levelActions(rec.Position())
}
