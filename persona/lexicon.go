package persona

import "fmt"

// Lexicon is a compiled topic_lexicon: it finds the rows whose term occurs
// verbatim (as a byte substring, strings.Contains) in a text (spec persona.md
// rule 3). The terms are one matcher (an Aho–Corasick automaton, matcher.go)
// built once by NewLexicon, so a lookup reads the text once: one automaton
// step per byte, plus one visit per distinct lexicon row found when a
// forbidden predicate is asked, never a pass per row. A Lexicon is read-only
// after NewLexicon and safe for concurrent use.
type Lexicon struct {
	rows []LexiconRow
	m    *matcher // nil when no row has a term
}

// denseLexiconEntries caps a lexicon's dense transition table (matcher
// makeDense): 1 Mi entries, 4 MiB. The demo's 50 rows need 22 Ki (355
// states × 63); a lexicon that does not fit keeps the sparse automaton,
// linear all the same and about half as fast per byte
// (BenchmarkLexiconByTerms).
const denseLexiconEntries = 1 << 20

// NewLexicon compiles rows, keeping their order. Rows with an empty term never
// match. The error names the limit when the terms hold more than 2 GiB
// (2^31-2 bytes) in all, more than the automaton numbers.
func NewLexicon(rows []LexiconRow) (*Lexicon, error) {
	m, err := newMatcher(len(rows), func(i int) string { return rows[i].Term })
	if err != nil {
		return nil, fmt.Errorf("topic_lexicon: %w", err)
	}
	m.makeDense(denseLexiconEntries)
	return &Lexicon{rows: rows, m: m}, nil
}

// Rows returns the lexicon rows in their order. The caller must not modify them.
func (l *Lexicon) Rows() []LexiconRow { return l.rows }

// Touch scans text once and returns the earliest row (0-based, in lexicon
// order) whose term occurs in text and the earliest such row for which
// forbidden(row) is true; -1 where none. forbidden may be nil (no row
// forbidden). The work is O(len(text)) automaton steps plus, when forbidden is
// not nil, at most one forbidden call per distinct row whose term occurs.
func (l *Lexicon) Touch(text string, forbidden func(row int) bool) (first, firstForbidden int) {
	m := l.m
	if m == nil {
		return -1, -1
	}
	if forbidden == nil {
		if r, ok := m.earliest(text); ok {
			return r, -1
		}
		return -1, -1
	}
	best, bestF := int32(none), int32(none)
	var seen stateSet // states whose rows were asked about
	// best <= bestF always (a forbidden row found is a row found), so a
	// state whose least is not below bestF changes neither.
	if t := m.dense; t != nil {
		d, w, cls := t.d, t.width, &t.class
		o := 1
		for i := 0; i < len(text); i++ {
			o = int(d[o+int(cls[text[i]])])
			if l := d[o-1]; l < bestF {
				best = min(best, l)
				if bestF = m.forbiddenAt(int32(o/w), bestF, forbidden, &seen); bestF == 0 {
					break
				}
			}
		}
	} else {
		s := int32(0)
		for i := 0; i < len(text); i++ {
			s = m.step(s, text[i])
			if l := m.least[s]; l < bestF {
				best = min(best, l)
				if bestF = m.forbiddenAt(s, bestF, forbidden, &seen); bestF == 0 {
					break
				}
			}
		}
	}
	first, firstForbidden = -1, -1
	if best != none {
		first = int(best)
	}
	if bestF != none {
		firstForbidden = int(bestF)
	}
	return first, firstForbidden
}

// forbiddenAt returns the smallest of bestF and the patterns ending at state
// s (s's string and its suffixes, by the output links, longest first) for
// which forbidden is true. least only grows along the links, and a state in
// seen had the rest of its chain asked before, so each state's patterns are
// asked about at most once per text.
func (m *matcher) forbiddenAt(s, bestF int32, forbidden func(row int) bool, seen *stateSet) int32 {
	for o := m.out[s]; o != none && m.least[o] < bestF && seen.add(o); o = m.out[m.fail[o]] {
		for r := m.own[o]; r < bestF; r = m.same[r] {
			if forbidden(int(r)) {
				bestF = r
				break
			}
		}
	}
	return bestF
}

// stateSet is a set of automaton states: the first few inline (a reply
// touches one or two terms), then a map.
type stateSet struct {
	few  [4]int32
	n    int
	many map[int32]bool
}

// add puts s in the set and reports whether it was not there.
func (x *stateSet) add(s int32) bool {
	for _, t := range x.few[:x.n] {
		if t == s {
			return false
		}
	}
	if x.many[s] {
		return false
	}
	if x.n < len(x.few) {
		x.few[x.n] = s
		x.n++
		return true
	}
	if x.many == nil {
		x.many = map[int32]bool{}
	}
	x.many[s] = true
	return true
}
