package summarize

import (
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"evident/persona"
)

// minNameRunes is the shortest known name the proper-noun rule looks for in
// a summary: one-syllable names would match inside ordinary words.
const minNameRunes = 2

// knownNames collects the names the proper-noun rule knows from cards, the
// lexicon and extra (package doc), NFC, without repeats, longest first.
func knownNames(j *persona.Judge, cards []persona.Card, extra []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(norm.NFC.String(s))
		if utf8.RuneCountInString(s) < minNameRunes || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	for _, c := range cards {
		add(c.Name)
		for _, e := range c.CanonEntities {
			add(e)
		}
		for _, er := range c.EntityRoles {
			add(er.Entity)
		}
	}
	for _, r := range j.Lexicon().Rows() {
		add(r.Term)
	}
	for _, e := range extra {
		add(e)
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// quoted returns the spans of s inside 「」 (outermost pairs; an unclosed
// quote runs to the end), trimmed, without empty ones.
func quoted(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '「':
			if depth == 0 {
				start = i + len("「")
			}
			depth++
		case r == '」' && depth > 0:
			depth--
			if depth == 0 {
				if q := strings.TrimSpace(s[start:i]); q != "" {
					out = append(out, q)
				}
			}
		}
	}
	if depth > 0 {
		if q := strings.TrimSpace(s[start:]); q != "" {
			out = append(out, q)
		}
	}
	return out
}

// properNouns applies the proper-noun rule to the candidate record c of card
// and turn t: every 「」 span and every known name in the summary must occur
// in an allowed text. It returns the first mention that does not.
func (s *Summarizer) properNouns(c *persona.Record, card *persona.Card, t *persona.Turn) (string, bool) {
	var allowed []string
	for _, e := range c.Evidence {
		if v, ok := e.Value.(string); ok && e.Agg == "" {
			allowed = append(allowed, v)
		}
	}
	if card != nil {
		allowed = append(allowed, card.Name)
		allowed = append(allowed, card.CanonEntities...)
		for _, er := range card.EntityRoles {
			allowed = append(allowed, er.Role, er.Entity)
		}
	}
	for _, p := range []*string{c.RuleExpected, c.RuleObserved, c.TouchedTerm, c.TouchedTopic, c.RecallTarget, c.RecallSourceTurn} {
		if p != nil {
			allowed = append(allowed, *p)
		}
	}
	allowed = append(allowed, c.OffCanonEntities...)
	ok := func(m string) bool {
		for _, a := range allowed {
			if strings.Contains(norm.NFC.String(a), m) {
				return true
			}
		}
		return false
	}

	sum := c.Summary
	for _, q := range quoted(sum) {
		if !ok(q) {
			return q, false
		}
	}
	names := s.names
	if t != nil {
		for _, n := range t.NamedEntities {
			if n = strings.TrimSpace(norm.NFC.String(n)); utf8.RuneCountInString(n) >= minNameRunes {
				names = append(names[:len(names):len(names)], n)
			}
		}
	}
	for _, n := range names {
		if strings.Contains(sum, n) && !ok(n) {
			return n, false
		}
	}
	return "", true
}
