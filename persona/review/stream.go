package review

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"slices"
	"strconv"
	"unicode/utf8"

	"evident/persona"
	"evident/persona/speech"
)

// Accumulator forms of the three queues (issue 13: the review screen at a
// million turns): records are added one at a time, in run order, and the
// memory held is bounded by what a queue shows — SampleSize items per
// sample, one NameGroup per (character, name) with NameExamples example
// turns, one Candidate per proposed ending with up to MaxWords words — not
// by the run. ForbiddenSample, OffCanonNames and ReviewEndings are thin
// wrappers over them, so the batch and the streaming results agree by
// construction.
//
// Each Add reads only the record's TurnID, CharacterID, Verdict and
// OffCanonEntities (what store.EachQueueRow fills in).

// NameExamples is how many example turns a NameGroup keeps (the first ones
// of the run that list the name).
const NameExamples = 3

// MaxWords caps Candidate.Words: the first MaxWords distinct 어절 that
// give the ending are kept (Sentences still counts every one).
const MaxWords = 20

// Item is one record a queue shows: its position in the run (0-based, the
// order of Add; store seq) and its turn_id.
type Item struct {
	Pos    int    `json:"pos"`
	TurnID string `json:"turn_id"`
}

// sampler keeps the n items with the smallest sha256("{run id}:{turn_id}")
// digests, ties to the earlier position: Sample's rule in one pass, with
// memory n. Items are kept sorted by (digest, pos).
type sampler[T any] struct {
	n      int
	prefix []byte
	buf    []byte
	items  []sampled[T]
}

type sampled[T any] struct {
	digest [sha256.Size]byte
	pos    int
	v      T
}

func newSampler[T any](runID int64, n int) sampler[T] {
	return sampler[T]{n: n, prefix: []byte(strconv.FormatInt(runID, 10) + ":")}
}

func (s *sampler[T]) less(a, b *sampled[T]) bool {
	if c := bytes.Compare(a.digest[:], b.digest[:]); c != 0 {
		return c < 0
	}
	return a.pos < b.pos
}

// offer considers an item; v is built only when it is kept.
func (s *sampler[T]) offer(pos int, id string, v func() T) {
	if s.n <= 0 {
		return
	}
	s.buf = append(append(s.buf[:0], s.prefix...), id...)
	it := sampled[T]{digest: sha256.Sum256(s.buf), pos: pos}
	if len(s.items) == s.n && !s.less(&it, &s.items[len(s.items)-1]) {
		return
	}
	it.v = v()
	i, _ := slices.BinarySearchFunc(s.items, &it, func(e sampled[T], t *sampled[T]) int {
		if s.less(&e, t) {
			return -1
		}
		return 1
	})
	s.items = slices.Insert(s.items, i, it)
	if len(s.items) > s.n {
		s.items = s.items[:s.n]
	}
}

// inRunOrder returns the kept items by position.
func (s *sampler[T]) inRunOrder() []sampled[T] {
	out := slices.Clone(s.items)
	slices.SortFunc(out, func(a, b sampled[T]) int { return cmp.Compare(a.pos, b.pos) })
	return out
}

// ForbiddenQueue accumulates the forbidden-topic queue (ForbiddenSample).
type ForbiddenQueue struct {
	pos, total int
	s          sampler[Item]
}

// NewForbiddenQueue starts the forbidden-topic queue of run runID.
func NewForbiddenQueue(runID int64) *ForbiddenQueue {
	return &ForbiddenQueue{s: newSampler[Item](runID, SampleSize)}
}

// Add reads the next record of the run.
func (q *ForbiddenQueue) Add(r *persona.Record) {
	pos := q.pos
	q.pos++
	if r.Verdict != persona.ForbiddenTopic {
		return
	}
	q.total++
	q.s.offer(pos, r.TurnID, func() Item { return Item{Pos: pos, TurnID: r.TurnID} })
}

// ForbiddenResult is the forbidden-topic queue: how many records have the
// verdict 금지 소재 접촉 and the up to SampleSize sampled (Sample's rule), in
// run order.
type ForbiddenResult struct {
	Total  int    `json:"total"`
	Sample []Item `json:"sample"`
}

// Result returns the queue of the records added so far.
func (q *ForbiddenQueue) Result() ForbiddenResult {
	out := ForbiddenResult{Total: q.total, Sample: []Item{}}
	for _, it := range q.s.inRunOrder() {
		out.Sample = append(out.Sample, it.v)
	}
	return out
}

// NameQueue accumulates the off-canon names queue (OffCanonNames).
type NameQueue struct {
	pos, turns int
	keepTurns  bool // the batch form: NameGroup.Turns lists every position
	index      map[string]int
	groups     []NameGroup
	last       []int // per group, the last position counted
}

// NewNameQueue starts the off-canon names queue (bounded: NameGroup.Turns
// stays nil; Count, ByVerdict and Examples are kept).
func NewNameQueue() *NameQueue { return &NameQueue{index: map[string]int{}} }

