package persona

import (
	"strconv"
	"strings"

	"evident/persona/speech"
)

// cell returns a nullable text cell as an evidence value (nil for null).
func cell(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func turnRow(field string, v any) Evidence {
	return Evidence{Source: SourceTurn, Field: field, Value: v}
}
func cardRow(field string, v any) Evidence {
	return Evidence{Source: SourceCard, Field: field, Value: v}
}
func lexRow(field string, v any) Evidence {
	return Evidence{Source: SourceLexicon, Field: field, Value: v}
}

// evidence cites the rows a verdict stands on, following the seed's seven
// examples (spec persona.md "Evidence, summary, hedge"):
//
//   - 금지 소재 접촉: reply_text, the lexicon row's term and topic, the card's
//     forbidden_topics element.
//   - 세계관 밖 고유명사: reply_text, the card's first canon_entities element
//     (the canon the names were checked against; an empty canon is cited as
//     count 0), the turn_id.
//   - 앞 회차를 기억 못 함: user_asked_recall, user_message, the entity_roles
//     role, the entity (from canon_entities when it is canon, else from
//     entity_roles), the source turn's turn_id and reply_text, this reply_text.
//   - 말투 어긋남 and 설정대로 말함: reply_text, the sentence count (agg count,
//     the number the summary states), the card's honorific_rule, the log's
//     first_person, then the card's first_person when the first person was
//     compared. Decision: in a 설정대로 말함 record whose named_entities is
//     null, that null cell takes the card first_person's place, as in the
//     seed's seventh example; 말투 어긋남 keeps the card row and adds the null
//     cell after it. A 설정대로 말함 record that touched an allowed lexicon term
//     cites that row's term and topic.
func (j *Judge) evidence(t *Turn, c *cardRules, f *Findings) []Evidence {
	reply := turnRow("reply_text", cell(t.ReplyText))
	rows := j.lexicon.rows
	switch f.Verdict {
	case ForbiddenTopic:
		lr := rows[f.ForbiddenRow]
		return []Evidence{reply, lexRow("term", lr.Term), lexRow("topic", lr.Topic), cardRow("forbidden_topics", lr.Topic)}
	case OffCanon:
		canon := cardRow("canon_entities", nil)
		if len(c.CanonEntities) > 0 {
			canon.Value = c.CanonEntities[0]
		} else {
			canon.Agg, canon.Value = AggCount, 0
		}
		return []Evidence{reply, canon, turnRow("turn_id", t.TurnID)}
	case RecallFailed:
		entity := cardRow("entity_roles", f.RecallEntity)
		if c.canon[f.RecallEntity] {
			entity.Field = "canon_entities"
		}
		return []Evidence{
			turnRow("user_asked_recall", true),
			turnRow("user_message", cell(t.UserMessage)),
			cardRow("entity_roles", f.RecallRole),
			entity,
			turnRow("turn_id", f.RecallSource.TurnID),
			turnRow("reply_text", cell(f.RecallSource.ReplyText)),
			reply,
		}
	}

	// 말투 어긋남 and 설정대로 말함.
	ev := []Evidence{reply}
	if !f.SpeechSkipped {
		ev = append(ev,
			Evidence{Source: SourceTurn, Field: "reply_text", Agg: AggCount, Value: len(f.Reading.Sentences)},
			cardRow("honorific_rule", c.HonorificRule),
			turnRow("first_person", cell(t.FirstPerson)))
	}
	neNull := t.NamedEntities == nil
	compared := !f.SpeechSkipped && t.FirstPerson != nil
	switch {
	case f.Verdict == SpeechOff:
		if compared {
			ev = append(ev, cardRow("first_person", c.FirstPerson))
		}
		if neNull {
			ev = append(ev, turnRow("named_entities", nil))
		}
	case neNull:
		ev = append(ev, turnRow("named_entities", nil))
	case compared:
		ev = append(ev, cardRow("first_person", c.FirstPerson))
	}
	if f.Verdict == Kept && f.TermRow >= 0 {
		ev = append(ev, lexRow("term", rows[f.TermRow].Term), lexRow("topic", rows[f.TermRow].Topic))
	}
	return ev
}

// summary writes the default one-sentence 존댓말 summary for the findings,
// stating the numbers and words the verdict stands on (spec persona.md
// "Evidence, summary, hedge"). Words from the inputs are quoted in 「」 and
// followed by the particle their last sound takes.
func (j *Judge) summary(t *Turn, c *cardRules, f *Findings) string {
	rows := j.lexicon.rows
	switch f.Verdict {
	case ForbiddenTopic:
		lr := rows[f.ForbiddenRow]
		return "사전이 " + quoteWith(lr.Topic, euro) + " 묶어 둔 " + quoteWith(lr.Term, iGa) +
			" 답장에 그대로 나와 카드가 막은 소재에 닿았습니다."
	case OffCanon:
		if len(c.CanonEntities) == 0 {
			return "카드에 정해 둔 이름이 하나도 없어 답장에 나온 " + quoteList(f.OffCanon, iGa) + " 모두 세계관 밖 이름으로 걸렸습니다."
		}
		return "카드에 없는 " + quoteList(f.OffCanon, iGa) + " 답장에 나와 세계관 밖 이름으로 걸렸습니다."
	case RecallFailed:
		return "유저가 " + quoteWith(f.RecallRole, eulReul) + " 물었고 카드는 그 대상을 " + quoteWith(f.RecallEntity, euro) +
			" 적어 두었는데, 앞 회차 " + quote(f.RecallSource.TurnID) + "에 나온 " + quoteWith(f.RecallEntity, iGa) +
			" 이번 답장에는 없습니다."
	case SpeechOff:
		return speechOffSummary(t, c, f)
	}
	return keptSummary(t, j, f)
}

// sentencesEnd says how the reply's counted sentences end: "답장 두 문장이
// 모두 반말로 끝나고" and the like.
func sentencesEnd(f *Findings) string {
	n, p := len(f.Reading.Sentences), f.Reading.Polite
	switch {
	case n == 1:
		return "답장 한 문장이 " + f.Style + "로 끝나고"
	case f.Style == speech.Banmal || p == n:
		return "답장 " + countSentences(n) + "이 모두 " + f.Style + "로 끝나고"
	}
	return "답장 " + countSentences(n) + " 가운데 " + countSentences(p) + "이 존댓말로 끝나고"
}

func keptSummary(t *Turn, j *Judge, f *Findings) string {
	var b strings.Builder
	b.Grow(256) // most summaries fit: one allocation, not one per piece (issue 18)
	switch {
	case f.SpeechSkipped && t.ReplyText == nil:
		b.WriteString("답장이 비어 있어 말투는 건너뛰었고")
	case f.SpeechSkipped:
		b.WriteString("답장에 한글 문장이 없어 말투는 건너뛰었고")
	case t.FirstPerson == nil:
		b.WriteString(sentencesEnd(f))
		b.WriteString(" 1인칭은 로그에 없어 말투만 견줬으며")
	default:
		b.WriteString(sentencesEnd(f))
		b.WriteString(" 1인칭도 카드 그대로여서")
	}
	if f.TermRow >= 0 {
		lr := j.lexicon.rows[f.TermRow]
		b.WriteString(" 사전이 " + quoteWith(lr.Topic, euro) + " 묶어 둔 " + quoteWith(lr.Term, iGa) + " 나왔지만 이 카드가 막은 소재는 아니며")
	}
	if t.NamedEntities == nil {
		b.WriteString(" 이름 대조 없이 넘어갔습니다.")
	} else {
		b.WriteString(" 카드 밖 이름 없이 넘어갔습니다.")
	}
	return b.String()
}

// politeWords quotes the distinct last words of the polite sentences (at most
// three, then 등) joined by ·, followed by particle p.
func politeWords(f *Findings, p particle) string {
	var ws []string
	for _, s := range f.Reading.Sentences {
		// Word: the 어절 that made it polite (주세요 in "와 주세요 선생님")
		if s.Polite() && !contains(ws, s.Word) {
			ws = append(ws, s.Word)
		}
	}
	more := len(ws) > 3
	if more {
		ws = ws[:3]
	}
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteString("·")
		}
		if i == len(ws)-1 && !more {
			b.WriteString(quoteWith(w, p))
		} else {
			b.WriteString(quote(w))
		}
	}
	if more {
		b.WriteString(" 등" + p.afterConsonant)
	}
	return b.String()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func speechOffSummary(t *Turn, c *cardRules, f *Findings) string {
	var b strings.Builder
	n, p := len(f.Reading.Sentences), f.Reading.Polite
	if f.StyleOff {
		b.WriteString(c.HonorificRule + " 카드인데 ")
		switch {
		case f.Style == speech.Banmal && n == 1:
			b.WriteString("답장 한 문장이 반말로 끝났고")
		case f.Style == speech.Banmal:
			b.WriteString("답장 " + countSentences(n) + "이 모두 반말로 끝났고")
		case n == 1:
			b.WriteString("답장 한 문장이 " + politeWords(f, euro) + " 끝나 존댓말로 읽혔고")
		case p == n:
			b.WriteString("답장 " + countSentences(n) + "이 모두 " + politeWords(f, euro) + " 끝나 존댓말로 읽혔고")
		default:
			b.WriteString("답장 " + countSentences(n) + " 가운데 " + countSentences(p) + "이 " + politeWords(f, euro) + " 끝나 존댓말로 읽혔고")
		}
		switch {
		case f.FirstOff:
			b.WriteString(" 1인칭도 " + quoteWith(*t.FirstPerson, eulReul) + " 써 카드 규칙 두 가지를 한꺼번에 벗어났습니다.")
		case t.FirstPerson == nil:
			b.WriteString(" 1인칭은 로그에 없어 말투만 견줬습니다.")
		default:
			b.WriteString(" 1인칭은 카드 그대로입니다.")
		}
		return b.String()
	}
	// Style kept, first person off.
	return sentencesEnd(f) + " 말투는 카드대로지만 1인칭을 카드의 " + quote(c.FirstPerson) + " 대신 " +
		quoteWith(*t.FirstPerson, euro) + " 써 카드 규칙을 벗어났습니다."
}

