package persona

import (
	"strings"
	"unicode/utf8"

	"evident/persona/speech"
)

// Lexicon is a compiled topic_lexicon: it finds every row whose term occurs
// verbatim in a text (spec persona.md rule 3). Terms are indexed by their first
// rune (a direct table for Hangul syllables), so a lookup costs one table
// probe per rune of the text plus a prefix comparison per candidate term.
// A Lexicon is read-only after NewLexicon and safe for concurrent use.
type Lexicon struct {
	rows   []LexiconRow
	hangul [][]int32        // by first syllable - 0xAC00: row indices in row order
	other  map[rune][]int32 // first runes outside the syllable block
}

// NewLexicon compiles rows, keeping their order. Rows with an empty term never
// match.
func NewLexicon(rows []LexiconRow) *Lexicon {
	l := &Lexicon{rows: rows, hangul: make([][]int32, 0xD7A4-0xAC00), other: map[rune][]int32{}}
	for i, row := range rows {
		r, n := utf8.DecodeRuneInString(row.Term)
		if n == 0 {
			continue
		}
		if speech.IsSyllable(r) {
			l.hangul[r-0xAC00] = append(l.hangul[r-0xAC00], int32(i))
		} else {
			l.other[r] = append(l.other[r], int32(i))
		}
	}
	return l
}

// Rows returns the lexicon rows in their order. The caller must not modify them.
func (l *Lexicon) Rows() []LexiconRow { return l.rows }

// Touch scans text once and returns the earliest matching row overall and the
// earliest matching row for which forbidden(row) is true; -1 where none.
// forbidden may be nil (no row forbidden).
func (l *Lexicon) Touch(text string, forbidden func(row int) bool) (first, firstForbidden int) {
	first, firstForbidden = -1, -1
	for i, r := range text {
		var cands []int32
		if speech.IsSyllable(r) {
			cands = l.hangul[r-0xAC00]
		} else if len(l.other) > 0 {
			cands = l.other[r]
		}
		for _, c := range cands {
			row := int(c)
			doneFirst := first >= 0 && row >= first
			doneForbidden := forbidden == nil || firstForbidden >= 0 && row >= firstForbidden
			if doneFirst && doneForbidden {
				break // candidates are in row order: no later one improves either answer
			}
			if !strings.HasPrefix(text[i:], l.rows[row].Term) {
				continue
			}
			if first < 0 || row < first {
				first = row
			}
			if forbidden != nil && (firstForbidden < 0 || row < firstForbidden) && forbidden(row) {
				firstForbidden = row
			}
		}
	}
	return first, firstForbidden
}