// Add reads the next record of the run.
func (q *NameQueue) Add(r *persona.Record) {
	pos := q.pos
	q.pos++
	if len(r.OffCanonEntities) > 0 {
		q.turns++
	}
	for _, n := range r.OffCanonEntities {
		k := OffCanonKey(r.CharacterID, n)
		g, ok := q.index[k]
		if !ok {
			g = len(q.groups)
			q.index[k] = g
			q.groups = append(q.groups, NameGroup{CharacterID: r.CharacterID, Name: n, ByVerdict: map[persona.Verdict]int{}})
			q.last = append(q.last, -1)
		}
		if q.last[g] == pos { // the name listed twice in one record
			continue
		}
		q.last[g] = pos
		ng := &q.groups[g]
		ng.Count++
		ng.ByVerdict[r.Verdict]++
		if len(ng.Examples) < NameExamples {
			ng.Examples = append(ng.Examples, Item{Pos: pos, TurnID: r.TurnID})
		}
		if q.keepTurns {
			ng.Turns = append(ng.Turns, pos)
		}
	}
}

// NameResult is the off-canon names queue: the groups, most turns first
// (ties: first appearance in the run), and how many records list at least
// one off-canon name.
type NameResult struct {
	Groups []NameGroup `json:"groups"`
	Turns  int         `json:"turns"`
}

