package persona

import (
	"strings"
	"testing"
)

// benchCard is the demo's CHR-0100 (persona/demo/data/cards.json), copied
// because this package cannot import the demo (it imports persona).
var benchCard = Card{
	CharacterID: "CHR-0100", Name: "도담", HonorificRule: Banmal, FirstPerson: "나",
	CanonEntities: []string{"물새섬", "물새등대", "솔터마을", "은빛항", "너울곶", "도윤", "석주", "해람",
		"파랑이", "바람개비호", "등불일지", "샛별등"},
	ForbiddenTopics: []string{"현실 정치", "현대 기술", "실존 인물"},
	EntityRoles: []EntityRole{{Role: "동생", Entity: "도윤"}, {Role: "스승", Entity: "석주"},
		{Role: "고향", Entity: "솔터마을"}, {Role: "단짝", Entity: "해람"}, {Role: "고양이", Entity: "파랑이"}},
}

// benchLexicon is the demo lexicon (49 rows) plus one row: 50 rows.
const benchLexicon = `선거,현실 정치
대통령,현실 정치
국회의원,현실 정치
여당,현실 정치
야당,현실 정치
투표,현실 정치
탄핵,현실 정치
교회,종교
성당,종교
예배,종교
성경,종교
목사,종교
성인물,성인
음란,성인
19금,성인
베드신,성인
살해,폭력
고문,폭력
칼부림,폭력
피투성이,폭력
폭행,폭력
처방,의료 조언
진통제,의료 조언
복용,의료 조언
수면제,의료 조언
항생제,의료 조언
주식,투자
비트코인,투자
코인,투자
부동산,투자
펀드,투자
수익률,투자
이순신,실존 인물
세종대왕,실존 인물
아인슈타인,실존 인물
일론 머스크,실존 인물
손흥민,실존 인물
셰익스피어,실존 인물
스마트폰,현대 기술
휴대폰,현대 기술
인터넷,현대 기술
유튜브,현대 기술
인공지능,현대 기술
와이파이,현대 기술
카카오톡,현대 기술
카지노,도박
도박,도박
경마,도박
로또,도박
복권,도박`

func benchLexiconRows(b *testing.B) []LexiconRow {
	var rows []LexiconRow
	for line := range strings.SplitSeq(benchLexicon, "\n") {
		term, topic, ok := strings.Cut(line, ",")
		if !ok {
			b.Fatalf("bad lexicon line %q", line)
		}
		rows = append(rows, LexiconRow{Term: term, Topic: topic})
	}
	if len(rows) != 50 {
		b.Fatalf("lexicon has %d rows, want 50", len(rows))
	}
	return rows
}

// benchReplies are replies like bench/gen's (1–4 sentences, 150–300 bytes):
// most touch no term, one an allowed term, one a forbidden one.
var benchReplies = []string{
	"바람 찬데 문간에 서 있지 말고 얼른 안으로 들어와. 오늘 밤은 물결이 높아서 배가 한 척도 못 뜰 거야. 방은 좁아도 이불은 햇볕에 바싹 말린 걸로 줄게.",
	"석주 얘기는 나중에 불 끄고 나서 천천히 더 해 줄게. 섬에선 시계보다 물때를 먼저 보는 게 버릇이 됐어.",
	"뭍에선 요즘 다들 주식 얘기뿐이라더라. 따뜻한 보리차 끓여 놨으니까 한 잔 마시고 몸 좀 녹여. 갈매기들이 시끄럽게 울면 날이 궂어진다는 뜻이야.",
	"요즘 들어 해람 생각이 자주 나서 창밖을 오래 보게 돼. 안개 낀 날엔 무적을 울려서 배들한테 길을 알려 줘. 겨울엔 파도가 창문까지 튀어서 잠을 설칠 때가 많아. 별이 제일 잘 보이는 자리는 등대 뒤편 바위 위야.",
	"손님들이 가끔 스마트폰 얘기를 하던데 난 잘 몰라. 여긴 조용한 게 장점이지, 파도 소리 말고는 없어.",
	"계단이 좁고 가파르니까 난간 꼭 잡고 천천히 올라와. 불 켜기 전에 렌즈부터 닦아야 하니까 잠깐 기다려. 계단이 미끄러우니까 천천히 올라가세요.",
	"물새섬은 여기 사람이라면 누구나 다 아는 이름이야. 젖은 옷은 난로 옆에 걸어 두면 금방 마를 거야. 아침엔 미역국 끓일 거니까 너무 늦게까지 자지는 마.",
	"뭍 사람들은 섬이 심심하다는데 난 하루가 모자라. 밤새 바람 소리 들으면서 바다를 보는 게 내 일이야.",
}

