package live

import (
	"errors"
	"fmt"

	"evident/persona"
)

// Limits bound what one turn may add to a session and what a session may
// hold, so that no row and no session can make a live service's memory or
// stored state grow without bound (README "Security model"). A zero field
// means its default; a negative one is an error of Check. Limits.Step
// refuses a turn over any of them with a *LimitError and leaves the state as
// it was.
//
// The three limits and why their defaults (a platform's pick: each well
// above what a conversation turn holds, each far below what takes a server
// down):
//   - MaxNames: distinct named_entities of one row, DefaultMaxNames (1,000).
//     A row naming 2,000 entities with a 198 KB reply took the live API to
//     3.5 GB when each mention carried a copy of the reply; now a mention is
//     a few bytes, but a row's names are still many rows of state.
//   - MaxRowBytes: bytes of one row's reply_text plus user_message,
//     DefaultMaxRowBytes (1 MiB): the limit the live API had since its first
//     version (web.MaxLiveRowText). A request's memory grows with its rows'
//     text many times over (evidence, summary, stored record).
//   - MaxStateBytes: a session's State.Bytes (its stored JSON) after the
//     turn, DefaultMaxStateBytes (2 MiB): twice the row limit, so that a
//     session's first turn at the row limit always fits, with room for its
//     names; a session grows only with the distinct entities it names and
//     the replies that first name them, so a conversation rarely holds more
//     than a few KB (the demo log's largest session: 3 KB).
type Limits struct {
	MaxNames      int
	MaxRowBytes   int
	MaxStateBytes int
}

// The default limits (Limits' doc says why).
const (
	DefaultMaxNames      = 1000
	DefaultMaxRowBytes   = 1 << 20
	DefaultMaxStateBytes = 2 << 20
)

// DefaultLimits returns the default limits, every field set.
func DefaultLimits() Limits {
	return Limits{MaxNames: DefaultMaxNames, MaxRowBytes: DefaultMaxRowBytes, MaxStateBytes: DefaultMaxStateBytes}
}

// The names of the limits, as LimitError.Limit gives them (and the live
// API's error body: README "Live judging").
const (
	LimitNames      = "names_per_row"
	LimitRowBytes   = "row_bytes"
	LimitStateBytes = "state_bytes"
)

// Resolved returns l with each zero field set to its default.
func (l Limits) Resolved() Limits {
	if l.MaxNames == 0 {
		l.MaxNames = DefaultMaxNames
	}
	if l.MaxRowBytes == 0 {
		l.MaxRowBytes = DefaultMaxRowBytes
	}
	if l.MaxStateBytes == 0 {
		l.MaxStateBytes = DefaultMaxStateBytes
	}
	return l
}

// Check returns an error naming the first negative limit, nil when every
// limit is zero (its default) or positive.
func (l Limits) Check() error {
	for _, x := range []struct {
		name string
		v    int
	}{{LimitNames, l.MaxNames}, {LimitRowBytes, l.MaxRowBytes}, {LimitStateBytes, l.MaxStateBytes}} {
		if x.v < 0 {
			return fmt.Errorf("live limit %s is %d: give a positive limit (0 for the default)", x.name, x.v)
		}
	}
	return nil
}

// LimitError is Limits.Step's (and CheckRow's) error for a turn over a
// limit: Limit names it (LimitNames, LimitRowBytes or LimitStateBytes), Max
// is its value, Got what the turn has (distinct names; bytes of reply_text
// plus user_message; the session state's bytes had the turn been added),
// TurnID and SessionID name the row. The state is unchanged.
type LimitError struct {
	Limit     string
	Max, Got  int
	TurnID    string
	SessionID string
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitNames:
		return fmt.Sprintf("turn %q names %d distinct entities: at most %d a row (limit %s)", e.TurnID, e.Got, e.Max, e.Limit)
	case LimitRowBytes:
		return fmt.Sprintf("turn %q: reply_text and user_message hold %d bytes, at most %d a row (limit %s)", e.TurnID, e.Got, e.Max, e.Limit)
	}
	return fmt.Sprintf("turn %q would make session %q's state %d bytes, at most %d (limit %s)", e.TurnID, e.SessionID, e.Got, e.Max, e.Limit)
}

// ErrLimit is what every *LimitError matches with errors.Is.
var ErrLimit = errors.New("live: over a limit")

// Is makes errors.Is(err, ErrLimit) true for a *LimitError.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// RowBytes is the bytes of t that MaxRowBytes counts: its reply_text plus
// its user_message (absent ones count 0).
func RowBytes(t *persona.Turn) int {
	n := 0
	if t.ReplyText != nil {
		n += len(*t.ReplyText)
	}
	if t.UserMessage != nil {
		n += len(*t.UserMessage)
	}
	return n
}

// CountNames returns the number of distinct strings in t's named_entities
// (what MaxNames counts), in time linear in the list.
func CountNames(t *persona.Turn) int {
	n := 0
	persona.Distinct(t.NamedEntities, func(int, string) bool { n++; return true })
	return n
}

// CheckRow returns a *LimitError when t alone is over l's row limits (bytes
// first, then names), else nil; zero fields are their defaults. It needs no
// state: a caller may check every row of a request before judging any (the
// live API does). Linear in the row.
func (l Limits) CheckRow(t *persona.Turn) error {
	l = l.Resolved()
	if n := RowBytes(t); n > l.MaxRowBytes {
		return &LimitError{Limit: LimitRowBytes, Max: l.MaxRowBytes, Got: n, TurnID: t.TurnID, SessionID: t.SessionID}
	}
	if len(t.NamedEntities) > l.MaxNames { // else there are not enough to count
		if n := CountNames(t); n > l.MaxNames {
			return &LimitError{Limit: LimitNames, Max: l.MaxNames, Got: n, TurnID: t.TurnID, SessionID: t.SessionID}
		}
	}
	return nil
}
