package speech

import (
	"reflect"
	"testing"
)

// TestExtendedKinds is one table per kind of issue 14, each case the sentence
// that needed the rule: what the seed reads (unchanged), what extended reads,
// and the word and way that made it 존댓말.
func TestExtendedKinds(t *testing.T) {
	seed, ext := Seed(), Extended()
	type tc struct {
		name, text string
		seed, ext  string // styles
		word, via  string // extended's deciding word and Via of the last sentence
	}
	kinds := map[string][]tc{
		"ㅂ시다": {
			{"갑시다 is a polite proposal", "그럼 같이 갑시다.", Banmal, Jondaemal, "갑시다", ViaEnding},
			{"합시다 is a polite proposal", "오늘은 여기까지 합시다.", Banmal, Jondaemal, "합시다", ViaEnding},
			{"먹읍시다 has the ㅂ on 읍", "점심은 김밥을 먹읍시다.", Banmal, Jondaemal, "먹읍시다", ViaEnding},
			{"시다 without a ㅂ final stays 반말", "이 김치 좀 시다.", Banmal, Banmal, "시다", ""},
		},
		"습디다": {
			{"있습디다 is polite retrospective", "어제 가 보니 문이 닫혀 있습디다.", Banmal, Jondaemal, "있습디다", ViaEnding},
			{"합디다 after a vowel stem", "그 사람 참 성실합디다.", Banmal, Jondaemal, "성실합디다", ViaEnding},
		},
		"one-word 네/예": {
			{"네 alone is polite", "네.", Banmal, Jondaemal, "네", ViaWord},
			{"예 alone is polite", "예!", Banmal, Jondaemal, "예", ViaWord},
			{"아뇨 alone is polite", "아뇨", Banmal, Jondaemal, "아뇨", ViaWord},
			{"the 반말 ending 네 on a verb stays 반말", "비가 오네.", Banmal, Banmal, "오네", ""},
			{"네 as 'your' is not the last word", "네 말이 맞아.", Banmal, Banmal, "맞아", ""},
		},
		"inverted order": {
			{"a conjunction after the polite verb", "아까 다 했어요 그러면.", Banmal, Jondaemal, "했어요", ViaInverted},
			{"a form of address in 님", "이쪽으로 와 주세요 선생님.", Banmal, Jondaemal, "주세요", ViaInverted},
			{"a spaced 씨 after a name is one trailer", "힘내세요 민수 씨.", Banmal, Jondaemal, "힘내세요", ViaInverted},
			{"two trailers fit the window", "오늘도 수고하셨어요 여러분 하하", Banmal, Jondaemal, "수고하셨어요", ViaInverted},
			{"three trailers do not", "수고하셨어요 여러분 정말 하하", Banmal, Banmal, "하하", ""},
			{"a 반말 verb before a trailer stays 반말", "알았어 그러면.", Banmal, Banmal, "그러면", ""},
			{"a quoted polite word before a verb is not inverted order", "걔가 계속 \"고마워요\" 그래.", Banmal, Banmal, "그래", ""},
			{"a noun exception is not a polite verb", "그거 필요 진짜.", Banmal, Banmal, "진짜", ""},
		},
		"clause fragment after a comma": {
			{"a 서 fragment after a polite clause", "감사합니다, 늘 챙겨 주셔서.", Banmal, Jondaemal, "감사합니다", ViaFragment},
			{"a 면 fragment", "좋아요, 시간 되면.", Banmal, Jondaemal, "좋아요", ViaFragment},
			{"a ㄴ데 fragment", "괜찮아요, 조금 늦었는데.", Banmal, Jondaemal, "괜찮아요", ViaFragment},
			{"a fragment after a 반말 clause stays 반말", "고마워, 와 줘서.", Banmal, Banmal, "줘서", ""},
			{"a quotative 고 ends a 반말 clause", "알겠어요, 금방 간다고.", Banmal, Banmal, "간다고", ""},
			{"a finished 반말 clause after the comma stays 반말", "알겠어요, 내가 할게.", Banmal, Banmal, "할게", ""},
		},
		"아니다": {
			{"아니다 is 해라체 although it ends in 니다", "그건 내 잘못이 아니다.", Jondaemal, Banmal, "아니다", ""},
			{"아닙니다 stays polite", "그것은 사실이 아닙니다.", Jondaemal, Jondaemal, "아닙니다", ViaEnding},
		},
		"asides and narration": {
			{"trailing narration in asterisks is set aside", "어서 오세요 *웃으며 고개를 숙인다*", Banmal, Jondaemal, "오세요", ViaEnding},
			{"a trailing aside in parentheses is set aside", "감사합니다 (꾸벅)", Banmal, Jondaemal, "감사합니다", ViaEnding},
			{"a trailing aside in square brackets is set aside", "주문하신 커피 나왔습니다 [진동벨이 울린다]", Banmal, Jondaemal, "나왔습니다", ViaEnding},
			{"a trailing aside in 「」 is set aside", "조심히 가세요 「그가 문을 나서는 것을 지켜본다」", Banmal, Jondaemal, "가세요", ViaEnding},
			{"an aside is set aside in a 반말 reply too", "됐어. (이 정도면 충분하겠지요)", Jondaemal, Banmal, "됐어", ""},
			{"marks inside narration do not split", "가 봐 *문 밖에서 \"실례합니다\" 하는 목소리. 그리고 \"들어가도 될까요?\"*", Jondaemal, Banmal, "봐", ""},
			{"a reply wrapped in 「」 is read as what it says", "「좋아요」", Jondaemal, Jondaemal, "좋아요", ViaEnding},
			{"bold in double asterisks is not narration", "천만에요 **정말로**", Banmal, Jondaemal, "천만에요", ViaInverted},
			{"an unclosed bracket sets nothing aside", "감사합니다 (꾸벅", Banmal, Banmal, "꾸벅", ""},
		},
	}
	for kind, cases := range kinds {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				if got := seed.Read(c.text).Style(); got != c.seed {
					t.Errorf("seed reads %q as %q, want %q", c.text, got, c.seed)
				}
				rd := ext.Read(c.text)
				if got := rd.Style(); got != c.ext {
					t.Fatalf("extended reads %q as %q, want %q (%+v)", c.text, got, c.ext, rd.Sentences)
				}
				last := rd.Sentences[len(rd.Sentences)-1]
				if last.Word != c.word || last.Via != c.via {
					t.Errorf("extended: word %q via %q, want %q via %q", last.Word, last.Via, c.word, c.via)
				}
			})
		}
	}
}

