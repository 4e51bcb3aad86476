// Package live judges character replies one turn at a time, as the
// conversation happens: the HTTP API (web/api.go) and the Kafka consumer
// (kafka/) feed it turns in arrival order and keep, per session, the small
// State the recall rule needs between turns.
//
// It owns that state, its limits (Limits) and the step from (state, turn) to
// (record, state, change). It decides no verdict itself (persona.Judge does,
// with a History answered from the state), does no I/O and imports no
// adapter: storing the state is the store's job (store/live.go) or the
// changelog topic's (kafka/).
//
// # What the recall rule needs
//
// persona.Judge asks History one question per turn: the earliest earlier turn
// of the session, in session order, whose named_entities contain the asked
// entity (spec persona.md rule 4). Session order is created_at when every
// turn of the session has one, else input order; here input order is arrival
// order. So the state keeps, per entity the session has named, its first
// mention by arrival and its earliest mention by (created_at, arrival), plus
// whether a turn without a usable created_at has arrived and the latest
// created_at judged. That is what persona.Sessions keeps per session for the
// batch judge, so a log fed in arrival order gets byte-identical records
// (live_test holds the two to that on the demo log).
//
// # Bounded by construction
//
// A mention does not hold the text the recall evidence cites: it refers to
// its turn by arrival position (seq), and the state keeps each cited turn —
// turn_id, reply_text, created_at — once, however many entities it first
// named (a row naming 2,000 entities with a 198 KB reply made 2,000 copies
// of the reply, 396 MB of state, before). A cited turn no mention refers to
// any more (each of its entities was named again by a turn with an earlier
// created_at) leaves the state. So a State holds, per distinct entity, the
// entity and two integers, and per cited turn its three strings: State.Bytes,
// its stored JSON's length, is kept as the state changes (no re-encoding),
// and Limits.Step refuses, before changing anything, a turn whose row or
// resulting state is over a limit (Limits). A step costs time linear in its
// row, never in the state.
//
// Step reports what it changed (Change): the header (every turn), the
// entities whose mentions it added or moved, the turn it added to the cited
// turns and those it dropped. A store writes only those (store/live.go
// keeps one row per mention and per cited turn); the state is never
// rewritten whole.
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
//     distinct names of a session, never with the number of sessions, and at
//     most to Limits.MaxStateBytes: a turn that would grow it further is
//     refused (a *LimitError), so a session that has named very many
//     entities takes only turns that name none it has not named yet.
//   - A turn whose character_id has no card is rejected (ErrUnknownCharacter)
//     and, like a turn over a limit, leaves the state as it was: a rejected
//     row is not a turn.
package live

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"evident/persona"
)

// State is one session's live judging state: what the recall rule needs to
// know about the turns of the session judged so far (package doc). The zero
// value is the state of a session with no turns. Only Step (Limits.Step)
// changes it, and Restore and UnmarshalJSON build one; its parts are read
// with Header, Mention, Cited and Bytes. Its stored form is AppendJSON's
// JSON (MarshalJSON, UnmarshalJSON; statejson.go). A State is not safe for
// concurrent use.
type State struct {
	turns    int
	untimed  bool
	latest   *Stamp
	latestAt time.Time // latest's created_at, parsed
	mentions map[string]*firsts
	cited    map[int]*citedTurn

	// Bytes' parts: the JSON entries of mentions and of cited turns, without
	// the commas between them, and the latest stamp's.
	mentionBytes, citedBytes, latestBytes int
}

// Header is the part of a State that every turn changes.
type Header struct {
	// Turns counts the turns judged so far; it is the arrival position
	// (seq) of the next turn.
	Turns int
	// Untimed is set once a turn without a usable created_at has arrived:
	// from then on session order is arrival order.
	Untimed bool
	// Latest is the judged turn with the latest created_at (the first to
	// arrive among equal times); nil while no timed turn was judged.
	Latest *Stamp
}

// Stamp names a judged turn and its created_at as written.
type Stamp struct {
	TurnID    string `json:"turn_id"`
	CreatedAt string `json:"created_at"`
}

// Firsts are an entity's two earliest mentions, each the arrival position
// (seq) of a cited turn: by arrival and by session time (created_at, then
// arrival). ByTime is only read while the session is timed.
type Firsts struct {
	ByArrival int `json:"by_arrival"`
	ByTime    int `json:"by_time"`
}

// Cited is a judged turn that a mention refers to: its arrival position Seq,
// and the turn_id and reply_text (nil when null) that the recall evidence
// cites, and its created_at as written ("" when absent or unusable).
type Cited struct {
	Seq       int     `json:"seq"`
	TurnID    string  `json:"turn_id"`
	ReplyText *string `json:"reply_text"`
	CreatedAt string  `json:"created_at,omitempty"`
}