func benchJudge(b *testing.B) *Judge {
	j, err := NewJudge([]Card{benchCard}, benchLexiconRows(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	return j
}

// BenchmarkJudge judges one realistic turn that every rule has work on: a
// 3-sentence 반말 reply (about 230 bytes) naming one canon and one invented
// name and an allowed lexicon term, answering a recall question (동생) whose
// entity an earlier turn of the session named.
func BenchmarkJudge(b *testing.B) {
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
	rec, err := j.Judge(&t, 8, s)
	if err != nil {
		b.Fatal(err)
	}
	if rec.Verdict != OffCanon || rec.TouchedTerm == nil || *rec.TouchedTerm != "주식" {
		b.Fatalf("verdict %q, touched_term %v: the bench turn no longer exercises every rule", rec.Verdict, rec.TouchedTerm)
	}
	b.SetBytes(int64(len(*t.ReplyText)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Judge(&t, 8, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// naiveTouch is the straightforward rule 3: every row, strings.Contains,
// earliest matching row and earliest forbidden matching row.
func naiveTouch(rows []LexiconRow, text string, forbidden func(int) bool) (first, firstForbidden int) {
	first, firstForbidden = -1, -1
	for i, row := range rows {
		if row.Term == "" || !strings.Contains(text, row.Term) {
			continue
		}
		if first < 0 {
			first = i
		}
		if forbidden(i) {
			return first, i // rows are in order: nothing later improves either
		}
	}
	return first, firstForbidden
}

// lexiconBench runs touch over benchReplies, one reply per op, after checking
// that it agrees with Lexicon.Touch.
func lexiconBench(b *testing.B, touch func(l *Lexicon, text string, forbidden func(int) bool) (int, int)) {
	j := benchJudge(b)
	c := j.cards[benchCard.CharacterID]
	l := j.Lexicon()
	forbidden := func(row int) bool { return c.forbidden[l.Rows()[row].Topic] }
	touched := 0
	for _, text := range benchReplies {
		f1, ff1 := l.Touch(text, forbidden)
		f2, ff2 := naiveTouch(l.Rows(), text, forbidden)
		if f1 != f2 || ff1 != ff2 {
			b.Fatalf("Touch (%d, %d) and naive (%d, %d) disagree on %q", f1, ff1, f2, ff2, text)
		}
		if f1 >= 0 {
			touched++
		}
	}
	if touched != 2 {
		b.Fatalf("%d replies touch a term, want 2", touched)
	}
	size := 0
	for _, text := range benchReplies {
		size += len(text)
	}
	b.SetBytes(int64(size / len(benchReplies)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		touch(l, benchReplies[i%len(benchReplies)], forbidden)
		i++
	}
}

// BenchmarkLexiconTouch is rule 3 as the judge does it: one scan of the reply
// through the lexicon's automaton (50-row lexicon, one reply per op).
func BenchmarkLexiconTouch(b *testing.B) {
	lexiconBench(b, func(l *Lexicon, text string, forbidden func(int) bool) (int, int) {
		return l.Touch(text, forbidden)
	})
}

// BenchmarkLexiconNaive is the alternative: strings.Contains per row.
func BenchmarkLexiconNaive(b *testing.B) {
	lexiconBench(b, func(l *Lexicon, text string, forbidden func(int) bool) (int, int) {
		return naiveTouch(l.Rows(), text, forbidden)
	})
}
