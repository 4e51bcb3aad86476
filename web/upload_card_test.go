package web_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"testing"

	"evident/persona/cardfile"
	"evident/store"
	"evident/web"
)

// cardPNG is a 1×1 PNG carrying a Character Card V2 whose evident/persona
// extension gives the judge's fields (as `evident card write --out x.png`
// writes one).
func cardPNG(t *testing.T) []byte {
	t.Helper()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	doc := `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"하나","description":"등대를 지키는 아이",
"personality":"","scenario":"","first_mes":"","mes_example":"","extensions":{"evident/persona":
{"character_id":"C-PNG","honorific_rule":"반말","first_person":"나","canon_entities":["등대"]}}}}`
	f, err := cardfile.Read("hana.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := cardfile.PNG(img.Bytes(), f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUploadCardFile(t *testing.T) {
	ctx := context.Background()
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	token := c.csrf()

	t.Run("the upload form accepts .png and .charx character cards", func(t *testing.T) {
		mustContain(t, c.ok("/upload"), `accept=".jsonl,.ndjson,.json,.csv,.png,.charx"`)
	})
	t.Run("a .png card uploaded with a turn log is imported as the dataset's one card and judged", func(t *testing.T) {
		turns := `{"turn_id":"P1","session_id":"S1","character_id":"C-PNG","model_id":"m","reply_text":"나는 등대를 지켜.","first_person":"나","named_entities":["등대"]}
{"turn_id":"P2","session_id":"S1","character_id":"C-PNG","model_id":"m","reply_text":"저는 등대를 지켜요.","first_person":"저","named_entities":["등대"]}
`
		p := c.upload("/upload", map[string]string{"csrf": token, "name": "카드 PNG"}, map[string][2]string{
			"turns":   {"turns.jsonl", turns},
			"cards":   {"hana.png", string(cardPNG(t))},
			"lexicon": {"lexicon.jsonl", `{"term":"선거","topic":"현실 정치"}` + "\n"},
		})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/2" {
			t.Fatalf("upload = %d → %q\n%s", p.status, p.header.Get("Location"), p.body)
		}
		run, err := db.Run(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		cards, err := db.Cards(ctx, run.DatasetID)
		if err != nil || len(cards) != 1 || cards[0].CharacterID != "C-PNG" || cards[0].Name != "하나" ||
			cards[0].HonorificRule != "반말" || cards[0].FirstPerson != "나" {
			t.Fatalf("cards %+v, %v", cards, err)
		}
		// 반말 card: the polite second reply is the speech verdict.
		recs, err := db.Records(ctx, 2, store.Filter{})
		if err != nil || len(recs) != 2 || recs[0].Verdict != "설정대로 말함" || recs[1].Verdict != "말투 어긋남" {
			t.Fatalf("records %+v, %v", recs, err)
		}
	})
	t.Run("a card file given as the turn log is refused with the formats it may have", func(t *testing.T) {
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{"turns": {"hana.png", string(cardPNG(t))}})
		if p.status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d\n%s", p.status, p.body)
		}
		mustContain(t, p.body, "회차 로그(chat_turn) 파일 형식을 알 수 없습니다", "hana.png")
	})
}
