package persona

import (
	"fmt"
	"testing"
)

// TestCheckTenAnswersTheSameWithItsMemo: check 10 through the judge's memo
// of recent summaries gives, for 6,000 distinct summaries read twice (more
// than the memo's 4,096 slots, so summaries share slots and replace each
// other), the answer the memo-free reading gives: hand-checked on three of
// them (one 존댓말 sentence passes; two sentences, and 반말, fail with their
// reasons).
func TestCheckTenAnswersTheSameWithItsMemo(t *testing.T) {
	j := newTestJudge(t, nil)
	bare := *j
	bare.memo = nil
	hand := map[string]string{
		"답장 1번은 반말로 끝났습니다.":           "",
		"답장 2번은 반말로 끝났습니다. 두 문장입니다.":  "summary has 2 sentences, want one",
		"답장 3번은 반말로 끝났어.":             "summary does not end in 존댓말",
		"「먹쇠. 왔어」라는 말이 답장 4번에 있었습니다.": "",
	}
	var summaries []string
	for s := range hand {
		summaries = append(summaries, s)
	}
	for i := range 6000 {
		ending := []string{"습니다.", "어.", "습니다. 또 있습니다."}[i%3]
		summaries = append(summaries, fmt.Sprintf("%d번 회차의 답장을 읽%s", i, ending))
	}
	for pass := range 2 {
		for _, s := range summaries {
			ok, why := j.oneJondaemalSentence(s)
			wantOK, wantWhy := bare.readSummary(s)
			if ok != wantOK || why != wantWhy {
				t.Fatalf("pass %d, %q: memo says %v %q, reading says %v %q", pass, s, ok, why, wantOK, wantWhy)
			}
			if w, handChecked := hand[s]; handChecked && (why != w || ok != (w == "")) {
				t.Fatalf("%q: %v %q, want the hand-checked %q", s, ok, why, w)
			}
		}
	}
}
