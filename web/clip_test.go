package web_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"evident/persona/ingest"
	"evident/persona/speech"
	"evident/runstore"
	"evident/web"
)

func textSource(t *testing.T, name, body string) ingest.Source {
	t.Helper()
	f, err := ingest.FormatOf(name)
	if err != nil {
		t.Fatal(err)
	}
	return ingest.NewTable(name, f, func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil })
}

// TestAHugeReplyIsShownClipped: a 1 MB reply (any length is judged) is
// shown on the run page as its first 64 KiB, cut at a character boundary,
// with the number of bytes left out, in the marked reply and in the
// evidence table alike — not rendered whole (a test user's 42 MB live turn
// made a 115 MB page). The export keeps every byte.
func TestAHugeReplyIsShownClipped(t *testing.T) {
	ctx := context.Background()
	db := demoStore(t)
	reply := "등대" + strings.Repeat("가", 350_000) + "야." // 6 + 1,050,000 + 4 = 1,050,010 bytes
	turns := `{"turn_id":"BIG-1","session_id":"S-BIG","character_id":"CHR-0100","model_id":"m","reply_text":"` + reply +
		`","first_person":"나","named_entities":[],"user_asked_recall":false}` + "\n"
	cards := demoFile(t, "cards.json")
	runID, _, err := runstore.JudgeToStore(ctx, db, textSource(t, "big.jsonl", turns), textSource(t, "cards.json", cards),
		textSource(t, "lexicon.csv", "term,topic\n"), speech.Seed())
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, db, web.Options{})
	body := c.ok(fmt.Sprintf("/runs/%d", runID))
	// 65,536 bytes is inside a 3-byte 가 (65,536 = 6 + 3·21,843 + 1): the
	// cut falls back to 65,535, leaving 1,050,010 - 65,535 bytes.
	const note = "(984475바이트 더 있음: 전문은 기록 JSONL·CSV 내보내기에 있습니다)"
	if n := strings.Count(body, note); n != 2 { // the marked reply and the evidence table
		t.Errorf("the note appears %d times, want 2", n)
	}
	if len(body) > 400_000 {
		t.Errorf("page is %d bytes: the reply was not clipped", len(body))
	}
	if exp := c.ok(fmt.Sprintf("/runs/%d/records.jsonl", runID)); !strings.Contains(exp, reply) {
		t.Error("the export lost the full reply")
	}
}
