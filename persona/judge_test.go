package persona

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"evident/persona/speech"
)

func sp(s string) *string { return &s }

var testCards = []Card{
	{CharacterID: "C1", Name: "도강", HonorificRule: Banmal, FirstPerson: "나",
		CanonEntities: []string{"검술원", "하늘", "목검", "백운"}, ForbiddenTopics: []string{"현실 정치"},
		EntityRoles: []EntityRole{{Role: "동생", Entity: "하늘"}, {Role: "스승", Entity: "백운"}}},
	{CharacterID: "C2", Name: "윤하람", HonorificRule: Jondaemal, FirstPerson: "저",
		CanonEntities: []string{}, ForbiddenTopics: []string{"의료 조언"}},
}

var testLexicon = []LexiconRow{
	{Term: "선거", Topic: "현실 정치"},
	{Term: "커피", Topic: "음식"},
	{Term: "국회", Topic: "현실 정치"},
	{Term: "처방", Topic: "의료 조언"},
}

func newTestJudge(t *testing.T, p *speech.Profile) *Judge {
	t.Helper()
	j, err := NewJudge(testCards, testLexicon, p)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// turn returns a C1 turn with the given reply, first person 나 and no names.
func turn(id, reply string) Turn {
	return Turn{TurnID: id, SessionID: "S1", CharacterID: "C1", ModelID: "m", ReplyText: sp(reply),
		FirstPerson: sp("나"), NamedEntities: []string{}}
}

func TestSpeechRule(t *testing.T) {
	j := newTestJudge(t, nil)
	tests := []struct {
		name     string
		edit     func(*Turn)
		verdict  Verdict
		observed *string
	}{
		{"a 반말 reply with the card's first person keeps the card", func(*Turn) {}, Kept, sp("반말 · 나")},
		{"one 요 sentence makes the reply 존댓말 and off for a 반말 card",
			func(t *Turn) { t.ReplyText = sp("알았어. 내일 봬요.") }, SpeechOff, sp("존댓말 · 나")},
		{"a different first person alone is a speech mismatch",
			func(t *Turn) { t.FirstPerson = sp("저") }, SpeechOff, sp("반말 · 저")},
		{"a null first person compares the style only",
			func(t *Turn) { t.FirstPerson = nil }, Kept, sp("반말")},
		{"a null reply skips the speech check",
			func(t *Turn) { t.ReplyText = nil; t.FirstPerson = sp("저") }, Kept, nil},
		{"a reply without Hangul skips the speech check",
			func(t *Turn) { t.ReplyText = sp("OK!! 😊"); t.FirstPerson = sp("저") }, Kept, nil},
		{"-습니까 is 반말 under the seed profile",
			func(t *Turn) { t.ReplyText = sp("준비됐습니까?") }, Kept, sp("반말 · 나")},
		{"the noun 필요 ends in 요 and is 존댓말 under the seed profile",
			func(t *Turn) { t.ReplyText = sp("연습이 더 필요.") }, SpeechOff, sp("존댓말 · 나")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := turn("T1", "검을 잡아. 오늘은 손목부터 본다.")
			tt.edit(&tu)
			r, err := j.Judge(&tu, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != tt.verdict || !reflect.DeepEqual(r.RuleObserved, tt.observed) {
				t.Errorf("verdict %q observed %s; want %q %s", r.Verdict, show(r.RuleObserved), tt.verdict, show(tt.observed))
			}
			if *r.RuleExpected != "반말 · 나" {
				t.Errorf("rule_expected = %q", *r.RuleExpected)
			}
		})
	}

	t.Run("the extended profile reads -습니까 as 존댓말", func(t *testing.T) {
		je := newTestJudge(t, speech.Extended())
		tu := turn("T1", "준비됐습니까?")
		r, _ := je.Judge(&tu, 0, nil)
		if r.Verdict != SpeechOff || *r.RuleObserved != "존댓말 · 나" {
			t.Errorf("got %q %s", r.Verdict, show(r.RuleObserved))
		}
	})
}

func TestOffCanonRule(t *testing.T) {
	j := newTestJudge(t, nil)
	tests := []struct {
		name  string
		names []string
		want  []string
	}{
		{"names outside the canon are listed in order without repeats", []string{"리안", "하늘", "아카데미", "리안"}, []string{"리안", "아카데미"}},
		{"canon names only give an empty list", []string{"하늘", "검술원"}, []string{}},
		{"null names give null and skip the check", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := turn("T1", "검을 잡아.")
			tu.NamedEntities = tt.names
			r, _ := j.Judge(&tu, 0, nil)
			if !reflect.DeepEqual(r.OffCanonEntities, tt.want) || (r.OffCanonEntities == nil) != (tt.want == nil) {
				t.Errorf("off_canon = %#v, want %#v", r.OffCanonEntities, tt.want)
			}
			if tt.names == nil && (r.Hedge == nil || !strings.Contains(*r.Hedge, "세계관 대조는 건너뛰고")) {
				t.Errorf("hedge = %s, want it to name the skipped check", show(r.Hedge))
			}
		})
	}
}