// hedge names every skipped check and why, the role-play asides the speech
// profile set aside and a reply that mixes styles (how many sentences of
// each; issue 14 item 1), and a chat-server label that disagrees with the
// extracted style; nil when there is nothing to say (spec persona.md
// "Evidence, summary, hedge"). The sentence for a null
// named_entities alone is the seed's own.
func hedge(t *Turn, f *Findings) *string {
	var hs joiner
	switch {
	case f.SpeechSkipped && t.ReplyText == nil:
		hs.add("답장이 비어 있어 말투 대조는 건너뛰었습니다.")
	case f.SpeechSkipped:
		hs.add("답장에 한글이 든 문장이 없어 말투 대조는 건너뛰었습니다.")
	case t.FirstPerson == nil:
		hs.add("로그에 1인칭이 없어 1인칭 비교는 건너뛰고 말투만 견줬습니다.")
	}
	if t.NamedEntities == nil {
		if f.SpeechSkipped {
			hs.add("등장 이름 목록이 비어 있어 세계관 대조도 건너뛰었습니다.")
		} else {
			hs.add("등장 이름 목록이 비어 있어 세계관 대조는 건너뛰고 말투와 금지 소재만 맞춰 봤습니다.")
		}
	}
	if f.RecallAsked && f.RecallRole == "" {
		if t.UserMessage == nil {
			hs.add("유저가 앞 이야기를 물었다고 표시됐지만 유저 메시지가 비어 있어 기억 대조는 건너뛰었습니다.")
		} else {
			hs.add("유저가 앞 이야기를 물었다고 표시됐지만 메시지에 카드의 관계어가 없어 기억 대조는 건너뛰었습니다.")
		}
	}
	if a := asidesSetAside(f.Reading.Asides); a != "" {
		hs.add(a)
	}
	if f.Reading.Mixed() {
		hs.add("한 답장에 존댓말 ", countSentences(f.Reading.Polite), "과 반말 ", countSentences(f.Reading.Plain()), "이 섞여 있습니다.")
	}
	if !f.SpeechSkipped && t.HonorificLevel != nil && *t.HonorificLevel != f.Style {
		hs.add("채팅 서버는 ", quoteWith(*t.HonorificLevel, euro), " 표시했지만 종결 어미로 읽은 말투는 ", f.Style, "이라 서버 표시는 참고로만 남깁니다.")
	}
	if hs.b.Len() == 0 {
		return nil
	}
	s := hs.b.String()
	return &s
}

