// Package live judges character replies one turn at a time, as the
// conversation happens (issue 17): the HTTP API (web/api.go) and the Kafka
// consumer (persona/stream) feed it turns in arrival order and keep, per
// session, the small State the recall rule needs between turns.
//
// It owns that state and the step from (state, turn) to (record, state). It
// decides no verdict itself (persona.Judge does, with a History answered from
// the state), does no I/O and imports no adapter: storing the state is the
// store's job (store/live.go) or the changelog topic's (persona/stream).
//
// # What the recall rule needs
//
// persona.Judge asks History one question per turn: the earliest earlier turn
// of the session, in session order, whose named_entities contain the asked
// entity (spec persona.md rule 4). Session order is created_at when every
// turn of the session has one, else input order; here input order is arrival
// order. So the state keeps, per entity the session has named, its first
// mention by arrival and its earliest mention by (created_at, arrival), each
// with the turn_id and reply_text the recall evidence cites, plus whether a
// turn without a usable created_at has arrived and the latest created_at
// judged. That is what persona.Sessions keeps per session for the batch
// judge, so a log fed in arrival order gets byte-identical records (live_test
// holds the two to that on the demo log).
//
// # Decisions where the spec is silent
//
//   - Live order is arrival order. A turn whose created_at is earlier than
//     that of an already judged turn of its (timed) session arrived late: it
//     is judged against every turn that arrived before it (they all count as
//     earlier turns, whatever their created_at), and its hedge says so, naming
//     the later turn. The batch judge, which sees the whole session, would
//     order it by created_at instead; only such turns can differ.
//   - A session becomes untimed (arrival order) from the first turn without a
//     usable created_at on; turns judged before it keep their records. In a
//     log whose created_at never goes backwards the two orders agree.
//   - The state keeps every distinct named entity of the session, not only
//     the entities of the current cards' entity_roles, so a card updated
//     between two requests still finds earlier mentions. It grows with the
//     distinct names of a session, never with the number of sessions.
//   - A turn whose character_id has no card is rejected (ErrUnknownCharacter)
//     and leaves the state as it was: a rejected row is not a turn.
package live

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"evident/persona"
)

// State is one session's live judging state: what the recall rule needs to
// know about the turns of the session judged so far (package doc). The zero
// value is the state of a session with no turns. It is stored as JSON (its
// field tags are the stored form; AppendJSON writes the same bytes as
// json.Marshal, faster); a State is not safe for concurrent use.
type State struct {
	// Turns counts the turns judged so far; it is the arrival position of the
	// next turn.
	Turns int `json:"turns"`
	// Untimed is set once a turn without a usable created_at has arrived:
	// from then on session order is arrival order.
	Untimed bool `json:"untimed,omitempty"`
	// Latest is the judged turn with the latest created_at (the first to
	// arrive among equal times); nil while no timed turn was judged.
	Latest *Stamp `json:"latest,omitempty"`
	// Mentions maps each entity named by a judged turn to its first mentions.
	Mentions map[string]*Firsts `json:"mentions,omitempty"`
}

// Stamp names a judged turn and its created_at as written.
type Stamp struct {
	TurnID    string `json:"turn_id"`
	CreatedAt string `json:"created_at"`
}

// Firsts are the two earliest mentions of an entity: by arrival and by
// session time (created_at, then arrival). ByTime is only read while the
// session is timed.
type Firsts struct {
	ByArrival Mention `json:"by_arrival"`
	ByTime    Mention `json:"by_time"`
}

// Mention is one turn that named an entity: its turn_id and reply_text (nil
// when null), which the recall evidence cites, its arrival position Seq, and
// its created_at as written ("" when absent or unusable).
type Mention struct {
	TurnID    string  `json:"turn_id"`
	ReplyText *string `json:"reply_text"`
	Seq       int     `json:"seq"`
	CreatedAt string  `json:"created_at,omitempty"`
}

// Outcome says how a turn was placed in its session.
type Outcome struct {
	// Late is set when the turn's created_at is earlier than that of an
	// already judged turn of its session (After names it): it was judged
	// against the turns that arrived before it, and its hedge says so.
	Late  bool
	After string
}

// History returns the recall rule's answers for t, the next turn of the
// session, as Step judges it: the earliest mention in session order among the
// turns judged so far (all of which came before t). It reads s; use it
// before Step changes s (persona.Context for the ten checks).
func (s *State) History(t *persona.Turn) persona.History {
	_, timed := persona.SessionTime(t)
	return history{s: s, untimed: s.Untimed || !timed}
}

type history struct {
	s       *State
	untimed bool
}

// Earliest implements persona.History: every mention in the state arrived
// before the turn asking, so the earliest one in session order answers.
func (h history) Earliest(_ *persona.Turn, _ int, entity string) (persona.Mention, bool) {
	f := h.s.Mentions[entity]
	if f == nil {
		return persona.Mention{}, false
	}
	m := &f.ByTime
	if h.untimed {
		m = &f.ByArrival
	}
	return persona.Mention{TurnID: m.TurnID, ReplyText: m.ReplyText}, true
}