func TestForbiddenRule(t *testing.T) {
	j := newTestJudge(t, nil)
	tests := []struct {
		name        string
		card        string
		reply       string
		term, topic *string
		verdict     Verdict
	}{
		{"the earliest forbidden lexicon row wins over text position", "C1", "국회 앞에서 선거 얘기를 하더군.", sp("선거"), sp("현실 정치"), ForbiddenTopic},
		{"an allowed match keeps the term and leaves the topic null", "C1", "커피나 마셔.", sp("커피"), nil, Kept},
		{"a forbidden match beats an earlier allowed row", "C1", "커피 마시며 국회 얘기를 했다.", sp("국회"), sp("현실 정치"), ForbiddenTopic},
		{"a term forbidden for one card is allowed for another", "C2", "선거 날이에요.", sp("선거"), nil, Kept},
		{"no term gives nulls", "C1", "검을 잡아.", nil, nil, Kept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := turn("T1", tt.reply)
			tu.CharacterID = tt.card
			if tt.card == "C2" {
				tu.FirstPerson = sp("저")
			}
			r, _ := j.Judge(&tu, 0, nil)
			if !reflect.DeepEqual(r.TouchedTerm, tt.term) || !reflect.DeepEqual(r.TouchedTopic, tt.topic) || r.Verdict != tt.verdict {
				t.Errorf("term %s topic %s verdict %q; want %s %s %q", show(r.TouchedTerm), show(r.TouchedTopic), r.Verdict, show(tt.term), show(tt.topic), tt.verdict)
			}
		})
	}
}

