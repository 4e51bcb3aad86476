package summarize

import (
	"index/suffixarray"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"evident/internal/multimatch"
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
// in an allowed text. It returns the first mention that does not: the first
// such span, else the first such name in s.names order, then the turn's
// named_entities order.
//
// The work is linear in the record, whatever the number of known names or
// the card's size: the known names are one automaton (New), the turn's
// named_entities another, each read over the summary once; the mentions found
// are one more automaton read once over the record's allowed texts (each
// NFC-normalised once) and a small card's; a card whose texts are larger than
// smallCardBytes answers each mention left from its suffix array
// (cardTextsOf), in O(len(mention) × log(card bytes)). One strings.Contains
// per allowed text per mention, and per known name over the summary, cost
// mentions × texts and names × summary (173 ms a record for a million known
// names).
func (s *Summarizer) properNouns(c *persona.Record, card *persona.Card, t *persona.Turn) (string, bool) {
	sum := c.Summary
	quotes := quoted(sum)
	var nes []string
	if t != nil {
		for _, n := range t.NamedEntities {
			if n = strings.TrimSpace(norm.NFC.String(n)); utf8.RuneCountInString(n) >= minNameRunes {
				nes = append(nes, n)
			}
		}
	}
	name := func(i int) string {
		if i < len(s.names) {
			return s.names[i]
		}
		return nes[i-len(s.names)]
	}
	// The names in the summary, by their index in s.names then nes.
	var found []int
	s.nameM.Each(sum, func(i int) bool { found = append(found, i); return true })
	neM, err := multimatch.New(len(nes), func(i int) string { return nes[i] })
	if err != nil {
		return "named_entities: " + err.Error(), false
	}
	neM.Each(sum, func(i int) bool { found = append(found, len(s.names)+i); return true })
	slices.Sort(found)

	// The distinct mentions.
	at := map[string]int{}
	var ms []string
	mention := func(m string) {
		if _, ok := at[m]; !ok {
			at[m] = len(ms)
			ms = append(ms, m)
		}
	}
	for _, q := range quotes {
		mention(q)
	}
	for _, i := range found {
		mention(name(i))
	}
	if len(ms) == 0 {
		return "", true
	}

	// The record's allowed texts, NFC, each followed by a byte no valid
	// UTF-8 mention holds.
	var texts []string
	for _, e := range c.Evidence {
		if v, ok := e.Value.(string); ok && e.Agg == "" {
			texts = append(texts, norm.NFC.String(v))
		}
	}
	for _, p := range []*string{c.RuleExpected, c.RuleObserved, c.TouchedTerm, c.TouchedTopic, c.RecallTarget, c.RecallSourceTurn} {
		if p != nil {
			texts = append(texts, norm.NFC.String(*p))
		}
	}
	for _, e := range c.OffCanonEntities {
		texts = append(texts, norm.NFC.String(e))
	}
	var ct *cardTexts
	if card != nil {
		ct = s.cardTextsOf(card)
	}
	var b strings.Builder
	for _, a := range texts {
		b.WriteString(a)
		b.WriteByte(textSep)
	}
	if ct != nil && ct.sa == nil {
		b.WriteString(ct.joined)
	}
	allowed := make([]bool, len(ms))
	mm, err := multimatch.New(len(ms), func(i int) string { return ms[i] })
	if err != nil {
		return "summary: " + err.Error(), false
	}
	mm.Each(b.String(), func(i int) bool { allowed[i] = true; return true })
	for i, m := range ms {
		switch {
		case !utf8.ValidString(m):
			// Only a mention that is not valid UTF-8 can hold textSep and
			// match across two texts: it is read text by text (the readers
			// never give such strings).
			allowed[i] = slices.ContainsFunc(texts, func(a string) bool { return strings.Contains(a, m) }) ||
				ct != nil && slices.ContainsFunc(ct.texts, func(a string) bool { return strings.Contains(a, m) })
		case !allowed[i] && ct != nil && ct.sa != nil:
			allowed[i] = len(ct.sa.Lookup([]byte(m), 1)) > 0
		}
	}

	for _, q := range quotes {
		if !allowed[at[q]] {
			return q, false
		}
	}
	for _, i := range found {
		if n := name(i); !allowed[at[n]] {
			return n, false
		}
	}
	return "", true
}

// textSep follows each allowed text where they are joined: 0xFF is in no
// valid UTF-8 string, so a valid mention never matches across two texts.
const textSep = 0xFF

// smallCardBytes is the largest card (its joined allowed texts) read with
// each record's texts; a larger one gets a suffix array, built once.
const smallCardBytes = 4 << 10

// cardTexts is what the proper-noun rule allows from a card: its name,
// canon_entities and entity_roles roles and entities, NFC.
type cardTexts struct {
	texts  []string
	joined string             // texts, each followed by textSep
	sa     *suffixarray.Index // of joined, when it is over smallCardBytes
	once   sync.Once
}

// cardTextsOf returns card's allowed texts, built on the first record of
// the card and kept for the Summarizer's life (one entry per card of the
// judge).
func (s *Summarizer) cardTextsOf(card *persona.Card) *cardTexts {
	v, _ := s.cardTexts.LoadOrStore(card.CharacterID, &cardTexts{})
	ct := v.(*cardTexts)
	ct.once.Do(func() {
		add := func(a string) { ct.texts = append(ct.texts, norm.NFC.String(a)) }
		add(card.Name)
		for _, e := range card.CanonEntities {
			add(e)
		}
		for _, er := range card.EntityRoles {
			add(er.Role)
			add(er.Entity)
		}
		var b strings.Builder
		for _, a := range ct.texts {
			b.WriteString(a)
			b.WriteByte(textSep)
		}
		ct.joined = b.String()
		if len(ct.joined) > smallCardBytes {
			ct.sa = suffixarray.New([]byte(ct.joined))
		}
	})
	return ct
}