// firsts is a mention as kept: Firsts and its entity's quoted JSON length.
type firsts struct {
	Firsts
	keyLen int
}

// citedTurn is a cited turn as kept: created_at parsed, the number of
// references to it (ByArrival and ByTime of every entity), its JSON entry's
// length.
type citedTurn struct {
	Cited
	at   time.Time
	refs int
	size int
}

// Header returns s's header (Latest is a copy).
func (s *State) Header() Header {
	h := Header{Turns: s.turns, Untimed: s.untimed}
	if s.latest != nil {
		l := *s.latest
		h.Latest = &l
	}
	return h
}

// Mention returns entity's first mentions; ok is false when no judged turn
// named it.
func (s *State) Mention(entity string) (f Firsts, ok bool) {
	m := s.mentions[entity]
	if m == nil {
		return Firsts{}, false
	}
	return m.Firsts, true
}

// Cited returns the cited turn at arrival position seq; ok is false when no
// mention refers to that turn.
func (s *State) Cited(seq int) (c Cited, ok bool) {
	t := s.cited[seq]
	if t == nil {
		return Cited{}, false
	}
	return t.Cited, true
}

// Names returns the number of distinct entities s holds (one mention each).
func (s *State) Names() int { return len(s.mentions) }

// CitedTurns returns the number of cited turns s holds (each once, however
// many mentions refer to it).
func (s *State) CitedTurns() int { return len(s.cited) }

// Bytes returns the length of s's stored form, len(s.AppendJSON(nil)),
// without encoding it: kept up to date by every change (Limits.MaxStateBytes
// bounds it).
func (s *State) Bytes() int {
	return stateBytes(s.turns, s.untimed, s.latestBytes, len(s.mentions), s.mentionBytes, len(s.cited), s.citedBytes)
}

// Change is what one step changed in a State, for a store that writes only
// that: the header changes with every turn (Turns, and Untimed and Latest
// when they do); Entities are the entities whose Firsts the turn added or
// moved (distinct, in named_entities order: read them with State.Mention);
// Added says the turn itself (at arrival position Seq) became a cited turn
// (read it with State.Cited); Dropped are the cited turns no mention refers
// to any more, gone from the state. Entities and cited turns are never
// changed otherwise: a cited turn's fields never change while it is cited.
type Change struct {
	Seq      int
	Entities []string
	Added    bool
	Dropped  []int
}

// Outcome says how a turn was placed in its session and what it changed.
type Outcome struct {
	// Late is set when the turn's created_at is earlier than that of an
	// already judged turn of its session (After names it): it was judged
	// against the turns that arrived before it, and its hedge says so.
	Late  bool
	After string
	// Change is what the step changed in the state.
	Change Change
}

// History returns the recall rule's answers for t, the next turn of the
// session, as Step judges it: the earliest mention in session order among the
// turns judged so far (all of which came before t). It reads s; use it
// before Step changes s (persona.Context for the ten checks).
func (s *State) History(t *persona.Turn) persona.History {
	_, timed := persona.SessionTime(t)
	return history{s: s, untimed: s.untimed || !timed}
}

type history struct {
	s       *State
	untimed bool
}

// Earliest implements persona.History: every mention in the state arrived
// before the turn asking, so the earliest one in session order answers.
func (h history) Earliest(_ *persona.Turn, _ int, entity string) (persona.Mention, bool) {
	f := h.s.mentions[entity]
	if f == nil {
		return persona.Mention{}, false
	}
	seq := f.ByTime
	if h.untimed {
		seq = f.ByArrival
	}
	c := h.s.cited[seq] // every reference is cited (step, Restore)
	return persona.Mention{TurnID: c.TurnID, ReplyText: c.ReplyText}, true
}

// Step is DefaultLimits().Step.
func Step(j *persona.Judge, s *State, t *persona.Turn) (persona.Record, Outcome, error) {
	return Limits{}.Step(j, s, t)
}

