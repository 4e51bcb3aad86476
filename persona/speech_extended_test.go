package persona

import (
	"strings"
	"testing"

	"evident/persona/speech"
)

// TestExtendedSpeechInTheJudge covers issue 14 items 1-2 as the judge sees
// them: first-person declensions, asides and mixed styles in the hedge, and
// the ten checks passing on records whose sentence count differs from the
// seed's Count.
func TestExtendedSpeechInTheJudge(t *testing.T) {
	seed, ext := newTestJudge(t, nil), newTestJudge(t, speech.Extended())
	c2 := func(reply, fp string) Turn {
		return Turn{TurnID: "T1", SessionID: "S1", CharacterID: "C2", ModelID: "m", ReplyText: sp(reply),
			FirstPerson: sp(fp), NamedEntities: []string{}}
	}
	tests := []struct {
		name                string
		turn                Turn
		seedV, extV         Verdict
		extHedge, extSumHas string
	}{
		{"the log's 제가 agrees with a card's 저 under extended", c2("제가 도와드릴게요.", "제가"), SpeechOff, Kept, "", ""},
		{"the log's 내 against a 반말 card's 나 agrees under extended", func() Turn { tu := turn("T1", "내 검을 봐."); tu.FirstPerson = sp("내"); return tu }(),
			SpeechOff, Kept, "", ""},
		{"trailing narration no longer flips a polite reply", c2("네, 알겠어요 *고개를 끄덕인다*", "저"), SpeechOff, Kept,
			"별표 서술 1개는 캐릭터의 말이 아니어서 말투 판정에서 뺐습니다.", ""},
		{"narration spanning sentence marks is one aside and the count follows extended",
			c2("안녕하세요. *문을 연다. 자리에 앉는다* 뭐 드릴까요?", "저"), Kept, Kept,
			"별표 서술 1개는", "두 문장"},
		{"a mixed reply says how many sentences of each", c2("알았어. 내일 봬요. 그럼 간다.", "저"), Kept, Kept,
			"한 답장에 존댓말 한 문장과 반말 두 문장이 섞여 있습니다.", ""},
		{"an inverted polite sentence to a 반말 card quotes the polite verb", turn("T1", "이쪽으로 와 주세요 선생님."), Kept, SpeechOff, "", "「주세요」"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, _ := seed.Judge(&tt.turn, 0, nil)
			re, err := ext.Judge(&tt.turn, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rs.Verdict != tt.seedV || re.Verdict != tt.extV {
				t.Errorf("verdicts seed %q extended %q, want %q %q", rs.Verdict, re.Verdict, tt.seedV, tt.extV)
			}
			if tt.extHedge != "" && (re.Hedge == nil || !strings.Contains(*re.Hedge, tt.extHedge)) {
				t.Errorf("extended hedge = %s, want it to contain %q", show(re.Hedge), tt.extHedge)
			}
			if tt.extSumHas != "" && !strings.Contains(re.Summary, tt.extSumHas) {
				t.Errorf("extended summary %q lacks %q", re.Summary, tt.extSumHas)
			}
			for _, res := range ext.Check(&re, Context{Turn: &tt.turn}) {
				if !res.Pass {
					t.Errorf("extended record fails check %d: %s", res.ID, res.Reason)
				}
			}
		})
	}
}