// Result returns the queue of the records added so far (the groups are
// copies).
func (q *NameQueue) Result() NameResult {
	out := NameResult{Groups: slices.Clone(q.groups), Turns: q.turns}
	if out.Groups == nil {
		out.Groups = []NameGroup{}
	}
	slices.SortStableFunc(out.Groups, func(a, b NameGroup) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

// EndingQueue accumulates the endings queue (ReviewEndings) with profile p.
type EndingQueue struct {
	p       *speech.Profile
	pos     int
	keepAll bool // the batch form: every Mixed and Unknown is kept

	mixed, unknown     int
	mixedS             sampler[Mixed]
	unknownS           sampler[Unknown]
	allMixed           []Mixed
	allUnknown         []Unknown
	cands              map[string]*tally
	order, finalsOrder []string // first seen in a mixed reply; first seen in an unknown-final one
	fromFinals         map[string]bool
	flips              map[string]int // per proposed form, the 반말 replies it would flip
	// with caches the profile with one candidate added; a nil entry marks
	// a form that is no candidate (wrong shape or already listed).
	with map[string]*speech.Profile
}

type tally struct {
	c     Candidate
	seen  map[string]bool
	mixed bool // proposed by a mixed reply's sentence (ranks before unknown-final ones)
}

// NewEndingQueue starts the endings queue of run runID read with profile p
// (the run's, ProfileOf).
func NewEndingQueue(runID int64, p *speech.Profile) *EndingQueue {
	return &EndingQueue{p: p, mixedS: newSampler[Mixed](runID, SampleSize), unknownS: newSampler[Unknown](runID, SampleSize),
		cands: map[string]*tally{}, fromFinals: map[string]bool{}, flips: map[string]int{}, with: map[string]*speech.Profile{}}
}

// proposed lists the candidate forms derived from word w.
func (q *EndingQueue) proposed(w string) []string {
	var es []string
	for _, e := range forms(w) {
		p, seen := q.with[e]
		if !seen {
			if PoliteShape(e) && !HasEnding(q.p, e) {
				p = q.p.With([]string{e}, nil)
			}
			q.with[e] = p
		}
		if p != nil && p.Ending(w) != "" {
			es = append(es, e)
		}
	}
	return es
}

func (q *EndingQueue) get(e string) *tally {
	t := q.cands[e]
	if t == nil {
		t = &tally{c: Candidate{Ending: e}, seen: map[string]bool{}}
		q.cands[e] = t
	}
	return t
}

// Add reads the next record of the run; reply is its turn's reply_text,
// ok false when null or unknown (the record is then skipped, as
// ReviewEndings skips it).
func (q *EndingQueue) Add(r *persona.Record, reply string, ok bool) {
	pos := q.pos
	q.pos++
	if !ok {
		return
	}
	rd := q.p.Read(reply)
	switch {
	case rd.Style() == speech.Banmal:
		// A 반말 reply flips when one of its last words gives the
		// candidate and the profile with the candidate added reads it
		// as 존댓말 (a noun exception still wins): counted for every
		// form now, kept for the forms that turn out candidates.
		var flipped []string
		for _, s := range rd.Sentences {
			for _, e := range q.proposed(s.LastWord) {
				if !slices.Contains(flipped, e) {
					flipped = append(flipped, e)
					q.flips[e]++
				}
			}
		}
		last := rd.Sentences[len(rd.Sentences)-1].LastWord
		if PlainFinal(last) {
			return
		}
		q.unknown++
		u := Unknown{Pos: pos, TurnID: r.TurnID, Reading: rd, Word: last, Candidates: q.proposed(last)}
		for _, e := range u.Candidates {
			t := q.get(e)
			t.c.Finals++
			if !t.mixed && !q.fromFinals[e] {
				q.fromFinals[e] = true
				q.finalsOrder = append(q.finalsOrder, e)
			}
		}
		q.unknownS.offer(pos, r.TurnID, func() Unknown { return u })
		if q.keepAll {
			q.allUnknown = append(q.allUnknown, u)
		}
		return
	case rd.Polite == 0 || rd.Polite == len(rd.Sentences):
		return
	}
	q.mixed++
	m := Mixed{Pos: pos, TurnID: r.TurnID, Reading: rd}
	q.mixedS.offer(pos, r.TurnID, func() Mixed { return m })
	if q.keepAll {
		q.allMixed = append(q.allMixed, m)
	}
	for _, s := range rd.Sentences {
		if s.Polite() {
			continue
		}
		for _, e := range q.proposed(s.LastWord) {
			t := q.get(e)
			if !t.mixed {
				t.mixed = true
				q.order = append(q.order, e)
			}
			t.c.Sentences++
			if len(t.c.Words) < MaxWords && !t.seen[s.LastWord] {
				t.seen[s.LastWord] = true
				t.c.Words = append(t.c.Words, s.LastWord)
			}
		}
	}
}

// EndingResult is the endings queue in bounded form: how many mixed and
// unknown-final replies the run has, the up to SampleSize of each shown
// (Sample's rule, in run order; Unknown.Candidates in the order of
// Candidates) and the ranked candidates (EndingReview.Candidates).
type EndingResult struct {
	Mixed         int         `json:"mixed"`
	MixedSample   []Mixed     `json:"mixed_sample"`
	Unknown       int         `json:"unknown"`
	UnknownSample []Unknown   `json:"unknown_sample"`
	Candidates    []Candidate `json:"candidates"`
}

// Result returns the queue of the records added so far.
func (q *EndingQueue) Result() EndingResult {
	out := EndingResult{Mixed: q.mixed, Unknown: q.unknown, MixedSample: []Mixed{}, UnknownSample: []Unknown{}, Candidates: []Candidate{}}
	order := slices.Clone(q.order)
	for _, e := range q.finalsOrder {
		if !q.cands[e].mixed {
			order = append(order, e)
		}
	}
	for _, e := range order {
		c := q.cands[e].c
		c.Words = slices.Clone(c.Words)
		c.Flips = q.flips[e]
		out.Candidates = append(out.Candidates, c)
	}
	slices.SortStableFunc(out.Candidates, func(a, b Candidate) int {
		if c := cmp.Compare(b.Sentences, a.Sentences); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Flips, b.Flips); c != 0 {
			return c
		}
		return cmp.Compare(utf8.RuneCountInString(b.Ending), utf8.RuneCountInString(a.Ending))
	})
	for _, it := range q.mixedS.inRunOrder() {
		out.MixedSample = append(out.MixedSample, it.v)
	}
	for _, it := range q.unknownS.inRunOrder() {
		out.UnknownSample = append(out.UnknownSample, out.ranked(it.v))
	}
	return out
}

// ranked returns u with its candidates in the order of r.Candidates.
func (r *EndingResult) ranked(u Unknown) Unknown {
	rank := func(e string) int {
		return slices.IndexFunc(r.Candidates, func(c Candidate) bool { return c.Ending == e })
	}
	u.Candidates = slices.Clone(u.Candidates)
	slices.SortStableFunc(u.Candidates, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	return u
}

// Queues is the three queues of one run in bounded form, what the screen
// shows and the store keeps (runstore.Queues). Endings is nil when the run
// has no profile to read with (no stored dataset, or its profile could not
// be rebuilt).
type Queues struct {
	Forbidden ForbiddenResult `json:"forbidden"`
	Names     NameResult      `json:"names"`
	Endings   *EndingResult   `json:"endings,omitempty"`
}

// Builder accumulates the three queues in one pass over a run.
type Builder struct {
	f *ForbiddenQueue
	n *NameQueue
	e *EndingQueue
}

// NewBuilder starts the queues of run runID; p nil builds no endings queue.
func NewBuilder(runID int64, p *speech.Profile) *Builder {
	b := &Builder{f: NewForbiddenQueue(runID), n: NewNameQueue()}
	if p != nil {
		b.e = NewEndingQueue(runID, p)
	}
	return b
}

// Add reads the next record of the run with its turn's reply_text (ok
// false when null or unknown).
func (b *Builder) Add(r *persona.Record, reply string, ok bool) {
	b.f.Add(r)
	b.n.Add(r)
	if b.e != nil {
		b.e.Add(r, reply, ok)
	}
}

// Result returns the queues of the records added so far.
func (b *Builder) Result() Queues {
	q := Queues{Forbidden: b.f.Result(), Names: b.n.Result()}
	if b.e != nil {
		e := b.e.Result()
		q.Endings = &e
	}
	return q
}
