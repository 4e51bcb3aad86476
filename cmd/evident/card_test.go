package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const seraphina = "../../../shared/data/cards/sillytavern-seraphina-v2-v3-lorebook.png"

// TestCardRoundTrip reads a real Character Card V3 PNG, writes the judge's
// fields into it, judges a turn against the written PNG, and reads it back.
func TestCardRoundTrip(t *testing.T) {
	if _, err := os.Stat(seraphina); err != nil {
		t.Skipf("the shared card files are not here (%v)", err)
	}
	dir := t.TempDir()

	t.Run("reading a card without our fields prefills canon and names the guesses", func(t *testing.T) {
		out, errOut, err := evident(t, "card", "read", seraphina)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			CharacterID   string   `json:"character_id"`
			HonorificRule string   `json:"honorific_rule"`
			CanonEntities []string `json:"canon_entities"`
		}
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		if c.CharacterID != "Seraphina" || c.HonorificRule != "" || len(c.CanonEntities) != 16 || c.CanonEntities[0] != "Seraphina" {
			t.Errorf("card %+v", c)
		}
		if !strings.Contains(errOut, "guessed canon_entities") || !strings.Contains(errOut, "empty honorific_rule") {
			t.Errorf("stderr %q", errOut)
		}
	})

	t.Run("judging against a card without a speech rule stops with the reason", func(t *testing.T) {
		turns := write(t, dir, "t.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"Seraphina","model_id":"m","reply_text":"어서 와요.","first_person":null,"named_entities":[]}`+"\n")
		lex := write(t, dir, "l.csv", "term,topic\n")
		_, _, err := evident(t, "judge", "--turns", turns, "--cards", seraphina, "--lexicon", lex)
		if err == nil || !strings.Contains(err.Error(), "honorific_rule and first_person are neither") || exitCode(err) != 2 {
			t.Errorf("err = %v (exit %d)", err, exitCode(err))
		}
	})

	row := write(t, dir, "row.json", `{"character_id":"SERA","name":"세라피나","honorific_rule":"존댓말","first_person":"저","canon_entities":["엘도리아","Seraphina"],"forbidden_topics":["현실 정치"],"entity_roles":[]}`)
	png := filepath.Join(dir, "sera.png")
	if _, _, err := evident(t, "card", "write", seraphina, "--card", row, "--out", png); err != nil {
		t.Fatal(err)
	}

	t.Run("the written PNG reads back with our fields", func(t *testing.T) {
		out, _, err := evident(t, "card", "read", png)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, `"character_id":"SERA"`) || !strings.Contains(out, `"honorific_rule":"존댓말"`) || !strings.Contains(out, `"canon_entities":["엘도리아","Seraphina"]`) {
			t.Errorf("read back %s", out)
		}
	})

	t.Run("the written PNG judges turns like a table row", func(t *testing.T) {
		turns := write(t, dir, "t2.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"SERA","model_id":"m","reply_text":"엘도리아 숲에 온 걸 환영해요.","first_person":"저","named_entities":["엘도리아"]}`+"\n"+
			`{"turn_id":"T2","session_id":"S","character_id":"SERA","model_id":"m","reply_text":"선거 얘기는 하지 말아요.","first_person":"저","named_entities":[]}`+"\n")
		lex := write(t, dir, "l2.csv", "term,topic\n선거,현실 정치\n")
		out, errOut, err := evident(t, "judge", "--turns", turns, "--cards", png, "--lexicon", lex)
		if err != nil {
			t.Fatal(err)
		}
		got := verdicts(t, out)
		if got["T1"] != "설정대로 말함" || got["T2"] != "금지 소재 접촉" {
			t.Errorf("verdicts %v (stderr %q)", got, errOut)
		}
	})
}
