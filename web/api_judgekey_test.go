package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"evident/persona"
	"evident/store"
	"evident/web"
)

// The live API keeps each dataset's judge between requests and judges with
// it only while its cards are the stored ones (store.JudgeLiveKeyed checks
// in the write transaction): a card updated between two requests (here the
// character's honorific rule, banmal → jondaemal) decides the next turn's
// verdict; a dataset imported since becomes the latest one, so a turn of a
// character only it has a card for is judged, not refused with 422, and a
// turn of an older character goes to the new dataset's live run.
func TestTheLiveAPIJudgesWithTheCardsStoredNow(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "evident.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, _, err := web.EnsureDemo(ctx, db); err != nil {
		t.Fatal(err)
	}
	s, err := web.New(db, web.Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	post := func(id, character string) (int, persona.Record) {
		t.Helper()
		body := `{"turn_id":"` + id + `","session_id":"S-` + id + `","character_id":"` + character + `","model_id":"m","prompt_id":"P-001","created_at":"2026-10-03T21:00:00+09:00","user_message":"안녕하세요?","reply_text":"들어와. 바람 찬데 문간에 서 있지 말고.","first_person":null,"named_entities":[],"honorific_level":"반말","user_asked_recall":false}`
		resp, err := http.Post(ts.URL+"/api/v1/turns", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r persona.Record
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
		}
		return resp.StatusCode, r
	}
	if code, r := post("K1", "CHR-0100"); code != http.StatusOK || r.Verdict == persona.SpeechOff {
		t.Fatalf("banmal reply of a banmal card: %d %s", code, r.Verdict)
	}
	cards, err := db.Cards(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var card persona.Card
	for _, c := range cards {
		if c.CharacterID == "CHR-0100" {
			card = c
		}
	}
	if card.HonorificRule != persona.Banmal {
		t.Fatalf("demo card CHR-0100: honorific rule %q, want %q", card.HonorificRule, persona.Banmal)
	}
	card.HonorificRule = persona.Jondaemal
	if err := db.UpdateCard(ctx, 1, card); err != nil {
		t.Fatal(err)
	}
	if code, r := post("K2", "CHR-0100"); code != http.StatusOK || r.Verdict != persona.SpeechOff {
		t.Fatalf("banmal reply after the card became jondaemal: %d %s, want %s", code, r.Verdict, persona.SpeechOff)
	}

	if code, _ := post("K3", "CHR-NEW"); code != http.StatusUnprocessableEntity {
		t.Fatalf("a character with no card: %d, want 422", code)
	}
	fresh := persona.Card{CharacterID: "CHR-NEW", Name: "새", HonorificRule: persona.Banmal, FirstPerson: "나"}
	ds2, err := db.ImportDataset(ctx, "second", nil, []persona.Card{fresh, {CharacterID: "CHR-0100", Name: card.Name, HonorificRule: persona.Banmal, FirstPerson: card.FirstPerson}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, r := post("K3", "CHR-NEW"); code != http.StatusOK || r.CharacterID != "CHR-NEW" {
		t.Fatalf("CHR-NEW after the second dataset: %d %+v, want judged", code, r)
	}
	if code, r := post("K4", "CHR-0100"); code != http.StatusOK || r.Verdict == persona.SpeechOff {
		t.Fatalf("CHR-0100 with the second dataset's banmal card: %d %s", code, r.Verdict)
	}
	run2, ok, err := db.LiveRunID(ctx, ds2)
	if err != nil || !ok {
		t.Fatalf("the second dataset's live run: %v %v", ok, err)
	}
	info, err := db.Run(ctx, run2)
	if err != nil || info.Tally.Judged != 2 {
		t.Fatalf("the second dataset's live run: %+v %v, want K3 and K4", info.Tally, err)
	}
}
