package web_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"evident/persona/speech"
	"evident/runstore"
	"evident/web"
)

// TestALongEmojiReplyIsClippedOnWholeClusters: a 67 KB reply of family
// emoji (👨‍👩‍👧‍👦, four emoji joined by three U+200D, one 25-byte grapheme
// cluster) after one syllable is shown on the run page and in the report
// clipped before 64 KiB at the last whole family: 3 + 2,621 × 25 = 65,528
// bytes kept, 68,603 - 65,528 = 3,075 left out. The rune-boundary cut kept
// 65,535 bytes, ending in 👨 and a lone U+200D before the note (3,068 left).
func TestALongEmojiReplyIsClippedOnWholeClusters(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"
	ctx := context.Background()
	db := demoStore(t)
	reply := "가" + strings.Repeat(family, 2744) // 3 + 68,600 = 68,603 bytes
	turns := `{"turn_id":"EMOJI-1","session_id":"S-EMOJI","character_id":"CHR-0100","model_id":"m","reply_text":"` + reply +
		`","first_person":"나","named_entities":[],"user_asked_recall":false}` + "\n"
	runID, _, err := runstore.JudgeToStore(ctx, db, textSource(t, "emoji.jsonl", turns), textSource(t, "cards.json", demoFile(t, "cards.json")),
		textSource(t, "lexicon.csv", "term,topic\n"), speech.Seed())
	if err != nil {
		t.Fatal(err)
	}
	const note = " … (3075바이트 더 있음: 전문은 기록 JSONL·CSV 내보내기에 있습니다)"
	c := serve(t, db, web.Options{})
	var report bytes.Buffer
	if err := web.WriteReport(ctx, db, runID, &report); err != nil {
		t.Fatal(err)
	}
	for _, page := range []struct{ name, body string }{
		{"run page", c.ok(fmt.Sprintf("/runs/%d", runID))},
		{"report --html", report.String()},
	} {
		t.Run(page.name, func(t *testing.T) {
			// The marked reply: its text, then the note in its own <mark>.
			if !strings.Contains(page.body, family+family+`<mark class="clipped"`) {
				t.Errorf("the marked reply does not end in a whole family before the note")
			}
			// The evidence table's reply_text cell: text and note together.
			if !strings.Contains(page.body, family+family+note) {
				t.Errorf("the evidence value does not end in a whole family before %q", note)
			}
			if n := strings.Count(page.body, "3075바이트 더 있음"); n != 2 {
				t.Errorf("the note with 3,075 bytes left appears %d times, want 2", n)
			}
			if strings.Contains(page.body, "\u200D<mark") || strings.Contains(page.body, "\u200D …") {
				t.Error("a clipped text ends in a lone U+200D")
			}
		})
	}
}
