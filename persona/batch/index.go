package batch

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/lanrat/extsort"

	"evident/persona"
)

// The first pass's index lives in external sorts, so that memory does not
// grow with the input (issue 2: "memory flat in file size").
//
// Pass 1 turns every row that decodes and names a known character into a
// candidate: its turn_id, position and line, and the session events it adds
// if it is a turn (a marker when it has no usable created_at, a mention per
// named entity that recall can ask about, the recall question it asks).
// Three sorts (github.com/lanrat/extsort: sorted runs of at most runSize
// records spilled to a temporary file, then merged) replace what were
// in-memory maps:
//
//  1. candidates by (turn_id, position): the first row of each id is a turn,
//     every later one a duplicate (spec persona.md "Output");
//  2. session events by (session, entity, mentions before questions,
//     position). Every candidate's events go in during pass 1, so this sort
//     runs alongside the reading; sort 1 then cancels the events of each
//     duplicate (a cancel sorts just before the event it cancels), so a
//     rejected row is never an earlier turn. After the session's markers say
//     which order applies, each entity's earliest mention in that order
//     answers each question about it that comes later (spec rule 4), which
//     is exactly what persona.Sessions answers in memory;
//  3. notes by position (a row pass 1 could not use, a duplicate with the
//     line of its first row, the recall source of a question), which pass 2
//     reads alongside the input.
//
// Memory is the sorters' runs (a few runSize batches at once), their merge
// buffers (64 KiB per run, at most 64 MiB, by the library) and one group's
// best mention, whatever the input's length; the temporary file holds the
// rest and is removed when the sort ends.

// runSize is the default number of records a sorter holds in memory before it
// sorts them and spills them to its temporary file.
const runSize = 1 << 14

// A candidate is a row that decoded and names a known character: a turn
// unless an earlier candidate has its turn_id.
type candidate struct {
	hash      uint64 // of id, so that most comparisons are one integer compare
	id        string
	pos, line int32
	events    []event // what the row adds to the session index; sort 1 keeps their keys only
}

// eventKind orders a session's events: markers first, then per entity its
// mentions before the questions about it.
type eventKind uint8

const (
	evUntimed  eventKind = iota // the session has a turn without a usable created_at
	evMention                   // the turn names entity
	evQuestion                  // the recall rule asks about entity
)

// An event is what one turn adds to its session's index.
type event struct {
	session string
	kind    eventKind
	entity  string // evMention, evQuestion
	pos     int32
	sec     int64 // created_at as Unix seconds and nanoseconds; both 0 when untimed
	nsec    int32
	turnID  string  // evMention: the mentioning turn
	reply   *string // evMention: its reply_text, which the recall evidence cites
	cancel  bool    // sort 1 found the row a duplicate: drop the next event, which has this key
}

// noteKind says what pass 2 must know about a row.
type noteKind uint8

const (
	noteUnusable  noteKind = iota // did not decode or names no known character: pass 2 decodes with every check
	noteDuplicate                 // repeats the turn_id of the turn at line
	noteSource                    // a turn whose recall question has an earlier mention
)

// A note is what pass 2 learns about the row at pos from the whole input.
type note struct {
	pos    int32
	kind   noteKind
	line   int32   // noteDuplicate: the line of the turn with the same id
	entity string  // noteSource: the entity asked about
	turnID string  // noteSource: the earliest earlier turn naming it
	reply  *string // noteSource: that turn's reply_text
}

// sorter is one external sort: put records (from one goroutine), close, then
// read out until it is closed, then wait for the error. A failed sort cancels
// the run's context, so that neither side blocks on the other.
type sorter[E any] struct {
	ctx  context.Context // the run's: put gives up when it is done
	in   chan E
	out  <-chan E
	err  error
	done chan struct{}
}

func newSorter[E any](ctx context.Context, cancel context.CancelCauseFunc, size int, dir string,
	enc func([]byte, E) []byte, dec func(*decoder) E, compare func(a, b E) int) *sorter[E] {
	s := &sorter[E]{ctx: ctx, in: make(chan E, 256), done: make(chan struct{})}
	toBytes := func(e E) ([]byte, error) { return enc(nil, e), nil }
	fromBytes := func(b []byte) (E, error) {
		d := decoder{b: b}
		e := dec(&d)
		return e, d.err
	}
	cfg := extsort.DefaultConfig()
	cfg.ChunkSize = size
	cfg.TempFilesDir = dir
	srt, out, errc := extsort.Generic(s.in, fromBytes, toBytes, compare, cfg)
	s.out = out
	go srt.Sort(ctx)
	go func() {
		defer close(s.done)
		for err := range errc {
			// A cancellation is the run's own (it ended early, or the
			// caller cancelled); only a failure of the sort is an error.
			if err != nil && s.err == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				s.err = fmt.Errorf("first-pass index: %w", err)
				cancel(s.err)
			}
		}
	}()
	return s
}

