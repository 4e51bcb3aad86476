package persona

import "testing"

func TestRecordJudgedReply(t *testing.T) {
	reply := func(v any) Evidence { return Evidence{Source: SourceTurn, Field: "reply_text", Value: v} }
	for _, c := range []struct {
		name   string
		rec    Record
		want   string
		wantOK bool
	}{
		{
			name: "a 말투 어긋남 record judges its first reply_text row, not the sentence count",
			rec: Record{Verdict: SpeechOff, Evidence: []Evidence{reply("그래 알았어."),
				{Source: SourceTurn, Field: "reply_text", Agg: AggCount, Value: 1},
				{Source: SourceCard, Field: "honorific_rule", Value: "존댓말"}}},
			want: "그래 알았어.", wantOK: true,
		},
		{
			name: "a 앞 회차를 기억 못 함 record judges this turn's reply, cited after the source turn's",
			rec: Record{Verdict: RecallFailed, Evidence: []Evidence{
				{Source: SourceTurn, Field: "user_asked_recall", Value: true},
				{Source: SourceTurn, Field: "user_message", Value: "아까 그 고양이 이름 뭐였지?"},
				{Source: SourceCard, Field: "entity_roles", Value: "반려묘"},
				{Source: SourceCard, Field: "canon_entities", Value: "파랑이"},
				{Source: SourceTurn, Field: "turn_id", Value: "T-1"},
				reply("우리 집 고양이 파랑이는 잘 지내요."),
				reply("글쎄요, 기억이 잘 안 나요.")}},
			want: "글쎄요, 기억이 잘 안 나요.", wantOK: true,
		},
		{
			name: "a recall record whose own reply was null has none, even though the source turn's is cited",
			rec: Record{Verdict: RecallFailed, Evidence: []Evidence{
				{Source: SourceTurn, Field: "turn_id", Value: "T-1"},
				reply("파랑이는 잘 지내요."),
				reply(nil)}},
			want: "", wantOK: false,
		},
		{
			name: "a 금지 소재 접촉 record judges the reply cited before the lexicon rows",
			rec: Record{Verdict: ForbiddenTopic, Evidence: []Evidence{reply("투표는 꼭 하세요."),
				{Source: SourceLexicon, Field: "term", Value: "투표"}}},
			want: "투표는 꼭 하세요.", wantOK: true,
		},
		{
			name: "a record whose reply_text was null has no reply",
			rec:  Record{Verdict: Kept, Evidence: []Evidence{reply(nil)}},
			want: "", wantOK: false,
		},
		{
			name: "a record citing no reply_text row has no reply",
			rec:  Record{Verdict: Kept, Evidence: []Evidence{{Source: SourceCard, Field: "honorific_rule", Value: "반말"}}},
			want: "", wantOK: false,
		},
		{
			name: "a reply_text row of another table is not the reply",
			rec:  Record{Verdict: Kept, Evidence: []Evidence{{Source: SourceCard, Field: "reply_text", Value: "x"}}},
			want: "", wantOK: false,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.rec.JudgedReply()
			if got != c.want || ok != c.wantOK {
				t.Errorf("JudgedReply() = %q, %v; want %q, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}

// The judge's own records: the reply a recall record judges is the turn's,
// not the earlier turn it cites.
func TestJudgedReplyOfJudgedRecords(t *testing.T) {
	j := newTestJudge(t, nil)
	s := NewSessions()
	a := turn("A", "하늘이는 잘 있어.")
	a.NamedEntities, a.UserMessage = []string{"하늘"}, sp("하늘이 얘기 해줘")
	b := turn("B", "동생? 글쎄.")
	b.UserMessage, b.UserAskedRecall = sp("내 동생 이름 기억나?"), true
	s.Add(&a, 0)
	s.Add(&b, 1)
	for _, c := range []struct {
		name    string
		turn    *Turn
		pos     int
		verdict Verdict
		want    string
	}{
		{"the recall record of turn B judges B's reply", &b, 1, RecallFailed, "동생? 글쎄."},
		{"turn A's record judges A's reply", &a, 0, Kept, "하늘이는 잘 있어."},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := j.Judge(c.turn, c.pos, s)
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %q, want %q", r.Verdict, c.verdict)
			}
			if got, ok := r.JudgedReply(); !ok || got != c.want {
				t.Errorf("JudgedReply() = %q, %v; want %q", got, ok, c.want)
			}
		})
	}
}