func TestRecallRule(t *testing.T) {
	j := newTestJudge(t, nil)
	mk := func(id, at, user, reply string, names []string, asked bool) Turn {
		tu := turn(id, reply)
		tu.CreatedAt, tu.UserMessage, tu.NamedEntities, tu.UserAskedRecall = at, sp(user), names, asked
		return tu
	}
	tests := []struct {
		name          string
		turns         []Turn // the last one is judged
		target, src   *string
		verdict       Verdict
		hedgeContains string
	}{
		{"a name from an earlier turn missing from the reply fires", []Turn{
			mk("A", "", "하늘이 얘기 해줘", "하늘이는 잘 있어.", []string{"하늘"}, false),
			mk("B", "", "내 동생 이름 기억나?", "동생? 글쎄.", []string{}, true),
		}, sp("하늘"), sp("A"), RecallFailed, ""},
		{"a reply that contains the name recalls it", []Turn{
			mk("A", "", "x", "하늘이는 잘 있어.", []string{"하늘"}, false),
			mk("B", "", "내 동생 이름 기억나?", "하늘이 말이지.", []string{"하늘"}, true),
		}, nil, nil, Kept, ""},
		{"without user_asked_recall nothing is computed", []Turn{
			mk("A", "", "x", "하늘이는 잘 있어.", []string{"하늘"}, false),
			mk("B", "", "내 동생 이름 기억나?", "글쎄.", []string{}, false),
		}, nil, nil, Kept, ""},
		{"no role word in the message skips recall with a hedge", []Turn{
			mk("A", "", "x", "하늘이는 잘 있어.", []string{"하늘"}, false),
			mk("B", "", "전에 한 얘기 기억나?", "글쎄.", []string{}, true),
		}, nil, nil, Kept, "관계어가 없어"},
		{"the first entity_roles row in card order is asked, not the first in the message", []Turn{
			mk("A", "", "x", "백운 스승과 하늘.", []string{"백운", "하늘"}, false),
			mk("B", "", "스승님과 동생 기억나?", "백운 말이군.", []string{"백운"}, true),
		}, sp("하늘"), sp("A"), RecallFailed, ""},
		{"created_at order puts a later input row earlier and it is the source", []Turn{
			mk("A", "2026-01-01T10:00:00Z", "x", "하늘.", []string{"하늘"}, false),
			mk("C", "2026-01-01T08:00:00Z", "x", "하늘이다.", []string{"하늘"}, false),
			mk("B", "2026-01-01T11:00:00Z", "동생 기억나?", "글쎄.", []string{}, true),
		}, sp("하늘"), sp("C"), RecallFailed, ""},
		{"a turn after the question in session order is not earlier", []Turn{
			mk("A", "2026-01-01T12:00:00Z", "x", "하늘.", []string{"하늘"}, false),
			mk("B", "2026-01-01T11:00:00Z", "동생 기억나?", "글쎄.", []string{}, true),
		}, nil, nil, Kept, ""},
		{"one turn without created_at falls back to input order", []Turn{
			mk("A", "2026-01-01T12:00:00Z", "x", "하늘.", []string{"하늘"}, false),
			mk("B", "", "동생 기억나?", "글쎄.", []string{}, true),
		}, sp("하늘"), sp("A"), RecallFailed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSessions()
			for i := range tt.turns {
				s.Add(&tt.turns[i], i)
			}
			last := len(tt.turns) - 1
			r, _ := j.Judge(&tt.turns[last], last, s)
			if !reflect.DeepEqual(r.RecallTarget, tt.target) || !reflect.DeepEqual(r.RecallSourceTurn, tt.src) || r.Verdict != tt.verdict {
				t.Errorf("target %s source %s verdict %q; want %s %s %q", show(r.RecallTarget), show(r.RecallSourceTurn), r.Verdict, show(tt.target), show(tt.src), tt.verdict)
			}
			if tt.hedgeContains != "" && (r.Hedge == nil || !strings.Contains(*r.Hedge, tt.hedgeContains)) {
				t.Errorf("hedge = %s, want %q", show(r.Hedge), tt.hedgeContains)
			}
		})
	}
}

func TestVerdictPriority(t *testing.T) {
	j := newTestJudge(t, nil)
	s := NewSessions()
	src := turn("A", "하늘이는 잘 있어.")
	src.NamedEntities = []string{"하늘"}
	s.Add(&src, 0)
	base := func() Turn {
		tu := turn("B", "선거 얘기는 그만해요.")   // forbidden + 존댓말
		tu.NamedEntities = []string{"리안"} // off-canon
		tu.UserAskedRecall, tu.UserMessage = true, sp("동생 기억나?")
		return tu
	}
	steps := []struct {
		name string
		edit func(*Turn)
		want Verdict
	}{
		{"a forbidden topic outranks everything", func(*Turn) {}, ForbiddenTopic},
		{"off-canon names come next", func(t *Turn) { t.ReplyText = sp("그만해요.") }, OffCanon},
		{"speech comes after names", func(t *Turn) { t.ReplyText = sp("그만해요."); t.NamedEntities = []string{} }, SpeechOff},
		{"recall comes last", func(t *Turn) { t.ReplyText = sp("그만해."); t.NamedEntities = []string{} }, RecallFailed},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			tu := base()
			st.edit(&tu)
			r, _ := j.Judge(&tu, 1, s)
			if r.Verdict != st.want {
				t.Errorf("verdict %q, want %q", r.Verdict, st.want)
			}
		})
	}
}

func TestUnknownCharacter(t *testing.T) {
	j := newTestJudge(t, nil)
	tu := turn("T", "안녕.")
	tu.CharacterID = "nope"
	if _, err := j.Judge(&tu, 0, nil); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v", err)
	}
}

