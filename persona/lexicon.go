package persona

import (
	"fmt"

	"evident/internal/multimatch"
)

// Lexicon is a compiled topic_lexicon: it finds the rows whose term occurs
// verbatim (as a byte substring, strings.Contains) in a text (spec persona.md
// rule 3). The terms are one Aho–Corasick automaton (internal/multimatch)
// built once by NewLexicon, so a lookup reads the text once: one automaton
// step per byte, plus one question per distinct lexicon row found when a
// forbidden predicate is asked, never a pass per row. A Lexicon is read-only
// after NewLexicon and safe for concurrent use.
type Lexicon struct {
	rows []LexiconRow
	m    *multimatch.Matcher // nil when no row has a term
}

// denseLexiconEntries caps a lexicon's dense transition table
// (multimatch.Matcher.Dense): 1 Mi entries, 4 MiB. The demo's 50 rows need
// 22 Ki (355 states × 63); a lexicon that does not fit keeps the sparse
// automaton, linear all the same and about half as fast per byte
// (BenchmarkLexiconByTerms).
const denseLexiconEntries = 1 << 20

// NewLexicon compiles rows, keeping their order. Rows with an empty term never
// match. The error names the limit when the terms hold more than
// multimatch.MaxBytes (2 GiB - 2) in all.
func NewLexicon(rows []LexiconRow) (*Lexicon, error) {
	m, err := multimatch.New(len(rows), func(i int) string { return rows[i].Term })
	if err != nil {
		return nil, fmt.Errorf("topic_lexicon: %w", err)
	}
	m.Dense(denseLexiconEntries)
	return &Lexicon{rows: rows, m: m}, nil
}

// Rows returns the lexicon rows in their order. The caller must not modify them.
func (l *Lexicon) Rows() []LexiconRow { return l.rows }

// Touch scans text once and returns the earliest row (0-based, in lexicon
// order) whose term occurs in text and the earliest such row for which
// forbidden(row) is true; -1 where none. forbidden may be nil (no row
// forbidden). The work is O(len(text)) automaton steps plus, when forbidden is
// not nil, at most one forbidden call per distinct row whose term occurs
// (multimatch.Matcher.EarliestWhere).
func (l *Lexicon) Touch(text string, forbidden func(row int) bool) (first, firstForbidden int) {
	if forbidden == nil {
		if r, ok := l.m.Earliest(text); ok {
			return r, -1
		}
		return -1, -1
	}
	return l.m.EarliestWhere(text, forbidden)
}