// Step judges t, the next turn of the session whose state is s, and records
// it in s. The record is what j.Judge gives with s's History, plus, for a late
// turn (Outcome.Late), one more hedge sentence saying it was judged against
// the turns that arrived before it; Outcome.Change says what changed in s.
// Errors, each leaving s unchanged: a *LimitError when t is over a row limit
// of l (CheckRow) or would take s over l.MaxStateBytes, and
// persona.ErrUnknownCharacter (wrapped with the id). Zero fields of l are
// their defaults. Time and memory are linear in t, never in s.
func (l Limits) Step(j *persona.Judge, s *State, t *persona.Turn) (persona.Record, Outcome, error) {
	l = l.Resolved()
	if err := l.CheckRow(t); err != nil {
		return persona.Record{}, Outcome{}, err
	}
	at, timed := persona.SessionTime(t)
	p := s.plan(t, at, timed)
	if p.bytes > l.MaxStateBytes {
		return persona.Record{}, Outcome{}, &LimitError{Limit: LimitStateBytes, Max: l.MaxStateBytes, Got: p.bytes, TurnID: t.TurnID, SessionID: t.SessionID}
	}
	var out Outcome
	if timed && !s.untimed && s.latest != nil && at.Before(s.latestAt) {
		out.Late, out.After = true, s.latest.TurnID
	}
	rec, err := j.Judge(t, s.turns, s.History(t))
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
	out.Change = s.apply(t, at, timed, &p)
	return rec, out, nil
}

// plan is what adding a turn changes, computed before anything is.
type plan struct {
	names  []string // the turn's distinct entities whose firsts change
	fresh  []bool   // names[i] is new to the state (else its ByTime moves)
	refs   int      // references the turn gets
	drops  []int    // cited turns left without a reference
	latest bool     // the turn becomes the latest stamp
	bytes  int      // the state's Bytes after
}

// plan returns what adding t (created_at at, when timed) would change in s
// and s's size then, changing nothing. Linear in t's named_entities.
func (s *State) plan(t *persona.Turn, at time.Time, timed bool) plan {
	var p plan
	seq := s.turns
	nm, mb := len(s.mentions), s.mentionBytes
	var removed map[int]int // cited turn → references moving away from it
	persona.Distinct(t.NamedEntities, func(_ int, e string) bool {
		f := s.mentions[e]
		if f == nil {
			p.names, p.fresh = append(p.names, e), append(p.fresh, true)
			p.refs += 2
			nm++
			mb += mentionEntryBytes(quotedLen(e), seq, seq)
			return true
		}
		// ByArrival never changes: later arrivals come later. ByTime moves
		// to a timed turn with an earlier created_at (ties: the earlier
		// arrival, which is the one already there). An untimed first
		// mention stays: its session is untimed for good, and ByTime is
		// never read again (as in persona.Sessions).
		if c := s.cited[f.ByTime]; timed && c.CreatedAt != "" && at.Before(c.at) {
			p.names, p.fresh = append(p.names, e), append(p.fresh, false)
			p.refs++
			mb += digits(seq) - digits(f.ByTime)
			if removed == nil {
				removed = map[int]int{}
			}
			removed[f.ByTime]++
		}
		return true
	})
	nc, cb := len(s.cited), s.citedBytes
	for seq, n := range removed {
		if c := s.cited[seq]; c.refs == n {
			p.drops = append(p.drops, seq)
			nc--
			cb -= c.size
		}
	}
	slices.Sort(p.drops)
	if p.refs > 0 {
		nc++
		cb += citedEntryBytes(seq, t.TurnID, t.ReplyText, createdIf(t, timed))
	}
	lb := s.latestBytes
	p.latest = timed && (s.latest == nil || at.After(s.latestAt))
	if p.latest {
		lb = latestBytes(t.TurnID, t.CreatedAt)
	}
	p.bytes = stateBytes(s.turns+1, s.untimed || !timed, lb, nm, mb, nc, cb)
	return p
}

// createdIf is t's created_at when timed, else "" (a cited turn's CreatedAt).
func createdIf(t *persona.Turn, timed bool) string {
	if timed {
		return t.CreatedAt
	}
	return ""
}

// apply adds judged turn t to s as p planned and returns the change. The
// strings kept are copies: t's memory is not retained.
func (s *State) apply(t *persona.Turn, at time.Time, timed bool, p *plan) Change {
	seq := s.turns
	s.turns++
	if !timed {
		s.untimed = true
	}
	if p.latest {
		s.latest = &Stamp{TurnID: strings.Clone(t.TurnID), CreatedAt: strings.Clone(t.CreatedAt)}
		s.latestAt, s.latestBytes = at, latestBytes(t.TurnID, t.CreatedAt)
	}
	ch := Change{Seq: seq, Entities: p.names, Dropped: p.drops}
	if p.refs == 0 {
		return ch
	}
	c := &citedTurn{Cited: Cited{Seq: seq, TurnID: strings.Clone(t.TurnID), CreatedAt: strings.Clone(createdIf(t, timed))}, refs: p.refs}
	if timed {
		c.at = at
	}
	if t.ReplyText != nil {
		r := strings.Clone(*t.ReplyText)
		c.ReplyText = &r
	}
	s.addCited(c)
	ch.Added = true
	if s.mentions == nil {
		s.mentions = make(map[string]*firsts, len(p.names))
	}
	for i, e := range p.names {
		if p.fresh[i] {
			e = strings.Clone(e)
			p.names[i] = e
			s.addMention(e, Firsts{ByArrival: seq, ByTime: seq})
			continue
		}
		f := s.mentions[e]
		s.cited[f.ByTime].refs--
		s.mentionBytes += digits(seq) - digits(f.ByTime)
		f.ByTime = seq
	}
	for _, d := range p.drops {
		s.citedBytes -= s.cited[d].size
		delete(s.cited, d)
	}
	return ch
}

