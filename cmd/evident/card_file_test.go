package main

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// charxWithPrefix builds a CHARX: prefix bytes, then a zip holding card.json
// and the given asset entries.
func charxWithPrefix(t *testing.T, prefix, card string, assets map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range map[string]string{"card.json": card} {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	for name, body := range assets {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return append([]byte(prefix), buf.Bytes()...)
}

// pngWithText builds a 1×1 PNG with one tEXt chunk kw = base64(js).
func pngWithText(kw, js string) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	put := func(typ string, data []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		buf.Write(n[:])
		buf.WriteString(typ)
		buf.Write(data)
		binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(append([]byte(typ), data...)))
		buf.Write(n[:])
	}
	put("IHDR", []byte{0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0})
	put("tEXt", []byte(kw+"\x00"+base64.StdEncoding.EncodeToString([]byte(js))))
	put("IEND", nil)
	return buf.Bytes()
}

func TestCardReadReportsTheFile(t *testing.T) {
	dir := t.TempDir()
	card := `{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"하늘","description":"누구에게나 존댓말을 쓴다. 1인칭은 '저'.",` +
		`"character_book":null,"tags":"a, b","x-app":{"k":[1.50]},` +
		`"assets":[{"type":"icon","uri":"embeded://assets/icon/images/main.png","name":"main","ext":"png"},` +
		`{"type":"emotion","uri":"embedded://../../etc/passwd","name":"evil","ext":""}]}}`
	charx := filepath.Join(dir, "hanul.charx")
	if err := os.WriteFile(charx, charxWithPrefix(t, "0123456789", card, map[string]string{"assets/icon/images/main.png": "PNGDATA"}), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := evident(t, "card", "read", charx)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("stderr names the container, the prefix, each fault and each asset", func(t *testing.T) {
		for _, line := range []string{
			`read from CHARX zip entry "card.json", 10 bytes before the zip (chara_card_v3 3.0)`,
			"fault data.character_book: null where an object is expected (ignored, written back unchanged)",
			"fault data.tags: string where a list is expected (ignored, written back unchanged)",
			`asset icon "main" embeded://assets/icon/images/main.png: 7 bytes from zip entry "assets/icon/images/main.png"`,
			`asset emotion "evil" embedded://../../etc/passwd: refused: the path escapes the archive (..): "../../etc/passwd"`,
			`guessed honorific_rule: guessed 존댓말: the card's prose says so`,
			`guessed first_person: guessed 저: the card's prose says so`,
		} {
			if !strings.Contains(errOut, line) {
				t.Errorf("stderr lacks %q:\n%s", line, errOut)
			}
		}
	})
	t.Run("judge with the card file names the fields it did not read", func(t *testing.T) {
		turns := write(t, dir, "t.jsonl", `{"turn_id":"T1","session_id":"S","character_id":"하늘","model_id":"m","reply_text":"어서 오세요.","first_person":null,"named_entities":[]}`+"\n")
		lex := write(t, dir, "l.csv", "term,topic\n")
		_, errOut, err := evident(t, "judge", "--turns", turns, "--cards", charx, "--lexicon", lex)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{
			charx + ": field not read: data.character_book: null where an object is expected",
			charx + ": field not read: data.tags: string where a list is expected",
		} {
			if !strings.Contains(errOut, line) {
				t.Errorf("stderr lacks %q:\n%s", line, errOut)
			}
		}
	})
	t.Run("stdout is the character_card row with the guesses from the description", func(t *testing.T) {
		var c struct {
			HonorificRule string `json:"honorific_rule"`
			FirstPerson   string `json:"first_person"`
		}
		if err := json.Unmarshal([]byte(out), &c); err != nil || c.HonorificRule != "존댓말" || c.FirstPerson != "저" {
			t.Errorf("row %s (%v)", out, err)
		}
	})
	t.Run("card write keeps the faulty fields and unknown keys byte for byte", func(t *testing.T) {
		row := write(t, dir, "row.json", `{"character_id":"h","name":"하늘","honorific_rule":"존댓말","first_person":"저","canon_entities":["하늘"],"forbidden_topics":[],"entity_roles":[]}`)
		js := filepath.Join(dir, "out.json")
		if _, _, err := evident(t, "card", "write", charx, "--card", row, "--out", js); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		// The card had no data.extensions: it is added after data's last
		// member (assets), and nothing else changes.
		want := card
		i := strings.Index(want, `]}}`)
		want = want[:i+1] + `,"extensions":{"evident/persona":{"canon_entities":["하늘"],"character_id":"h","entity_roles":[],"first_person":"저","forbidden_topics":[],"honorific_rule":"존댓말"}}` + want[i+1:]
		if string(b) != want {
			t.Errorf("written\n%s\nwant\n%s", b, want)
		}
	})
}

func TestCardReadV1PNG(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "v1.png")
	if err := os.WriteFile(p, pngWithText("chara", `{"name":"하늘","first_mes":"왔어? 나는 하늘이야.","personality":null}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := evident(t, "card", "read", p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, `read from PNG tEXt chunk "chara", Character Card V1 imported as V2 (chara_card_v2 2.0)`) ||
		!strings.Contains(errOut, "fault personality: null where a string is expected") {
		t.Errorf("stderr %s", errOut)
	}
	if !strings.Contains(out, `"honorific_rule":"반말"`) || !strings.Contains(out, `"first_person":"나"`) {
		t.Errorf("row %s", out)
	}
}
