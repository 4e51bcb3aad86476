package speech

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"two sentences split at periods", "검을 잡아. 오늘은 손목부터 본다.", []string{"검을 잡아", "오늘은 손목부터 본다"}},
		{"text after the last mark is a sentence", "동생? 글쎄, 그런 얘길 들은 적 있던가", []string{"동생", "글쎄, 그런 얘길 들은 적 있던가"}},
		{"full-width marks and ellipsis split", "좋아！ 정말？ 음…그래．", []string{"좋아", "정말", "음", "그래"}},
		{"runs of marks leave no empty pieces", "뭐?!... 진짜", []string{"뭐", "진짜"}},
		{"empty text has no sentence", "", nil},
		{"marks only have no sentence", "...!?", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Split(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLastWord(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"an emoji after the word is stripped", "드릴게요 😊", "드릴게요"},
		{"quotes tildes and ㅋㅋ are stripped", "좋아요~ㅋㅋ\"", "좋아요"},
		{"the last of several words is taken", "오늘은 손목부터 본다", "본다"},
		{"a sentence without Hangul has no word", "OK 😊", ""},
		{"Latin before trailing Hangul stays in the word", "최고OK요", "최고OK요"},
		{"a tab separates words", "그래\t알겠어", "알겠어"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LastWord(tt.in); got != tt.want {
				t.Errorf("LastWord(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEnding(t *testing.T) {
	seed, ext := Seed(), Extended()
	tests := []struct {
		name          string
		word          string
		seedE, extE   string // "" = 반말
		seedIs, extIs bool
	}{
		{"요 is polite in both profiles", "생각해요", "요", "요", true, true},
		{"죠 is polite in both profiles", "하죠", "죠", "죠", true, true},
		{"니다 is polite in both profiles", "합니다", "니다", "니다", true, true},
		{"십시오 is polite in both profiles", "오십시오", "십시오", "십시오", true, true},
		{"습니까 is 반말 under seed and polite under extended", "있습니까", "", "ㅂ니까", false, true},
		{"ㅂ니까 after a ㅂ-coda syllable is polite under extended", "갑니까", "", "ㅂ니까", false, true},
		{"니까 without a ㅂ coda is not polite", "그러니까", "", "", false, false},
		{"십쇼 is polite only under extended", "가십쇼", "", "십쇼", false, true},
		{"the noun 필요 is polite under seed and an exception under extended", "필요", "요", "", true, false},
		{"the noun 중요 is an exception under extended", "중요", "요", "", true, false},
		{"a 반말 ending is 반말 in both", "본다", "", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := seed.Ending(tt.word); got != tt.seedE {
				t.Errorf("seed.Ending(%q) = %q, want %q", tt.word, got, tt.seedE)
			}
			if got := ext.Ending(tt.word); got != tt.extE {
				t.Errorf("extended.Ending(%q) = %q, want %q", tt.word, got, tt.extE)
			}
		})
	}
}

func TestReadStyle(t *testing.T) {
	seed := Seed()
	tests := []struct {
		name   string
		text   string
		style  string
		count  int
		polite int
	}{
		{"a 반말 reply of two sentences", "검을 잡아. 오늘은 손목부터 본다.", Banmal, 2, 0},
		{"a 존댓말 reply of two sentences", "저는 그렇게 생각해요. 오늘은 조금 더 쉬시는 게 좋겠어요.", Jondaemal, 2, 2},
		{"one polite sentence makes a mixed reply 존댓말", "알았어. 내일 봬요.", Jondaemal, 2, 1},
		{"a sentence without Hangul is not counted", "OK!! 알았어.", Banmal, 1, 0},
		{"a reply without Hangul has no style", "... 😊", "", 0, 0},
		{"a polite ending inside the sentence does not count", "네요 그건 아니야", Banmal, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := seed.Read(tt.text)
			if rd.Style() != tt.style || len(rd.Sentences) != tt.count || rd.Polite != tt.polite {
				t.Errorf("Read(%q) = style %q, %d sentences, %d polite; want %q, %d, %d",
					tt.text, rd.Style(), len(rd.Sentences), rd.Polite, tt.style, tt.count, tt.polite)
			}
			if got := Count(tt.text); got != tt.count {
				t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.count)
			}
		})
	}
}

func TestReadEndings(t *testing.T) {
	in := "\uFEFF# extra endings\n구려\r\n\n!과요\n  ㅂ시다  \n"
	e, x, err := ReadEndings(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e, []string{"구려", "ㅂ시다"}) || !reflect.DeepEqual(x, []string{"과요"}) {
		t.Fatalf("ReadEndings = %q, %q", e, x)
	}
	p := Seed().With(e, x)
	if got := p.Ending("갑시다"); got != "ㅂ시다" {
		t.Errorf("added ending ㅂ시다: Ending(갑시다) = %q", got)
	}
	if got := p.Ending("과요"); got != "" {
		t.Errorf("added exception 과요: Ending(과요) = %q, want none", got)
	}
	if got := Seed().Ending("갑시다"); got != "" {
		t.Errorf("With must not change the seed profile, got %q", got)
	}

	for _, tt := range []struct{ name, in string }{
		{"an ending with a space", "요\n해 요\n"},
		{"a final consonant alone", "요\nㅂ\n"},
		{"an ending without Hangul", "요\nabc\n"},
		{"a bare exception mark", "요\n!\n"},
	} {
		t.Run(tt.name+" is an error naming the line", func(t *testing.T) {
			_, _, err := ReadEndings(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("err = %v, want line 2", err)
			}
		})
	}
}

func TestByName(t *testing.T) {
	for _, n := range []string{"seed", "extended"} {
		p, err := ByName(n)
		if err != nil || p.Name != n {
			t.Errorf("ByName(%q) = %v, %v", n, p, err)
		}
	}
	if _, err := ByName("fancy"); err == nil {
		t.Error("ByName(fancy) succeeded")
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{"검을 잡아. 오늘은 손목부터 본다.", "드릴게요 😊", "…", "갑니까?", "\xff\xfe요", "a.b?c!",
		"어서 오세요 *웃으며. 고개를 숙인다*", "(꾸벅) 네. (웃음", "「좋아요」", "**정말요** *", "와 주세요 민수 씨", "감사합니다, 와 주셔서"} {
		f.Add(s)
	}
	ext := Extended()
	f.Fuzz(func(t *testing.T, s string) {
		rd := ext.Read(s)
		if rd.Polite > len(rd.Sentences) {
			t.Fatalf("%d polite of %d sentences", rd.Polite, len(rd.Sentences))
		}
		if n := len(Seed().Read(s).Sentences); Count(s) != n {
			t.Fatalf("Count = %d, seed's Read counted %d", Count(s), n)
		}
		// extended only merges pieces (marks inside asides) and drops
		// set-aside ones, so it never counts more than the seed
		if ext.Count(s) != len(rd.Sentences) || len(rd.Sentences) > Count(s) {
			t.Fatalf("extended counted %d (Count %d), seed %d", len(rd.Sentences), ext.Count(s), Count(s))
		}
		for _, a := range rd.Asides {
			if !strings.Contains(s, a.Text) {
				t.Fatalf("aside %q not in text", a.Text)
			}
		}
		for _, st := range rd.Sentences {
			if st.LastWord == "" || !strings.Contains(s, st.LastWord) {
				t.Fatalf("last word %q not in text", st.LastWord)
			}
		}
	})
}
