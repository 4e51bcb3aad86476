package persona

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"evident/persona/speech"
)

// The check 9 of before the citer, kept as the reference the citer is held
// to: it built every candidate value of a cell for each evidence row.

// oldCited reports whether evidence row e equals a cell it may cite: a cell of
// the turn (or of the recall source turn src), of the turn's card, or of a
// lexicon row. A list cell is oldCited one element at a time (entity_roles: a
// role or an entity); agg count is recomputed (sentences of a text cell,
// elements of a list cell, rows of the lexicon).
func oldCited(e Evidence, t, src *Turn, c *Card, lex []LexiconRow, p *speech.Profile) (bool, string) {
	if e.Agg != "" {
		if e.Agg != AggCount {
			return false, fmt.Sprintf("agg %q over a non-numeric column cannot be recomputed", e.Agg)
		}
		n, ok := number(e.Value)
		if !ok {
			return false, "agg count needs a number"
		}
		want := -1
		switch e.Source {
		case SourceTurn:
			want = oldCountCell(oldTurnCells(t, e.Field), p)
		case SourceCard:
			want = oldCountCell(oldCardCells(c, e.Field), p)
		case SourceLexicon:
			want = len(lex)
		}
		if want < 0 || n != float64(want) {
			return false, fmt.Sprintf("count is %v, recomputed %d", e.Value, want)
		}
		return true, ""
	}
	var cands [][]any
	switch e.Source {
	case SourceTurn:
		cands = append(cands, oldTurnCells(t, e.Field).values)
		if src != nil {
			cands = append(cands, oldTurnCells(src, e.Field).values)
		}
	case SourceCard:
		cands = append(cands, oldCardCells(c, e.Field).values)
	case SourceLexicon:
		for _, row := range lex {
			switch e.Field {
			case "term":
				cands = append(cands, []any{row.Term})
			case "topic":
				cands = append(cands, []any{row.Topic})
			}
		}
	}
	for _, vs := range cands {
		for _, v := range vs {
			if SameEvidenceValue(e.Value, v) {
				return true, ""
			}
		}
	}
	return false, fmt.Sprintf("value %v is not in the cited cell", e.Value)
}

// oldCells are the values one cell may be oldCited as, and how to count it.
type oldCells struct {
	values []any
	text   *string // a text cell (count = sentences)
	list   int     // elements of a list cell, -1 when not a list
}

func oldCountCell(c oldCells, p *speech.Profile) int {
	switch {
	case c.text != nil:
		return p.Count(*c.text) // the judge's profile counts as its Read did
	case c.list >= 0:
		return c.list
	}
	return -1
}

func oldTextCell(s *string) oldCells {
	return oldCells{values: []any{cell(s)}, text: s, list: -1}
}

func oldListCell(l []string, null bool) oldCells {
	if null {
		return oldCells{values: []any{nil}, list: -1}
	}
	vs := make([]any, len(l))
	for i, s := range l {
		vs[i] = s
	}
	return oldCells{values: vs, list: len(l)}
}

func oldOptional(s string) oldCells {
	if s == "" {
		return oldCells{values: []any{nil}, list: -1}
	}
	return oldTextCell(&s)
}

func oldTurnCells(t *Turn, field string) oldCells {
	switch field {
	case "turn_id":
		return oldTextCell(&t.TurnID)
	case "session_id":
		return oldTextCell(&t.SessionID)
	case "character_id":
		return oldTextCell(&t.CharacterID)
	case "model_id":
		return oldTextCell(&t.ModelID)
	case "user_message":
		return oldTextCell(t.UserMessage)
	case "reply_text":
		return oldTextCell(t.ReplyText)
	case "first_person":
		return oldTextCell(t.FirstPerson)
	case "honorific_level":
		return oldTextCell(t.HonorificLevel)
	case "named_entities":
		return oldListCell(t.NamedEntities, t.NamedEntities == nil)
	case "user_asked_recall":
		return oldCells{values: []any{t.UserAskedRecall}, list: -1}
	case "created_at":
		return oldOptional(t.CreatedAt)
	case "prompt_id":
		return oldOptional(t.PromptID)
	}
	return oldCells{list: -1}
}

func oldCardCells(c *Card, field string) oldCells {
	switch field {
	case "character_id":
		return oldTextCell(&c.CharacterID)
	case "name":
		return oldTextCell(&c.Name)
	case "honorific_rule":
		return oldTextCell(&c.HonorificRule)
	case "first_person":
		return oldTextCell(&c.FirstPerson)
	case "description":
		return oldOptional(c.Description)
	case "public":
		return oldCells{values: []any{c.Public}, list: -1}
	case "canon_entities":
		return oldListCell(c.CanonEntities, false)
	case "forbidden_topics":
		return oldListCell(c.ForbiddenTopics, false)
	case "entity_roles":
		cs := oldCells{list: len(c.EntityRoles)}
		for _, er := range c.EntityRoles {
			cs.values = append(cs.values, er.Role, er.Entity)
		}
		return cs
	}
	return oldCells{list: -1}
}