func TestHedge(t *testing.T) {
	j := newTestJudge(t, nil)
	tests := []struct {
		name string
		edit func(*Turn)
		want *string
	}{
		{"nothing skipped gives a null hedge", func(*Turn) {}, nil},
		{"a server label that disagrees is noted",
			func(t *Turn) { t.HonorificLevel = sp("존댓말") },
			sp("채팅 서버는 「존댓말」로 표시했지만 종결 어미로 읽은 말투는 반말이라 서버 표시는 참고로만 남깁니다.")},
		{"null first person is named",
			func(t *Turn) { t.FirstPerson = nil },
			sp("로그에 1인칭이 없어 1인칭 비교는 건너뛰고 말투만 견줬습니다.")},
		{"null reply and null names are both named",
			func(t *Turn) { t.ReplyText = nil; t.NamedEntities = nil },
			sp("답장이 비어 있어 말투 대조는 건너뛰었습니다. 등장 이름 목록이 비어 있어 세계관 대조도 건너뛰었습니다.")},
		{"recall asked with a null message is named",
			func(t *Turn) { t.UserAskedRecall = true },
			sp("유저가 앞 이야기를 물었다고 표시됐지만 유저 메시지가 비어 있어 기억 대조는 건너뛰었습니다.")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := turn("T", "검을 잡아.")
			tt.edit(&tu)
			r, _ := j.Judge(&tu, 0, nil)
			if !reflect.DeepEqual(r.Hedge, tt.want) {
				t.Errorf("hedge = %s, want %s", show(r.Hedge), show(tt.want))
			}
		})
	}
}

// TestSummaries pins the default sentence of each case to a hand-written
// expectation and runs the ten checks and the schema on the record.
func TestSummaries(t *testing.T) {
	j := newTestJudge(t, nil)
	s := NewSessions()
	src := turn("A", "하늘이는 잘 있어.")
	src.NamedEntities = []string{"하늘"}
	s.Add(&src, 0)
	tests := []struct {
		name string
		edit func(*Turn)
		want string
	}{
		{"kept with two 반말 sentences", func(*Turn) {},
			"답장 두 문장이 모두 반말로 끝나고 1인칭도 카드 그대로여서 카드 밖 이름 없이 넘어갔습니다."},
		{"kept with an allowed term", func(t *Turn) { t.ReplyText = sp("커피나 마셔.") },
			"답장 한 문장이 반말로 끝나고 1인칭도 카드 그대로여서 사전이 「음식」으로 묶어 둔 「커피」가 나왔지만 이 카드가 막은 소재는 아니며 카드 밖 이름 없이 넘어갔습니다."},
		{"kept with a null reply", func(t *Turn) { t.ReplyText = nil },
			"답장이 비어 있어 말투는 건너뛰었고 카드 밖 이름 없이 넘어갔습니다."},
		{"speech off quotes the polite words and the first person", func(t *Turn) {
			t.ReplyText, t.FirstPerson = sp("저는 그렇게 생각해요. 오늘은 조금 더 쉬시는 게 좋겠어요."), sp("저")
		}, "반말 카드인데 답장 두 문장이 모두 「생각해요」·「좋겠어요」로 끝나 존댓말로 읽혔고 1인칭도 「저」를 써 카드 규칙 두 가지를 한꺼번에 벗어났습니다."},
		{"speech off for a mixed reply counts the polite sentences", func(t *Turn) { t.ReplyText = sp("알았어. 가자. 내일 봬요.") },
			"반말 카드인데 답장 세 문장 가운데 한 문장이 「봬요」로 끝나 존댓말로 읽혔고 1인칭은 카드 그대로입니다."},
		{"speech off by first person only", func(t *Turn) { t.FirstPerson = sp("저") },
			"답장 두 문장이 모두 반말로 끝나고 말투는 카드대로지만 1인칭을 카드의 「나」 대신 「저」로 써 카드 규칙을 벗어났습니다."},
		{"off-canon names take 과 and 가 by their last syllables", func(t *Turn) { t.NamedEntities = []string{"리안", "아카데미"} },
			"카드에 없는 「리안」과 「아카데미」가 답장에 나와 세계관 밖 이름으로 걸렸습니다."},
		{"a forbidden term names the topic and the term", func(t *Turn) { t.ReplyText = sp("요즘 바깥 선거 얘기로 시끄럽더군.") },
			"사전이 「현실 정치」로 묶어 둔 「선거」가 답장에 그대로 나와 카드가 막은 소재에 닿았습니다."},
		{"a failed recall names the role, the entity and the earlier turn", func(t *Turn) {
			t.UserAskedRecall, t.UserMessage, t.ReplyText = true, sp("내 동생 이름 기억나?"), sp("동생? 글쎄.")
		}, "유저가 「동생」을 물었고 카드는 그 대상을 「하늘」로 적어 두었는데, 앞 회차 「A」에 나온 「하늘」이 이번 답장에는 없습니다."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := turn("B", "검을 잡아. 오늘은 손목부터 본다.")
			tt.edit(&tu)
			r, _ := j.Judge(&tu, 1, s)
			if r.Summary != tt.want {
				t.Errorf("summary\n got %s\nwant %s", r.Summary, tt.want)
			}
			byID := func(id string) (*Turn, bool) { return &src, id == "A" }
			for _, c := range j.Check(&r, Context{Turn: &tu, Pos: 1, History: s, TurnByID: byID}) {
				if !c.Pass {
					t.Errorf("check %d failed: %s", c.ID, c.Reason)
				}
			}
			b, _ := json.Marshal(r)
			if err := ValidateJSON(b); err != nil {
				t.Errorf("schema: %v\n%s", err, b)
			}
		})
	}
}