// put sends e to the sort, or drops it when the run was cancelled (the run
// then ends with the cancellation's error).
func (s *sorter[E]) put(e E) {
	select {
	case s.in <- e:
	case <-s.ctx.Done():
	}
}

// wait returns the sort's error once out is drained (or the run cancelled);
// nil when the sort only stopped because the run was cancelled.
func (s *sorter[E]) wait() error {
	<-s.done
	return s.err
}

// index builds the first pass's answers (see above) for one run.
type index struct {
	ctx        context.Context
	cancel     context.CancelCauseFunc
	judge      *persona.Judge
	keep       map[string]bool // entities recall can ask about
	seed       maphash.Seed
	candidates *sorter[candidate]
	events     *sorter[event]
	notes      *sorter[note]
	closed     bool  // candidates.in
	turns      int   // accepted turns, known after resolve
	next       *note // take's note read ahead
}

func newIndex(ctx context.Context, j *persona.Judge, size int, dir string) *index {
	if size <= 0 {
		size = runSize
	}
	ctx, cancel := context.WithCancelCause(ctx)
	ix := &index{ctx: ctx, cancel: cancel, judge: j, keep: j.RecallEntities(), seed: maphash.MakeSeed()}
	ix.candidates = newSorter(ctx, cancel, size, dir, appendCandidate, readCandidate, compareCandidates)
	ix.events = newSorter(ctx, cancel, size, dir, appendEvent, readEvent, compareEvents)
	ix.notes = newSorter(ctx, cancel, size, dir, appendNote, readNote, compareNotes)
	return ix
}

// close stops the sorts (when the run ends early) and frees the context.
func (ix *index) close() {
	ix.cancel(nil)
	if !ix.closed {
		close(ix.candidates.in)
		ix.closed = true
	}
}

// candidate builds what pass 1 keeps of turn t at pos (any goroutine).
func (ix *index) candidate(t *persona.Turn, pos, line int32) candidate {
	c := candidate{hash: maphash.String(ix.seed, t.TurnID), id: t.TurnID, pos: pos, line: line}
	at, timed := persona.SessionTime(t)
	ev := event{session: t.SessionID, pos: pos}
	if timed {
		ev.sec, ev.nsec = at.Unix(), int32(at.Nanosecond())
	} else {
		m := ev
		m.kind = evUntimed
		c.events = append(c.events, m)
	}
	persona.Distinct(t.NamedEntities, func(_ int, e string) bool {
		if ix.keep[e] {
			m := ev
			m.kind, m.entity, m.turnID, m.reply = evMention, e, t.TurnID, t.ReplyText
			c.events = append(c.events, m)
		}
		return true
	})
	if e, ok := ix.judge.RecallQuery(t); ok {
		q := ev
		q.kind, q.entity = evQuestion, e
		c.events = append(c.events, q)
	}
	c.own()
	return c
}

// own copies the strings c keeps into one new allocation. The turn's strings
// are substrings of its whole input line (ingest's one-pass decoder, issue
// 18), and the sorters hold up to runSize candidates and events in memory
// per run: keeping ids, sessions and entities as they are would keep every
// such line (about 500 bytes) alive, which nearly doubled the run's resident
// memory. One copy per candidate (two when it cites a reply) keeps only what
// the index needs.
func (c *candidate) own() {
	n := len(c.id)
	var reply *string
	for _, e := range c.events {
		n += len(e.session) + len(e.entity)
		if e.reply != nil && reply == nil {
			reply = e.reply
			n += len(*reply)
		}
	}
	var b strings.Builder
	b.Grow(n)
	take := func(s string) string {
		at := b.Len()
		b.WriteString(s)
		return b.String()[at:]
	}
	id := take(c.id)
	var ownReply *string
	if reply != nil {
		r := take(*reply)
		ownReply = &r
	}
	session := ""
	for i := range c.events {
		e := &c.events[i]
		if i == 0 {
			session = take(e.session)
		}
		e.session = session
		if e.entity != "" {
			e.entity = take(e.entity)
		}
		if e.turnID != "" {
			e.turnID = id
		}
		if e.reply != nil {
			e.reply = ownReply
		}
	}
	c.id = id
}