func TestExtendedAsidesAreReported(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		sentences []string
		asides    []Aside
	}{
		{"leading and trailing asides of one sentence", "*한숨을 쉬며* 알겠습니다 (정말 못 말린다)",
			[]string{"알겠습니다"},
			[]Aside{{AsideNarration, "*한숨을 쉬며*"}, {AsideBracket, "(정말 못 말린다)"}}},
		{"a piece that is only an aside is not a sentence", "안녕하세요. (꾸벅) 뭐 드릴까요?",
			[]string{"안녕하세요", "뭐 드릴까요"},
			[]Aside{{AsideBracket, "(꾸벅)"}}},
		{"narration spanning marks is one aside", "안녕하세요. *문을 연다. 자리에 앉는다* 뭐 드릴까요?",
			[]string{"안녕하세요", "뭐 드릴까요"},
			[]Aside{{AsideNarration, "*문을 연다. 자리에 앉는다*"}}},
		{"an aside inside the words stays in the sentence", "잠시만요 *서류를 뒤적인다* 여기 있네요",
			[]string{"잠시만요 *서류를 뒤적인다* 여기 있네요"}, nil},
		{"full-width parentheses", "어서 드세요 （식기 전에）", []string{"어서 드세요"}, []Aside{{AsideBracket, "（식기 전에）"}}},
		{"nested parentheses close at the matching one", "네 (웃음 (작게))", []string{"네"}, []Aside{{AsideBracket, "(웃음 (작게))"}}},
		{"a reply that is only an aside is read whole", "*고개를 끄덕인다*", []string{"*고개를 끄덕인다*"}, nil},
	}
	ext := Extended()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := ext.Read(tt.text)
			var got []string
			for _, s := range rd.Sentences {
				got = append(got, s.Text)
			}
			if !reflect.DeepEqual(got, tt.sentences) || !reflect.DeepEqual(rd.Asides, tt.asides) {
				t.Errorf("Read(%q) = sentences %q asides %q; want %q %q", tt.text, got, rd.Asides, tt.sentences, tt.asides)
			}
			if n := ext.Count(tt.text); n != len(tt.sentences) {
				t.Errorf("Count = %d, want %d", n, len(tt.sentences))
			}
		})
	}
	if rd := Seed().Read("감사합니다 (꾸벅)"); rd.Asides != nil || rd.Style() != Banmal {
		t.Errorf("seed sets nothing aside: %+v", rd)
	}
}