// Step judges t, the next turn of the session whose state is s, and records
// it in s. The record is what j.Judge gives with s's History, plus, for a late
// turn (Outcome.Late), one more hedge sentence saying it was judged against
// the turns that arrived before it. The only error is
// persona.ErrUnknownCharacter (wrapped with the id); s is then unchanged.
func Step(j *persona.Judge, s *State, t *persona.Turn) (persona.Record, Outcome, error) {
	at, timed := persona.SessionTime(t)
	var out Outcome
	if timed && !s.Untimed && s.Latest != nil {
		if latest, err := persona.ParseCreatedAt(s.Latest.CreatedAt); err == nil && at.Before(latest) {
			out = Outcome{Late: true, After: s.Latest.TurnID}
		}
	}
	rec, err := j.Judge(t, s.Turns, s.History(t))
	if err != nil {
		return persona.Record{}, Outcome{}, err
	}
	if out.Late {
		h := "이 회차는 created_at이 이미 판정한 회차 " + out.After + "보다 이르지만 늦게 도착해, 그보다 먼저 도착한 회차들을 모두 앞 회차로 보고 판정했습니다."
		if rec.Hedge != nil {
			h = *rec.Hedge + " " + h
		}
		rec.Hedge = &h
	}
	s.add(t, at, timed)
	return rec, out, nil
}

// add records judged turn t (created_at at, when timed) in s.
func (s *State) add(t *persona.Turn, at time.Time, timed bool) {
	seq := s.Turns
	s.Turns++
	if !timed {
		s.Untimed = true
	} else if s.Latest == nil || laterThan(at, s.Latest.CreatedAt) {
		s.Latest = &Stamp{TurnID: t.TurnID, CreatedAt: t.CreatedAt}
	}
	if len(t.NamedEntities) == 0 {
		return
	}
	m := Mention{TurnID: t.TurnID, ReplyText: t.ReplyText, Seq: seq}
	if timed {
		m.CreatedAt = t.CreatedAt
	}
	persona.Distinct(t.NamedEntities, func(_ int, e string) bool {
		if s.Mentions == nil {
			s.Mentions = map[string]*Firsts{}
		}
		f := s.Mentions[e]
		if f == nil {
			s.Mentions[e] = &Firsts{ByArrival: m, ByTime: m}
			return true
		}
		// ByArrival never changes: later arrivals come later. ByTime moves
		// to a timed turn with an earlier created_at (ties: the earlier
		// arrival, which is the one already there). An untimed first
		// mention stays: its session is untimed for good, and ByTime is
		// never read again (as in persona.Sessions).
		if timed && f.ByTime.CreatedAt != "" && at.Before(mustTime(f.ByTime.CreatedAt)) {
			f.ByTime = m
		}
		return true
	})
}

// laterThan reports whether at is strictly after the created_at written as s
// (true when s does not parse).
func laterThan(at time.Time, s string) bool {
	t, err := persona.ParseCreatedAt(s)
	return err != nil || at.After(t)
}

func mustTime(s string) time.Time {
	t, _ := persona.ParseCreatedAt(s)
	return t
}

// Digest returns a hex SHA-256 of t's columns as JSON (json.Marshal's bytes
// of persona.Turn: its field order, null handling and HTML escaping), so
// that a re-sent turn can be told apart from a different row with the same
// turn_id: same digest, same row. named_entities null and [] differ, as they
// do for the judge. The JSON is written by hand (appendTurnJSON, held to
// json.Marshal's bytes by TestDigestIsTheSHA256OfTheTurnsMarshalledJSON and
// FuzzAppendJSON): stored digests must never change.
func Digest(t *persona.Turn) string {
	d := digestBufs.Get().(*digestBuf)
	d.b = appendTurnJSON(d.b[:0], t)
	sum := sha256.Sum256(d.b)
	if cap(d.b) <= 64<<10 { // a 1 MiB row's buffer is not kept
		digestBufs.Put(d)
	}
	return hex.EncodeToString(sum[:])
}

// digestBuf is Digest's reused buffer.
type digestBuf struct{ b []byte }

var digestBufs = sync.Pool{New: func() any { return new(digestBuf) }}

// Resume returns the state a stored or carried value holds: a new State for
// nil, the decoded State for JSON ([]byte, State's stored form), the State
// itself for a *State. The error names what could not be read.
func Resume(prev any) (*State, error) {
	switch v := prev.(type) {
	case nil:
		return &State{}, nil
	case *State:
		return v, nil
	case []byte:
		var s State
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("stored session state: %w", err)
		}
		return &s, nil
	}
	return nil, fmt.Errorf("session state of type %T", prev)
}