// unusable notes a row that pass 1 did not turn into a candidate.
func (ix *index) unusable(pos int32) { ix.notes.put(note{pos: pos, kind: noteUnusable}) }

// add queues a candidate and its events (one goroutine, the one that calls
// unusable).
func (ix *index) add(c candidate) {
	ix.candidates.put(c)
	for _, e := range c.events {
		ix.events.put(e)
	}
}

// resolve runs sorts 1 and 2 after the last candidate and closes the notes'
// input; then notes may be read.
func (ix *index) resolve() error {
	close(ix.candidates.in)
	ix.closed = true

	// Sort 1: the first candidate of each turn_id is a turn; a later one is
	// a duplicate, whose events are cancelled.
	var first *candidate
	for c := range ix.candidates.out {
		if first != nil && c.hash == first.hash && c.id == first.id {
			ix.notes.put(note{pos: c.pos, kind: noteDuplicate, line: first.line})
			for _, e := range c.events {
				e.cancel = true
				ix.events.put(e)
			}
			continue
		}
		first = &c
		ix.turns++
	}
	close(ix.events.in)
	if err := ix.candidates.wait(); err != nil {
		return err
	}

	// Sort 2: per session and entity, the earliest mention answers the
	// questions that come after it.
	var (
		session         string
		untimed         bool
		entity          string
		byPos, byTime   event
		mentioned, open bool // open: a session is being read
		cancelled       *event
	)
	for e := range ix.events.out {
		if e.cancel {
			cancelled = &e
			continue
		}
		if cancelled != nil {
			c := cancelled
			cancelled = nil
			if compareEventKeys(*c, e) == 0 {
				continue
			}
		}
		if !open || e.session != session {
			session, untimed, open = e.session, false, true
			entity, mentioned = "", false
		}
		if e.kind == evUntimed {
			untimed = true
			continue
		}
		if e.entity != entity {
			entity, mentioned = e.entity, false
		}
		switch e.kind {
		case evMention:
			if !mentioned {
				byPos, byTime, mentioned = e, e, true
			} else if earlierInTime(&e, &byTime) {
				byTime = e
			}
		case evQuestion:
			if !mentioned {
				continue
			}
			m := &byTime
			if untimed {
				m = &byPos
			}
			if untimed && m.pos < e.pos || !untimed && earlierInTime(m, &e) {
				ix.notes.put(note{pos: e.pos, kind: noteSource, entity: e.entity, turnID: m.turnID, reply: m.reply})
			}
		}
	}
	close(ix.notes.in)
	if err := ix.events.wait(); err != nil {
		return err
	}
	return context.Cause(ix.ctx)
}

// earlierInTime orders events of a timed session: created_at, then position.
func earlierInTime(a, b *event) bool {
	if c := cmp.Or(cmp.Compare(a.sec, b.sec), cmp.Compare(a.nsec, b.nsec)); c != 0 {
		return c < 0
	}
	return a.pos < b.pos
}

// take returns the notes for positions below end, in position order, from
// the sorted notes (pass 2's reader; one goroutine). ix.next holds the first
// note at or past end between calls.
func (ix *index) take(end int32) []note {
	var ns []note
	for {
		if ix.next == nil {
			n, ok := <-ix.notes.out
			if !ok {
				return ns
			}
			ix.next = &n
		}
		if ix.next.pos >= end {
			return ns
		}
		ns = append(ns, *ix.next)
		ix.next = nil
	}
}

// finish drains the notes (after pass 2, or when it stopped early) and
// returns the sort's error.
func (ix *index) finish() error {
	ix.cancel(nil)
	for range ix.notes.out {
	}
	return ix.notes.wait()
}

// chunkNotes are the notes of one chunk's rows, in position order; as a
// persona.History it answers the recall rule's question for those rows.
type chunkNotes []note

// at returns the note of the row at pos, or nil.
func (ns chunkNotes) at(pos int) *note {
	i, ok := slices.BinarySearchFunc(ns, int32(pos), func(n note, p int32) int { return cmp.Compare(n.pos, p) })
	if !ok {
		return nil
	}
	return &ns[i]
}