// addCited keeps c (refs set by the caller), counting its bytes.
func (s *State) addCited(c *citedTurn) {
	if s.cited == nil {
		s.cited = map[int]*citedTurn{}
	}
	c.size = citedEntryBytes(c.Seq, c.TurnID, c.ReplyText, c.CreatedAt)
	s.cited[c.Seq] = c
	s.citedBytes += c.size
}

// addMention keeps entity's firsts (references counted by the caller).
func (s *State) addMention(entity string, f Firsts) {
	if s.mentions == nil {
		s.mentions = map[string]*firsts{}
	}
	k := quotedLen(entity)
	s.mentions[entity] = &firsts{Firsts: f, keyLen: k}
	s.mentionBytes += mentionEntryBytes(k, f.ByArrival, f.ByTime)
}

// Restorer rebuilds a stored State from its parts (a store's rows): start
// with Restore, add each cited turn (Cite) before the mentions that refer to
// it (Mention), then take the State. Memory is what the state holds.
type Restorer struct {
	s   *State
	err error
}

// Restore starts a State with header h.
func Restore(h Header) *Restorer {
	r := &Restorer{s: &State{turns: h.Turns, untimed: h.Untimed}}
	if h.Turns < 0 {
		r.err = fmt.Errorf("live state: turns %d", h.Turns)
	}
	if h.Latest != nil {
		l := *h.Latest
		r.s.latest = &l
		r.s.latestAt, _ = persona.ParseCreatedAt(l.CreatedAt) // as written by Step: it parses
		r.s.latestBytes = latestBytes(l.TurnID, l.CreatedAt)
	}
	return r
}

// Cite adds cited turn c. A seq outside [0, Turns) or given twice is an
// error of State.
func (r *Restorer) Cite(c Cited) {
	if r.err != nil {
		return
	}
	if c.Seq < 0 || c.Seq >= r.s.turns || r.s.cited[c.Seq] != nil {
		r.err = fmt.Errorf("live state: cited turn %q at seq %d (turns %d, or given twice)", c.TurnID, c.Seq, r.s.turns)
		return
	}
	t := &citedTurn{Cited: c}
	if c.CreatedAt != "" {
		t.at, _ = persona.ParseCreatedAt(c.CreatedAt)
	}
	r.s.addCited(t)
}

// Mention adds entity's firsts. An entity given twice, or a seq that no
// Cite added, is an error of State.
func (r *Restorer) Mention(entity string, f Firsts) {
	if r.err != nil {
		return
	}
	a, b := r.s.cited[f.ByArrival], r.s.cited[f.ByTime]
	if a == nil || b == nil || r.s.mentions[entity] != nil {
		r.err = fmt.Errorf("live state: entity %q refers to turns %d and %d, not both cited (or is given twice)", entity, f.ByArrival, f.ByTime)
		return
	}
	a.refs++
	b.refs++
	r.s.addMention(entity, f)
}

// State returns the rebuilt State, or the first error: one of Cite's or
// Mention's, or a cited turn no mention refers to.
func (r *Restorer) State() (*State, error) {
	if r.err != nil {
		return nil, r.err
	}
	for _, c := range r.s.cited {
		if c.refs == 0 {
			return nil, fmt.Errorf("live state: cited turn %q at seq %d is referred to by no entity", c.TurnID, c.Seq)
		}
	}
	return r.s, nil
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
// nil, the decoded State for JSON ([]byte, State's stored form, either this
// version's or the earlier one's: UnmarshalJSON), the State itself for a
// *State. The error names what could not be read.
func Resume(prev any) (*State, error) {
	switch v := prev.(type) {
	case nil:
		return &State{}, nil
	case *State:
		return v, nil
	case []byte:
		var s State
		if err := s.UnmarshalJSON(v); err != nil {
			return nil, fmt.Errorf("stored session state: %w", err)
		}
		return &s, nil
	}
	return nil, fmt.Errorf("session state of type %T", prev)
}