// TestCitedAgreesWithTheCellByCellCheck holds check 9 (citer.cited) to the
// cell-by-cell reference (oldCited) on random evidence rows against random
// turns, recall source turns, cards (small ones and ones whose cells the
// judge keeps) and lexicons: values verbatim, in NFD, of the wrong kind,
// null, agg counts right and wrong. The seed is fixed.
func TestCitedAgreesWithTheCellByCellCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 9))
	pieces := []string{"하늘", "e\u0301", "é", "요.", "다. ", "x"}
	word := func() string {
		var sb strings.Builder
		for range 1 + rng.IntN(3) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	words := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = word()
		}
		return out
	}
	opt := func() *string {
		if rng.IntN(4) == 0 {
			return nil
		}
		w := word()
		return &w
	}
	turnFields := append(append([]string{}, TurnColumns...), "nope")
	cardFields := append(append([]string{}, CardColumns...), "nope")
	for iter := range 400 {
		n := []int{2, 40}[iter%2] // 40: over smallCell, kept by the judge
		card := Card{CharacterID: "C", Name: word(), HonorificRule: Banmal, FirstPerson: word(), CanonEntities: words(n),
			ForbiddenTopics: words(rng.IntN(3)), Public: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			d := word()
			card.Description = d
		}
		for range n {
			card.EntityRoles = append(card.EntityRoles, EntityRole{Role: word(), Entity: word()})
		}
		var lex []LexiconRow
		for range n {
			lex = append(lex, LexiconRow{Term: word(), Topic: word()})
		}
		j, err := NewJudge([]Card{card}, lex, nil)
		if err != nil {
			t.Fatal(err)
		}
		mkTurn := func(id string) *Turn {
			tu := &Turn{TurnID: id, SessionID: "S", CharacterID: "C", ModelID: word(), UserMessage: opt(), ReplyText: opt(),
				FirstPerson: opt(), HonorificLevel: opt(), UserAskedRecall: rng.IntN(2) == 0}
			if rng.IntN(4) > 0 {
				tu.NamedEntities = words([]int{1, 30}[rng.IntN(2)])
			}
			return tu
		}
		tu, src := mkTurn("T"), (*Turn)(nil)
		if rng.IntN(2) == 0 {
			src = mkTurn("A")
		}
		ci := citer{j: j, c: j.cards["C"], t: tu, src: src}
		for range 30 {
			var e Evidence
			switch rng.IntN(3) {
			case 0:
				e.Source, e.Field = SourceTurn, turnFields[rng.IntN(len(turnFields))]
			case 1:
				e.Source, e.Field = SourceCard, cardFields[rng.IntN(len(cardFields))]
			default:
				e.Source, e.Field = SourceLexicon, []string{"term", "topic", "nope"}[rng.IntN(3)]
			}
			if rng.IntN(8) == 0 {
				e.Source = "elsewhere"
			}
			// A value that is often in the cell: one of the card's, the
			// lexicon's or the turns' strings, maybe in NFD.
			pool := append(append(append([]string{card.Name, card.FirstPerson}, card.CanonEntities...), tu.NamedEntities...), lex[rng.IntN(len(lex))].Term, lex[rng.IntN(len(lex))].Topic, card.EntityRoles[0].Entity)
			for _, p := range []*string{tu.ReplyText, tu.UserMessage, tu.FirstPerson} {
				if p != nil {
					pool = append(pool, *p)
				}
			}
			if src != nil && src.ReplyText != nil {
				pool = append(pool, *src.ReplyText)
			}
			switch rng.IntN(7) {
			case 0:
				e.Value = nil
			case 1:
				e.Value = rng.IntN(2) == 0
			case 2:
				e.Value = float64(rng.IntN(4))
				if rng.IntN(2) == 0 {
					e.Agg = AggCount
				}
			case 3:
				e.Value = norm.NFD.String(pool[rng.IntN(len(pool))])
			case 4:
				e.Value, e.Agg = rng.IntN(40), []Agg{AggCount, AggSum}[rng.IntN(2)]
			default:
				e.Value = pool[rng.IntN(len(pool))]
			}
			gotOK, gotWhy := ci.cited(e)
			wantOK, wantWhy := oldCited(e, tu, src, &card, lex, j.profile)
			if gotOK != wantOK || gotWhy != wantWhy {
				t.Fatalf("iteration %d: %+v: (%v, %q), want (%v, %q)", iter, e, gotOK, gotWhy, wantOK, wantWhy)
			}
		}
	}
}