// Earliest implements persona.History for the turns of the chunk: it knows
// the answer to the one question the recall rule asks of each turn
// (Judge.RecallQuery), and answers any other entity with false.
func (ns chunkNotes) Earliest(_ *persona.Turn, pos int, entity string) (persona.Mention, bool) {
	n := ns.at(pos)
	if n == nil || n.kind != noteSource || n.entity != entity {
		return persona.Mention{}, false
	}
	return persona.Mention{TurnID: n.turnID, ReplyText: n.reply}, true
}

func compareCandidates(a, b candidate) int {
	return cmp.Or(cmp.Compare(a.hash, b.hash), strings.Compare(a.id, b.id), cmp.Compare(a.pos, b.pos))
}

// compareEventKeys orders events by their key: session, markers first, then
// entity, mentions before questions, position.
func compareEventKeys(a, b event) int {
	return cmp.Or(strings.Compare(a.session, b.session),
		cmp.Compare(min(a.kind, evMention), min(b.kind, evMention)), // markers first
		strings.Compare(a.entity, b.entity),
		cmp.Compare(a.kind, b.kind), // mentions before questions
		cmp.Compare(a.pos, b.pos))
}

// compareEvents orders events by key, a cancel just before the event it
// cancels.
func compareEvents(a, b event) int {
	if c := compareEventKeys(a, b); c != 0 {
		return c
	}
	switch {
	case a.cancel == b.cancel:
		return 0
	case a.cancel:
		return -1
	}
	return 1
}

func compareNotes(a, b note) int { return cmp.Compare(a.pos, b.pos) }

// Record encodings for the sorters' temporary file: varints and
// length-prefixed strings; a *string is a flag byte and, when set, a string.

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return appendString(append(b, 1), *s)
}

// appendEventKey writes the fields compareEvents reads.
func appendEventKey(b []byte, e event) []byte {
	b = appendString(b, e.session)
	b = append(b, byte(e.kind))
	b = appendString(b, e.entity)
	b = binary.AppendVarint(b, int64(e.pos))
	if e.cancel {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendEvent(b []byte, e event) []byte {
	b = appendEventKey(b, e)
	b = binary.AppendVarint(b, e.sec)
	b = binary.AppendVarint(b, int64(e.nsec))
	b = appendString(b, e.turnID)
	return appendOptString(b, e.reply)
}

func appendCandidate(b []byte, c candidate) []byte {
	b = binary.LittleEndian.AppendUint64(b, c.hash)
	b = appendString(b, c.id)
	b = binary.AppendVarint(b, int64(c.pos))
	b = binary.AppendVarint(b, int64(c.line))
	b = binary.AppendUvarint(b, uint64(len(c.events)))
	for _, e := range c.events {
		b = appendEventKey(b, e)
	}
	return b
}

func appendNote(b []byte, n note) []byte {
	b = binary.AppendVarint(b, int64(n.pos))
	b = append(b, byte(n.kind))
	b = binary.AppendVarint(b, int64(n.line))
	b = appendString(b, n.entity)
	b = appendString(b, n.turnID)
	return appendOptString(b, n.reply)
}

// decoder reads what the append functions wrote; the first error sticks and
// later reads return zero values.
type decoder struct {
	b   []byte
	err error
}

var errRecord = errors.New("corrupt record in temporary file")

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errRecord
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errRecord
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.err = errRecord
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errRecord
		d.b = nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) optString() *string {
	if d.byte() == 0 {
		return nil
	}
	s := d.string()
	return &s
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.err = errRecord
		d.b = nil
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func readEventKey(d *decoder) event {
	var e event
	e.session = d.string()
	e.kind = eventKind(d.byte())
	e.entity = d.string()
	e.pos = int32(d.varint())
	e.cancel = d.byte() == 1
	return e
}

func readEvent(d *decoder) event {
	e := readEventKey(d)
	e.sec = d.varint()
	e.nsec = int32(d.varint())
	e.turnID = d.string()
	e.reply = d.optString()
	return e
}

func readCandidate(d *decoder) candidate {
	var c candidate
	c.hash = d.uint64()
	c.id = d.string()
	c.pos = int32(d.varint())
	c.line = int32(d.varint())
	n := d.uvarint()
	if n > uint64(len(d.b)) { // every event key takes more than a byte
		d.err = errRecord
		return c
	}
	for range n {
		c.events = append(c.events, readEventKey(d))
	}
	return c
}

func readNote(d *decoder) note {
	var n note
	n.pos = int32(d.varint())
	n.kind = noteKind(d.byte())
	n.line = int32(d.varint())
	n.entity = d.string()
	n.turnID = d.string()
	n.reply = d.optString()
	return n
}
