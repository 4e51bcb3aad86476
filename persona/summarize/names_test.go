package summarize

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"evident/llm"
	"evident/persona"
)

// oldProperNouns is the proper-noun rule as first written (one
// strings.Contains per allowed text per mention, and per known name over the
// summary): the reference the one-pass rule is held to.
func oldProperNouns(s *Summarizer, c *persona.Record, card *persona.Card, t *persona.Turn) (string, bool) {
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

// TestProperNounsAgreesWithContainsPerText holds the one-pass proper-noun
// rule to oldProperNouns on random summaries, known names, cards (small ones
// and ones over smallCardBytes, read from a suffix array), turns and
// evidence over a small alphabet, so that names inside names, quotes inside
// allowed texts and near misses are common: the same first mention, or none.
// The seed is fixed.
func TestProperNounsAgreesWithContainsPerText(t *testing.T) {
	j, cards := seedJudge(t)
	rng := rand.New(rand.NewPCG(26, 10))
	pieces := []string{"하", "늘", "리", "안", "하늘", "「", "」", " ", "e\u0301", "x"}
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	words := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = word(1 + rng.IntN(size))
		}
		return out
	}
	for iter := range 600 {
		s, err := New(Config{Judge: j, Cards: cards, ExtraNames: words(rng.IntN(8), 3), Client: llm.Wrap(nil, llm.Policy{}), Provider: "openai", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		card := &persona.Card{CharacterID: fmt.Sprintf("C%d", iter), Name: word(2), CanonEntities: words(rng.IntN(4), 3)}
		roles := rng.IntN(4)
		if iter%5 == 0 {
			roles = 700 // over smallCardBytes: the suffix array
		}
		for range roles {
			card.EntityRoles = append(card.EntityRoles, persona.EntityRole{Role: word(3), Entity: word(3)})
		}
		c := &persona.Record{Summary: norm.NFC.String(word(rng.IntN(14))), RuleExpected: sp(word(2)), OffCanonEntities: words(rng.IntN(3), 2)}
		if rng.IntN(2) == 0 {
			c.TouchedTerm = sp(word(2))
		}
		for _, v := range words(rng.IntN(3), 5) {
			c.Evidence = append(c.Evidence, persona.Evidence{Source: persona.SourceTurn, Field: "reply_text", Value: v})
		}
		c.Evidence = append(c.Evidence, persona.Evidence{Source: persona.SourceTurn, Field: "reply_text", Agg: persona.AggCount, Value: word(3)})
		var turn *persona.Turn
		if rng.IntN(3) > 0 {
			turn = &persona.Turn{NamedEntities: words(rng.IntN(5), 3)}
		}
		if len(card.EntityRoles) == 700 && len(s.cardTextsOf(card).joined) <= smallCardBytes {
			t.Fatalf("iteration %d: a 700-role card is only %d bytes", iter, len(s.cardTextsOf(card).joined))
		}
		gotN, gotOK := s.properNouns(c, card, turn)
		wantN, wantOK := oldProperNouns(s, c, card, turn)
		if gotN != wantN || gotOK != wantOK {
			t.Fatalf("iteration %d: summary %q card %+v: (%q, %v), want (%q, %v)", iter, c.Summary, card.Name, gotN, gotOK, wantN, wantOK)
		}
	}
}

func sp(s string) *string { return &s }

// BenchmarkProperNouns is the proper-noun rule on one good rewrite of the
// seed's T-004471 over the number of known names (Config.ExtraNames) and
// the card's size (entity_roles): ns/op stays flat in both (one pass over
// the summary and the record's texts; the card's suffix array is built on
// its first record). The rule as first written took 173 ms a record with a
// million known names.
func BenchmarkProperNouns(b *testing.B) {
	j, cards := seedJudge(b)
	base := seedRecords(b, j)["T-004471"]
	rec := base.rec
	rec.Summary = goodSummary
	rec.Evidence = append(append([]persona.Evidence(nil), rec.Evidence...), persona.Evidence{Source: persona.SourceTurn, Field: "honorific_level", Value: "존댓말"})
	for _, names := range []int{0, 1_000_000} {
		extra := make([]string, names)
		for i := range extra {
			extra[i] = fmt.Sprintf("이름%07d", i)
		}
		s, err := New(Config{Judge: j, Cards: cards, ExtraNames: extra, Client: llm.Wrap(nil, llm.Policy{}), Provider: "openai", Model: "m"})
		if err != nil {
			b.Fatal(err)
		}
		card, _ := j.Card(rec.CharacterID)
		for _, roles := range []int{len(card.EntityRoles), 200_000} {
			big := *card
			big.CharacterID = fmt.Sprintf("%s-%d", card.CharacterID, roles)
			for i := len(big.EntityRoles); i < roles; i++ {
				big.EntityRoles = append(big.EntityRoles, persona.EntityRole{Role: fmt.Sprintf("역할%06d", i), Entity: fmt.Sprintf("인물%06d", i)})
			}
			if n, ok := s.properNouns(&rec, &big, base.cx.Turn); !ok {
				b.Fatalf("the good rewrite fails the rule at %q", n)
			}
			b.Run(fmt.Sprintf("names=%d/roles=%d", len(s.names), roles), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					s.properNouns(&rec, &big, base.cx.Turn)
				}
			})
		}
	}
}