// joiner joins hedge sentences with one space, as strings.Join did, into
// one buffer grown once (issue 18: a hedge was a slice, its pieces and the
// join, four allocations or more; now two with the pointer).
type joiner struct{ b strings.Builder }

// add appends one sentence made of parts.
func (j *joiner) add(parts ...string) {
	if j.b.Len() == 0 {
		j.b.Grow(256)
	} else {
		j.b.WriteByte(' ')
	}
	for _, p := range parts {
		j.b.WriteString(p)
	}
}

// asidesSetAside is the hedge sentence for the role-play asides the speech
// profile set aside (speech.Reading.Asides: "extended" only), "" when none.
func asidesSetAside(as []speech.Aside) string {
	var brackets, narration int
	for _, a := range as {
		if a.Kind == speech.AsideNarration {
			narration++
		} else {
			brackets++
		}
	}
	var parts []string
	if brackets > 0 {
		parts = append(parts, "괄호 속 지문 "+strconv.Itoa(brackets)+"개")
	}
	if narration > 0 {
		parts = append(parts, "별표 서술 "+strconv.Itoa(narration)+"개")
	}
	if len(parts) == 0 {
		return ""
	}
	return "답장의 " + strings.Join(parts, "와 ") + "는 캐릭터의 말이 아니어서 말투 판정에서 뺐습니다."
}