func TestParticles(t *testing.T) {
	tests := []struct{ word, iga, euro string }{
		{"하늘", "하늘이", "하늘로"},
		{"아카데미", "아카데미가", "아카데미로"},
		{"리안", "리안이", "리안으로"},
		{"7", "7이", "7로"},
		{"3", "3이", "3으로"},
		{"2", "2가", "2로"},
		{"Lab", "Lab가", "Lab로"},
		{"Tom", "Tom이", "Tom으로"},
		{"Bill", "Bill이", "Bill로"},
	}
	for _, tt := range tests {
		t.Run(tt.word+" takes "+tt.iga, func(t *testing.T) {
			if got := iGa.with(tt.word); got != tt.iga {
				t.Errorf("이/가: %q", got)
			}
			if got := euro.with(tt.word); got != tt.euro {
				t.Errorf("(으)로: %q", got)
			}
		})
	}
}

// TestNewJudgeCostIsNotCardsTimesLexicon: preparing 2,000 cards with a
// 20,000-row lexicon allocates what the tables hold, not a value per card
// and lexicon row (which was 40 MB here, and 10 GB for 50,000 cards × 200,000
// rows).
func TestNewJudgeCostIsNotCardsTimesLexicon(t *testing.T) {
	var cards []Card
	for i := range 2000 {
		cards = append(cards, Card{CharacterID: fmt.Sprintf("C%d", i), Name: "이름", HonorificRule: "반말", FirstPerson: "나",
			ForbiddenTopics: []string{fmt.Sprintf("주제%d", i%50)}})
	}
	var lex []LexiconRow
	for i := range 20000 {
		lex = append(lex, LexiconRow{Term: fmt.Sprintf("낱말%d", i), Topic: fmt.Sprintf("주제%d", i%100)})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	j, err := NewJudge(cards, lex, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("NewJudge allocated %d MiB for 2,000 cards and 20,000 lexicon rows", n>>20)
	}
	// The forbidden set still decides: 낱말7 has topic 주제7, forbidden for C7.
	f, err := j.Findings(&Turn{TurnID: "T", SessionID: "S", CharacterID: "C7", ReplyText: sp("낱말7 얘기야.")}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.ForbiddenRow != 7 || f.Verdict != ForbiddenTopic {
		t.Errorf("forbidden row %d verdict %s, want 7 %s", f.ForbiddenRow, f.Verdict, ForbiddenTopic)
	}
}

// TestParseCreatedAt: RFC 3339 date-times in the forms §5.6 allows.
func TestParseCreatedAt(t *testing.T) {
	want := time.Date(2024, 5, 1, 1, 0, 0, 0, time.UTC)
	for _, s := range []string{"2024-05-01T01:00:00Z", "2024-05-01t01:00:00z", "2024-05-01T10:00:00+09:00", "2024-05-01t01:00:00.000Z"} {
		at, err := ParseCreatedAt(s)
		if err != nil || !at.Equal(want) {
			t.Errorf("ParseCreatedAt(%q) = %v, %v; want %v", s, at, err, want)
		}
	}
	for _, s := range []string{"2024-05-01 01:00:00Z", "2024-05-01T23:59:60Z", "2024-13-01T00:00:00Z", "yesterday"} {
		if _, err := ParseCreatedAt(s); err == nil {
			t.Errorf("ParseCreatedAt(%q) accepted", s)
		}
	}
}