func TestReadingMixed(t *testing.T) {
	rd := Extended().Read("알았어. 내일 봬요. 그럼 간다.")
	if !rd.Mixed() || rd.Polite != 1 || rd.Plain() != 2 {
		t.Errorf("mixed reply: Mixed %v, %d polite, %d plain; want true, 1, 2", rd.Mixed(), rd.Polite, rd.Plain())
	}
	if rd := Extended().Read("네. 알겠어요."); rd.Mixed() || rd.Plain() != 0 {
		t.Errorf("all polite reply reads as mixed: %+v", rd)
	}
}

func TestSameFirstPerson(t *testing.T) {
	seed, ext := Seed(), Extended()
	tests := []struct {
		name          string
		logged, card  string
		declensions   []string
		seedOK, extOK bool
	}{
		{"the same word agrees in both", "저", "저", nil, true, true},
		{"제 is 저 declined", "제", "저", nil, false, true},
		{"제가 is 저 declined", "제가", "저", nil, false, true},
		{"내 is 나 declined", "내", "나", nil, false, true},
		{"내가 is 나 declined", "내가", "나", nil, false, true},
		{"저 against a card's 나 stays a mismatch", "저", "나", nil, false, false},
		{"제 against a card's 나 stays a mismatch", "제", "나", nil, false, false},
		{"a card's own declension agrees under extended", "소인이", "소인", []string{"소인이"}, false, true},
		{"an unlisted declension of a card's word does not", "소인은", "소인", []string{"소인이"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := seed.SameFirstPerson(tt.logged, tt.card, tt.declensions...); got != tt.seedOK {
				t.Errorf("seed: SameFirstPerson(%q, %q) = %v", tt.logged, tt.card, got)
			}
			if got := ext.SameFirstPerson(tt.logged, tt.card, tt.declensions...); got != tt.extOK {
				t.Errorf("extended: SameFirstPerson(%q, %q) = %v", tt.logged, tt.card, got)
			}
		})
	}
}

func TestRulesBelongToTheName(t *testing.T) {
	// a profile rebuilt from a stored run's name and endings (runstore.ProfileOf)
	rebuilt := (&Profile{Name: "extended"}).With(Extended().Endings, Extended().Exceptions)
	if got := rebuilt.Read("네.").Style(); got != Jondaemal {
		t.Errorf("rebuilt extended reads 네. as %q", got)
	}
	custom := (&Profile{Name: "mine"}).With(Extended().Endings, Extended().Exceptions)
	if got := custom.Read("네.").Style(); got != Banmal {
		t.Errorf("a custom name reads by the seed's rule, got %q", got)
	}
	r := Extended().Rules()
	r.Words[0] = "x"
	if Extended().Rules().Words[0] != "네" {
		t.Error("Rules returns shared slices")
	}
	if Seed().Rules().Window != 0 || Seed().Rules().Asides {
		t.Error("seed has reading rules")
	}
}
