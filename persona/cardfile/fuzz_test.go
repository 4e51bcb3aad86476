package cardfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzRead checks that Read never panics and that whatever it accepts goes
// through Card → SetPersona → JSON (and PNG for PNG input) → Read again
// without error and with the same card. Crashers found are kept under
// testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	f.Add([]byte(koreanCard))
	f.Add([]byte(v2(`{"name":"A","extensions":{"evident/persona":{"honorific_rule":"반말","canon_entities":["A"],"entity_roles":[{"role":"동생","entity":"B"}]}}}`)))
	f.Add([]byte(`{"name":"B","first_mes":"hi"}`))
	f.Add(pngOf(tEXt("chara", v2(`{"name":"Old"}`)), zTXt("ccv3", v3(`{"name":"New","first_mes":"저는 가요."}`))))
	f.Add(pngOf(iTXt("ccv3", koreanCard)))
	f.Add(zipOf(f, "prefix", [2]string{"x/card.json", v3(`{"name":"하늘"}`)}))
	// V1 cards, faulty fields, CHARX assets and a prefix (issue 14 item 5).
	f.Add([]byte(`{"name":"A","first_mes":null,"mes_example":"{{char}}: 저는 가요."}`))
	f.Add(pngOf(tEXt("chara", `{"name":"V1","first_mes":"안녕.","personality":["x"]}`)))
	f.Add([]byte(v2(`{"name":"A","character_book":null,"tags":"a, b","extensions":null,"alternate_greetings":[1]}`)))
	f.Add([]byte("{\n \"spec\": \"chara_card_v3\", \"data\": {\"name\": \"A\", \"extensions\": { }, \"x\": [1.50, \"\\u00e9\"]}}"))
	f.Add(zipOf(f, "MZ stub", [2]string{"card.json", v3(`{"name":"A","description":"1인칭은 '저'. 존댓말을 쓴다.","assets":[{"type":"icon","uri":"embeded://a.png","name":"main","ext":"png"},{"uri":"embedded://../x"},"x"]}`)}, [2]string{"a.png", "png"}))
	// The smallest real card, when the shared folder is there.
	if b, err := os.ReadFile(filepath.Join(cardsDir, "choral-default-chan-v3-ccv3-only.png")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Read("fuzz", b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		_ = file.Origin()
		for _, x := range file.Faults() {
			if x.Path == "" || x.Want == "" || x.Got == "" {
				t.Fatalf("fault with an empty part: %+v", x)
			}
		}
		for _, a := range file.Assets() {
			if a.Data != nil && (a.Problem != "" || unsafePath(strings.ReplaceAll(a.Path, `\`, "/")) != "") {
				t.Fatalf("asset read from an unsafe path or with a problem: %+v", a)
			}
		}
		if js, err := file.JSON(); err != nil || (!file.FromV1 && !json.Valid(js)) {
			t.Fatalf("JSON before SetPersona: %v %q", err, js)
		}
		c, _ := file.Card("")
		if c.CanonEntities == nil || c.ForbiddenTopics == nil || c.EntityRoles == nil {
			t.Fatalf("Card has a nil list: %+v", c)
		}
		if err := file.SetPersona(c); err != nil {
			t.Fatalf("SetPersona of Card's own card: %v", err)
		}
		js, err := file.JSON()
		if err != nil {
			t.Fatalf("JSON: %v", err)
		}
		again, err := Read("fuzz.json", js)
		if err != nil {
			t.Fatalf("reading the export %q: %v", js, err)
		}
		if got, _ := again.Card(""); !reflect.DeepEqual(got, c) {
			t.Fatalf("card after JSON round trip = %+v, want %+v", got, c)
		}
		if file.Format != FormatPNG {
			return
		}
		out, err := PNG(b, file)
		if err != nil {
			t.Fatalf("PNG of a PNG that Read accepted: %v", err)
		}
		again, err = Read("fuzz.png", out)
		if err != nil {
			t.Fatalf("reading the rewritten PNG: %v", err)
		}
		if got, _ := again.Card(""); !reflect.DeepEqual(got, c) {
			t.Fatalf("card after PNG round trip = %+v, want %+v", got, c)
		}
	})
}
