package persona

import (
	"strings"
	"time"
)

// Mention is the earliest earlier turn of a session that listed an entity in
// its named_entities: its turn_id and reply_text (nil when null), which the
// recall evidence cites.
type Mention struct {
	TurnID    string
	ReplyText *string
}

// History answers the one question the recall rule asks about other turns
// (spec persona.md rule 4): which is the earliest turn of t's session, in
// session order and before t, whose named_entities contain entity? pos is t's
// 0-based position among the accepted turns of the input.
type History interface {
	Earliest(t *Turn, pos int, entity string) (Mention, bool)
}

// Sessions indexes accepted turns by session for the recall rule. Session
// order is created_at when every turn of the session has one (ties broken by
// input position), else input order (spec persona.md "Input"). Because that
// choice depends on the whole session, every turn must be added before the
// first lookup.
//
// Memory: per session, one entry per distinct indexed entity (its first
// mention in each order, with that turn's reply text), not per turn, so it
// grows with the number of sessions. It serves tables held in memory anyway
// (evident check, tests); the batch judge
// (persona/batch) computes the same answers in external sorts instead, and a
// test holds the two to the same records. Not safe for concurrent Add;
// Earliest is safe for concurrent use once adding has stopped.
type Sessions struct {
	m    map[string]*session
	keep map[string]bool // entities worth indexing; nil = all
}

type session struct {
	untimed bool // some turn lacks created_at: input order applies
	first   map[string]*firsts
}

type firsts struct {
	byPos  mentionAt
	byTime mentionAt // valid while the session is timed
}

type mentionAt struct {
	pos int
	at  time.Time
	Mention
}

// NewSessions returns an empty index of every entity.
func NewSessions() *Sessions { return &Sessions{m: map[string]*session{}} }

// NewSessionsFor returns an empty index that keeps only the given entities.
// The recall rule only ever asks about entities of some card's entity_roles
// (Judge.RecallEntities), so indexing those alone gives the same answers
// with memory bounded by the cards, not by the names in the log.
func NewSessionsFor(entities map[string]bool) *Sessions {
	return &Sessions{m: map[string]*session{}, keep: entities}
}

// SessionTime returns the time session order uses for t: its created_at
// parsed as RFC 3339 (with or without fractional seconds). ok is false when
// created_at is missing or does not parse; one such turn puts its whole
// session in input order (spec persona.md "Input").
func SessionTime(t *Turn) (at time.Time, ok bool) {
	if t.CreatedAt == "" {
		return time.Time{}, false
	}
	at, err := ParseCreatedAt(t.CreatedAt)
	return at, err == nil
}

// ParseCreatedAt parses a created_at value: an RFC 3339 date-time, with or
// without fractional seconds, its "T" and "Z" in either case (RFC 3339 §5.6
// allows lower case; Go's time.RFC3339 layout does not). A leap second
// (":60") is not accepted: time.Time cannot hold it.
func ParseCreatedAt(s string) (time.Time, error) {
	if strings.ContainsAny(s, "tz") {
		s = strings.NewReplacer("t", "T", "z", "Z").Replace(s)
	}
	return time.Parse(time.RFC3339Nano, s)
}

// before orders (at, pos) pairs: time first, input position on ties.
func before(a time.Time, apos int, b time.Time, bpos int) bool {
	if c := a.Compare(b); c != 0 {
		return c < 0
	}
	return apos < bpos
}

func clonePtr(s *string) *string {
	if s == nil {
		return nil
	}
	c := strings.Clone(*s)
	return &c
}

// Add records accepted turn t at input position pos. Turns may be added in any
// order; a rejected row must not be added (it is not a turn). The index copies
// the strings it keeps, so t's memory (often one buffer per input row) is not
// retained.
func (s *Sessions) Add(t *Turn, pos int) {
	sess := s.m[t.SessionID]
	if sess == nil {
		sess = &session{first: map[string]*firsts{}}
		s.m[strings.Clone(t.SessionID)] = sess
	}
	at, timed := SessionTime(t)
	if !timed {
		sess.untimed = true
	}
	if len(t.NamedEntities) == 0 {
		return
	}
	var m *mentionAt // built on first use: most turns add no new first mention
	mention := func() mentionAt {
		if m == nil {
			m = &mentionAt{pos: pos, at: at, Mention: Mention{TurnID: strings.Clone(t.TurnID), ReplyText: clonePtr(t.ReplyText)}}
		}
		return *m
	}
	for _, e := range t.NamedEntities {
		if s.keep != nil && !s.keep[e] {
			continue
		}
		f := sess.first[e]
		if f == nil {
			sess.first[strings.Clone(e)] = &firsts{byPos: mention(), byTime: mention()}
			continue
		}
		if pos < f.byPos.pos {
			f.byPos = mention()
		}
		if timed && before(at, pos, f.byTime.at, f.byTime.pos) {
			f.byTime = mention()
		}
	}
}

// Earliest implements History.
func (s *Sessions) Earliest(t *Turn, pos int, entity string) (Mention, bool) {
	sess := s.m[t.SessionID]
	if sess == nil {
		return Mention{}, false
	}
	f := sess.first[entity]
	if f == nil {
		return Mention{}, false
	}
	if sess.untimed {
		return f.byPos.Mention, f.byPos.pos < pos
	}
	at, _ := SessionTime(t)
	return f.byTime.Mention, before(f.byTime.at, f.byTime.pos, at, pos)
}