// TestCheckNineOfAHugeRecord: a record whose 6,000 extra evidence rows cite
// a 200,000-row lexicon, a 200,000-role card and the sentence count of a
// 1 MB reply passes check 9, and one wrong row after them is the failure
// named; each cell is read once for the record (the cell-by-cell check built
// 200,000 candidates per row: 6,000 rows × 400,000 values).
func TestCheckNineOfAHugeRecord(t *testing.T) {
	card := benchCard
	card.CharacterID = "C-HUGE"
	var lex []LexiconRow
	for i := range 200_000 {
		card.EntityRoles = append(card.EntityRoles, EntityRole{Role: fmt.Sprintf("역할%06d", i), Entity: fmt.Sprintf("인물%06d", i)})
		lex = append(lex, LexiconRow{Term: fmt.Sprintf("낱말%06d", i), Topic: fmt.Sprintf("주제%d", i%100)})
	}
	j, err := NewJudge([]Card{card}, lex, nil)
	if err != nil {
		t.Fatal(err)
	}
	reply := strings.Repeat("바다가 보여. ", 60_000) // 60,000 sentences, 1.08 MB
	turn := Turn{TurnID: "T", SessionID: "S", CharacterID: card.CharacterID, ModelID: "m", ReplyText: &reply,
		FirstPerson: sp("나"), NamedEntities: []string{}}
	rec, err := j.Judge(&turn, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	rule := len(rec.Evidence)
	for i := range 2_000 {
		rec.Evidence = append(rec.Evidence,
			Evidence{Source: SourceLexicon, Field: "term", Value: fmt.Sprintf("낱말%06d", i*97)},
			Evidence{Source: SourceCard, Field: "entity_roles", Value: fmt.Sprintf("인물%06d", i*89)},
			Evidence{Source: SourceTurn, Field: "reply_text", Agg: AggCount, Value: 60_000})
	}
	rec.Evidence = append(rec.Evidence, Evidence{Source: SourceLexicon, Field: "term", Value: "낱말200000"})
	res := j.Check(&rec, Context{Turn: &turn})
	nine := res[CheckEvidenceValue-1]
	want := fmt.Sprintf("evidence[%d] topic_lexicon.term: value 낱말200000 is not in the cited cell", rule+6_000)
	if nine.Pass || nine.Reason != want {
		t.Errorf("check 9: pass %v, %q; want the failure %q", nine.Pass, nine.Reason, want)
	}
	for _, r := range res {
		if r.ID != int(CheckEvidenceValue) && !r.Pass {
			t.Errorf("check %d fails: %s", r.ID, r.Reason)
		}
	}
}

// BenchmarkCheck is the ten automatic checks on one record the judge wrote
// (the bench turn of BenchmarkJudge: every rule has work, evidence cites the
// reply, the card and the lexicon), with the judge's findings, as the store
// runs them on every record.
func BenchmarkCheck(b *testing.B) {
	j := benchJudge(b)
	s := NewSessions()
	for i, names := range [][]string{{"물새섬", "물새등대"}, {"도윤", "은빛항"}, {"석주"}} {
		s.Add(&Turn{TurnID: "T-" + string(rune('1'+i)), SessionID: "S-1", CharacterID: "CHR-0100",
			ReplyText: sp(benchReplies[i]), NamedEntities: names, CreatedAt: "2026-01-01T09:0" + string(rune('1'+i)) + ":00+09:00"}, i)
	}
	t := Turn{TurnID: "T-9", SessionID: "S-1", CharacterID: "CHR-0100", ModelID: "gpt-4o-mini",
		UserMessage: sp("아까 말한 동생 이름이 뭐였죠?"),
		ReplyText:   sp("음, 이름이 뭐였더라, 잘 기억이 안 나. 요즘 들어 흑조 생각이 자주 나서 석주 영감한테 물어봤어. 뭍에선 요즘 다들 주식 얘기뿐이라더라."),
		FirstPerson: sp("나"), NamedEntities: []string{"흑조", "석주"}, HonorificLevel: sp("반말"),
		UserAskedRecall: true, CreatedAt: "2026-01-01T09:09:00+09:00"}
	rec, f, err := j.JudgeFindings(&t, 8, s)
	if err != nil {
		b.Fatal(err)
	}
	cx := Context{Turn: &t, Pos: 8, History: s, Findings: &f}
	for _, r := range j.Check(&rec, cx) {
		if !r.Pass {
			b.Fatalf("check %d fails: %s", r.ID, r.Reason)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		j.Check(&rec, cx)
	}
}
