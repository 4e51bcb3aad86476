package cardfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
)

var seraphinaCanon = []string{"Seraphina",
	"eldoria", "wood", "forest", "magical forest",
	"shadowfang", "beast", "monster", "monsters", "beasts",
	"glade", "safe haven", "refuge",
	"power", "magic", "ability"}

func TestReadRealFiles(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		source      string
		spec        string
		cardName    string
		canon       []string
		err         error
		errContains []string
	}{
		{name: "the Seraphina PNG with both chunks is read from ccv3 with its lorebook keys as canon",
			file: "sillytavern-seraphina-v2-v3-lorebook.png", source: "ccv3", spec: SpecV3,
			cardName: "Seraphina", canon: seraphinaCanon},
		{name: "the Flux the Cat PNG is a V2 card read from chara",
			file: "sillytavern-flux-the-cat-v2.png", source: "chara", spec: SpecV2,
			cardName: "Flux the Cat", canon: []string{"Flux the Cat"}},
		{name: "the Coding Sensei PNG is read past its eXIf chunk",
			file: "sillytavern-coding-sensei-v2.png", source: "chara", spec: SpecV2,
			cardName: "Coding Sensei", canon: []string{"Coding Sensei"}},
		{name: "the Default-chan PNG with only a ccv3 chunk is a V3 card",
			file: "choral-default-chan-v3-ccv3-only.png", source: "ccv3", spec: SpecV3,
			cardName: "Default-chan", canon: []string{"Default-chan"}},
		{name: "the Shodan PNG with its text chunk before IDAT is a V2 card",
			file: "llcm-shodan-v2-sorted-keys.png", source: "chara", spec: SpecV2,
			cardName: "Shodan", canon: []string{"Shodan"}},
		{name: "the Skynet PNG is a V1 card and is imported as V2 from its chara chunk",
			file: "llcm-skynet-v1-no-data.png", source: "chara", spec: SpecV2,
			cardName: "Skynet", canon: []string{"Skynet"}},
		{name: "the NativeTavern JSON is not a spec card and is rejected naming the file and its keys",
			file: "nativetavern-cultivation-not-a-spec-card.json", err: ErrNotSpec,
			errContains: []string{"nativetavern-cultivation-not-a-spec-card.json", `no "spec", no "data" and no "first_mes"`, "firstMessage"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read(tt.file, realCard(t, tt.file))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Read error = %v, want %v", err, tt.err)
				}
				var e *Error
				if !errors.As(err, &e) || e.File != tt.file {
					t.Errorf("error %#v is not an *Error naming %s", err, tt.file)
				}
				for _, s := range tt.errContains {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if f.Format != FormatPNG || f.Source != tt.source || f.Spec != tt.spec {
				t.Errorf("Read = format %s source %q spec %q, want png %q %q", f.Format, f.Source, f.Spec, tt.source, tt.spec)
			}
			c, g := f.Card("")
			if c.Name != tt.cardName || c.CharacterID != tt.cardName {
				t.Errorf("Card name/id = %q/%q, want %q", c.Name, c.CharacterID, tt.cardName)
			}
			if !reflect.DeepEqual(c.CanonEntities, tt.canon) {
				t.Errorf("canon_entities = %q, want %q", c.CanonEntities, tt.canon)
			}
			// English cards: no Korean text, so style and first person stay
			// empty and are reported, never invented.
			if c.HonorificRule != "" || c.FirstPerson != "" {
				t.Errorf("English card guessed honorific_rule %q first_person %q", c.HonorificRule, c.FirstPerson)
			}
			var empty []string
			for _, e := range g.Empty {
				empty = append(empty, e.Field)
			}
			if want := []string{"honorific_rule", "first_person", "forbidden_topics", "entity_roles"}; !reflect.DeepEqual(empty, want) {
				t.Errorf("Guesses.Empty fields = %q, want %q", empty, want)
			}
			if len(g.Guessed) != 1 || g.Guessed[0].Field != "canon_entities" {
				t.Errorf("Guesses.Guessed = %v, want canon_entities only", g.Guessed)
			}
		})
	}
}

func TestPreferCCv3(t *testing.T) {
	chara := v2(`{"name":"Old","extensions":{}}`)
	ccv3 := v3(`{"name":"New","extensions":{}}`)
	tests := []struct {
		name   string
		png    []byte
		source string
		card   string
	}{
		{"ccv3 wins over chara written before it", pngOf(tEXt("chara", chara), tEXt("ccv3", ccv3)), "ccv3", "New"},
		{"ccv3 wins over chara written after it", pngOf(tEXt("ccv3", ccv3), tEXt("chara", chara)), "ccv3", "New"},
		{"chara alone is read", pngOf(tEXt("chara", chara)), "chara", "Old"},
		{"the keyword matches in any case", pngOf(tEXt("chara", chara), tEXt("CCv3", ccv3)), "CCv3", "New"},
		{"a compressed zTXt ccv3 is read", pngOf(tEXt("chara", chara), zTXt("ccv3", ccv3)), "ccv3", "New"},
		{"a compressed iTXt ccv3 is read", pngOf(tEXt("chara", chara), iTXt("ccv3", ccv3)), "ccv3", "New"},
		{"the first of two ccv3 chunks wins", pngOf(tEXt("ccv3", ccv3), tEXt("ccv3", v3(`{"name":"Later"}`))), "ccv3", "New"},
		{"a chunk holding plain JSON is read", pngOf(testChunk{"tEXt", []byte("ccv3\x00" + ccv3)}), "ccv3", "New"},
		{"unpadded base64 is read", pngOf(testChunk{"tEXt", []byte("ccv3\x00" + strings.TrimRight(b64(ccv3+" "), "="))}), "ccv3", "New"},
		{"another app's tEXt chunk is skipped", pngOf(tEXt("risuai", "not json"), tEXt("chara", chara)), "chara", "Old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x.png", tt.png)
			if err != nil {
				t.Fatal(err)
			}
			if c, _ := f.Card(""); f.Source != tt.source || c.Name != tt.card {
				t.Errorf("read %q from %q, want %q from %q", c.Name, f.Source, tt.card, tt.source)
			}
		})
	}
	t.Run("the real Seraphina PNG reads ccv3 although chara comes first", func(t *testing.T) {
		b := realCard(t, "sillytavern-seraphina-v2-v3-lorebook.png")
		types, _ := chunkTypes(b)
		if got := strings.Join(types, " "); !strings.Contains(got, "tEXt:chara tEXt:ccv3") {
			t.Fatalf("fixture chunks %s, want chara before ccv3", got)
		}
		f, err := Read("seraphina.png", b)
		if err != nil {
			t.Fatal(err)
		}
		if f.Source != "ccv3" || f.Spec != SpecV3 || f.SpecVersion != "3.0" {
			t.Errorf("read %s %s %s, want ccv3 chara_card_v3 3.0", f.Source, f.Spec, f.SpecVersion)
		}
	})
}

func b64(s string) string {
	js, _ := json.Marshal([]byte(s)) // encoding/json writes []byte as base64
	return strings.Trim(string(js), `"`)
}

func TestReadErrors(t *testing.T) {
	good := v2(`{"name":"A"}`)
	crcBroken := pngOf(tEXt("chara", good))
	crcBroken[bytes.Index(crcBroken, []byte("chara"))+8] ^= 1
	tests := []struct {
		name     string
		in       []byte
		err      error
		contains []string
	}{
		{"an empty file is an unknown format", nil, ErrFormat, []string{"empty file"}},
		{"a text file is an unknown format", []byte("# notes\n"), ErrFormat, []string{`"# notes\n"`}},
		{"a PNG without a card chunk says which chunks it has", pngOf(), ErrNoCard, []string{"IHDR, IDAT, IEND"}},
		{"a truncated PNG is malformed", pngOf(tEXt("chara", good))[:40], ErrMalformed, []string{"truncated PNG"}},
		{"a card chunk with a wrong CRC is malformed", crcBroken, ErrMalformed, []string{`tEXt chunk "chara"`, "CRC mismatch"}},
		{"bad base64 names its byte", pngOf(testChunk{"tEXt", []byte("chara\x00eyJz*AAA")}), ErrMalformed, []string{"base64 at byte 4"}},
		{"an empty chunk text is malformed", pngOf(testChunk{"tEXt", []byte("ccv3\x00")}), ErrMalformed, []string{"empty chunk text"}},
		{"a zTXt with a bad zlib stream is malformed", pngOf(testChunk{"zTXt", []byte("ccv3\x00\x00garbage")}), ErrMalformed, []string{`zTXt chunk "ccv3"`, "zlib"}},
		{"bad JSON names byte line and column", []byte("{\n  \"spec\": \"chara_card_v2\",\n  \"data\": {,}\n}"), ErrMalformed, []string{"JSON at byte 40 (line 3, column 12)"}},
		{"bad JSON inside a chunk names the chunk", pngOf(tEXt("chara", `{"spec":`)), ErrMalformed, []string{`tEXt chunk "chara"`, "JSON at byte 8 (line 1, column 9)"}},
		{"trailing data after the JSON object is malformed", []byte(good + " {}"), ErrMalformed, []string{"after top-level value"}},
		{"a JSON array is not a card", []byte(`[{"spec":"chara_card_v2"}]`), ErrNotSpec, []string{"an array, not an object"}},
		{"an unknown spec is named", []byte(`{"spec":"chara_card_v9","data":{}}`), ErrNotSpec, []string{`spec is "chara_card_v9"`}},
		{"data without spec is not a card", []byte(`{"data":{"name":"A"}}`), ErrNotSpec, []string{`no "spec"`}},
		{"a V1 JSON card whose name is not a string is malformed", []byte(`{"name":7,"first_mes":"hi"}`), ErrMalformed, []string{"Character Card V1 whose name is a number"}},
		{"spec without a data object is malformed", []byte(`{"spec":"chara_card_v3","data":"x"}`), ErrMalformed, []string{`data is "x", not an object`}},
		{"a card without data.name is malformed", []byte(v2(`{"description":"x"}`)), ErrMalformed, []string{"data.name is missing or null"}},
		{"extensions that are not an object are malformed", []byte(v2(`{"name":"A","extensions":"x"}`)), ErrMalformed, []string{"data.extensions is"}},
		{"our extension that is not an object is malformed", []byte(v2(`{"name":"A","extensions":{"evident/persona":[1]}}`)), ErrMalformed, []string{`data.extensions["evident/persona"] is an array`}},
		{"a refused extension still names the spec's faulty fields", []byte(v2(`{"name":"A","description":5,"tags":"x","extensions":{"evident/persona":{"first_person":7}}}`)), ErrMalformed,
			[]string{`data.extensions["evident/persona"].first_person`, "; also data.description: number where a string is expected; data.tags: string where a list is expected"}},
		{"a honorific_rule outside the two styles is malformed", []byte(v2(`{"name":"A","extensions":{"evident/persona":{"honorific_rule":"하오체"}}}`)), ErrMalformed, []string{`data.extensions["evident/persona"].honorific_rule is "하오체"`}},
		{"an empty canon entity is malformed", []byte(v2(`{"name":"A","extensions":{"evident/persona":{"canon_entities":["하늘",""]}}}`)), ErrMalformed, []string{`canon_entities[1] is ""`}},
		{"an entity role without entity is malformed", []byte(v2(`{"name":"A","extensions":{"evident/persona":{"entity_roles":[{"role":"동생"}]}}}`)), ErrMalformed, []string{"entity_roles[0]"}},
		{"a zip without card.json has no card", zipOf(t, "", [2]string{"assets/icon.png", "x"}), ErrNoCard, []string{"without card.json"}},
		{"a zip with two nested card.json files is ambiguous", zipOf(t, "", [2]string{"a/card.json", good}, [2]string{"b/card.json", good}), ErrMalformed, []string{`"a/card.json", "b/card.json"`}},
		{"a broken zip is malformed", append([]byte("PK\x03\x04junk"), []byte("PK\x05\x06")...), ErrMalformed, []string{"zip (CHARX)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("in", tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Read = %v, %v; want error %v", f, err, tt.err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if !strings.HasPrefix(err.Error(), "in: ") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestCHARX(t *testing.T) {
	card := v3(`{"name":"하늘","extensions":{"evident/persona":{"honorific_rule":"반말"}}}`)
	tests := []struct {
		name   string
		zip    []byte
		source string
	}{
		{"card.json at the root is read", zipOf(t, "", [2]string{"card.json", card}, [2]string{"assets/icon/main.png", "png"}), "card.json"},
		{"bytes before the zip are allowed", zipOf(t, "\xFF\xD8\xFF\xE0 a JPEG before the zip", [2]string{"card.json", card}), "card.json"},
		{"the only card.json in a folder is read", zipOf(t, "", [2]string{"하늘/card.json", card}, [2]string{"__MACOSX/하늘/._card.json", "junk"}), "하늘/card.json"},
		{"the root card.json wins over a nested one", zipOf(t, "", [2]string{"old/card.json", v3(`{"name":"x"}`)}, [2]string{"card.json", card}), "card.json"},
		{"a card.json with a byte-order mark is read", zipOf(t, "", [2]string{"Card.JSON", "\uFEFF" + card}), "Card.JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("c.charx", tt.zip)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := f.Card("")
			if f.Format != FormatCHARX || f.Source != tt.source || f.Spec != SpecV3 || c.Name != "하늘" || c.HonorificRule != "반말" {
				t.Errorf("Read = %s %q %s, card %+v", f.Format, f.Source, f.Spec, c)
			}
		})
	}
}

// koreanCard is a small hand-written V3 card for the prefill guesses. The
// user's lines in mes_example speak 반말 with 나/내가/날 and must not count;
// a lorebook key is written in NFD and equals another one in NFC.
var koreanCard = v3(`{
  "name": "하늘",
  "nickname": "하늘이",
  "first_mes": "*하늘이 검을 내려놓는다.* \"어서 오세요. 저는 하늘이라고 해요. 오늘은 제가 안내해 드릴게요.\"",
  "alternate_greetings": ["또 오셨네요! 저 기억하시죠?", "", "……", 42],
  "mes_example": "<START>\r\n{{user}}: 나는 네가 누군지 몰라. 내가 왜 여기 있지?\r\n{{char}}: 걱정 마세요.\r\n저도 처음엔 그랬어요.\r\n{{user}}: 날 도와줄 거야?\r\n{{Char}}: 물론이죠. 절 믿으세요!\r\n<START>\r\n{{user}}: 너 반말 할 줄 알아?\r\n하늘: 응, 나도 할 줄 알아. 나 원래 반말 써.",
  "character_book": {"entries": [
    {"keys": [" 아카데미 ", "하늘", ""]},
    {"keys": ["/검술.*/i", "\u1105\u1175\u110b\u1161\u11ab", "리안", "아카데미"]},
    {"keys": "not a list"},
    "not an entry"
  ]},
  "extensions": {"other/app": {"keep": true}}
}`)

func TestPrefill(t *testing.T) {
	f, err := Read("hanul.json", []byte(koreanCard))
	if err != nil {
		t.Fatal(err)
	}
	c, g := f.Card("hanul")
	want := persona.Card{
		CharacterID:     "hanul",
		Name:            "하늘",
		HonorificRule:   "존댓말",
		FirstPerson:     "저",
		CanonEntities:   []string{"하늘", "하늘이", "아카데미", "리안"},
		ForbiddenTopics: []string{},
		EntityRoles:     []persona.EntityRole{},
	}
	t.Run("the card is prefilled from name, nickname, lorebook keys and the character's own texts", func(t *testing.T) {
		if !reflect.DeepEqual(c, want) {
			t.Errorf("Card =\n %+v\nwant\n %+v", c, want)
		}
	})
	wantGuessed := []Guess{
		{Field: "honorific_rule", From: []Count{{"존댓말", 4}, {"반말", 1}},
			Texts: []string{"data.first_mes", "data.alternate_greetings[0]", "data.mes_example turn 1", "data.mes_example turn 2", "data.mes_example turn 3"}},
		{Field: "first_person", From: []Count{{"나", 1}, {"저", 4}},
			Texts: []string{"data.first_mes", "data.alternate_greetings[0]", "data.mes_example turn 2", "data.mes_example turn 3"}},
		{Field: "canon_entities", From: []Count{{"data.name", 1}, {"data.nickname", 1}, {"data.character_book keys", 2}}},
	}
	t.Run("each guess records its counts and the texts it read", func(t *testing.T) {
		if len(g.Guessed) != len(wantGuessed) {
			t.Fatalf("Guessed = %v", g.Guessed)
		}
		for i, w := range wantGuessed {
			got := g.Guessed[i]
			got.Note = ""
			if !reflect.DeepEqual(got, w) {
				t.Errorf("Guessed[%d] =\n %+v\nwant\n %+v", i, got, w)
			}
		}
	})
	t.Run("fields that are never guessed are listed as empty", func(t *testing.T) {
		if len(g.Empty) != 2 || g.Empty[0].Field != "forbidden_topics" || g.Empty[1].Field != "entity_roles" {
			t.Errorf("Empty = %v", g.Empty)
		}
	})
	t.Run("a guess reads as one line for the creator", func(t *testing.T) {
		want := "honorific_rule: guessed 존댓말, the style most texts read as (speech profile seed) (존댓말 4, 반말 1; data.first_mes, data.alternate_greetings[0], data.mes_example turn 1, data.mes_example turn 2, data.mes_example turn 3)"
		if got := g.Guessed[0].String(); got != want {
			t.Errorf("String() =\n %s\nwant\n %s", got, want)
		}
	})
}

func TestPrefillCases(t *testing.T) {
	tests := []struct {
		name          string
		data          string
		rule, fp      string
		canon         []string
		guessed, empt []string
	}{
		{name: "a tie between the styles guesses no honorific_rule",
			data:  `{"name":"A","first_mes":"안녕하세요.","alternate_greetings":["안녕."]}`,
			canon: []string{"A"}, guessed: []string{"canon_entities"},
			empt: []string{"honorific_rule", "first_person", "forbidden_topics", "entity_roles"}},
		{name: "a tie between 나 and 저 guesses no first_person",
			data: `{"name":"A","first_mes":"나는 간다. 저는 가요."}`, rule: "존댓말",
			canon: []string{"A"}, guessed: []string{"honorific_rule", "canon_entities"},
			empt: []string{"first_person", "forbidden_topics", "entity_roles"}},
		{name: "fields in the extension are taken and the others are guessed",
			data: `{"name":"A","first_mes":"나는 검사야.","extensions":{"evident/persona":{"honorific_rule":"존댓말","forbidden_topics":["연애"],"canon_entities":[]}}}`,
			rule: "존댓말", fp: "나", canon: []string{}, guessed: []string{"first_person"},
			empt: []string{"entity_roles"}},
		{name: "an empty string in the extension counts as missing",
			data: `{"name":"A","first_mes":"내가 할게.","extensions":{"evident/persona":{"honorific_rule":"","first_person":""}}}`,
			rule: "반말", fp: "나", canon: []string{"A"}, guessed: []string{"honorific_rule", "first_person", "canon_entities"},
			empt: []string{"forbidden_topics", "entity_roles"}},
		{name: "a full extension leaves nothing to guess",
			data: `{"name":"A","extensions":{"evident/persona":{"honorific_rule":"반말","first_person":"나","canon_entities":["A"],"forbidden_topics":[],"entity_roles":[]}}}`,
			rule: "반말", fp: "나", canon: []string{"A"}},
		{name: "an example line tagged with the card's name counts as the character's",
			data: `{"name":"Rin","mes_example":"Rin: 제가 할게요.\n{{user}}: 나 갈게."}`,
			rule: "존댓말", fp: "저", canon: []string{"Rin"}, guessed: []string{"honorific_rule", "first_person", "canon_entities"},
			empt: []string{"forbidden_topics", "entity_roles"}},
	}
	fields := func(gs []Guess) []string {
		var out []string
		for _, g := range gs {
			out = append(out, g.Field)
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x.json", []byte(v2(tt.data)))
			if err != nil {
				t.Fatal(err)
			}
			c, g := f.Card("")
			if c.HonorificRule != tt.rule || c.FirstPerson != tt.fp || !reflect.DeepEqual(c.CanonEntities, tt.canon) {
				t.Errorf("Card = rule %q fp %q canon %q; want %q %q %q", c.HonorificRule, c.FirstPerson, c.CanonEntities, tt.rule, tt.fp, tt.canon)
			}
			if got := fields(g.Guessed); !reflect.DeepEqual(got, tt.guessed) {
				t.Errorf("Guessed = %q, want %q", got, tt.guessed)
			}
			if got := fields(g.Empty); !reflect.DeepEqual(got, tt.empt) {
				t.Errorf("Empty = %q, want %q", got, tt.empt)
			}
			if g.None() != (tt.guessed == nil && tt.empt == nil) {
				t.Errorf("None() = %v", g.None())
			}
		})
	}
}

func TestCharTurns(t *testing.T) {
	tests := []struct {
		name, ex string
		want     []string
	}{
		{"a character turn runs over its continuation lines", "{{char}}: 하나.\n\n둘.\n{{user}}: 셋", []string{"하나.\n\n둘."}},
		{"<START> ends a turn", "{{char}}: 하나\n<START>\n넷", []string{"하나"}},
		{"legacy <BOT> tags and full-width colons count", "<BOT>： 하나\n<USER>: 둘\n{{char}} : 셋", []string{"하나", "셋"}},
		{"user lines never count", "{{user}}: 나는\n{{user}}: 내가", nil},
		{"an empty turn is dropped", "{{char}}:\n{{char}}: 둘", []string{"둘"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := charTurns(tt.ex, "하늘"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("charTurns = %q, want %q", got, tt.want)
			}
		})
	}
}

// roundTrip reads b, sets a changed card, exports, reads again, and checks the
// card and every other key.
func roundTrip(t *testing.T, name string, b []byte) {
	f, err := Read(name, b)
	if err != nil {
		t.Fatal(err)
	}
	before, err := f.JSON()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.Card("")
	c.CharacterID = "card-7"
	c.HonorificRule = "존댓말"
	c.FirstPerson = "저"
	c.CanonEntities = append(c.CanonEntities, "아카데미")
	c.ForbiddenTopics = []string{"연애"}
	c.EntityRoles = []persona.EntityRole{{Role: "동생", Entity: "하늘"}}
	c.Description = "시험용 카드"
	c.Public = true
	if err := f.SetPersona(c); err != nil {
		t.Fatal(err)
	}
	after, err := f.JSON()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Read(name+" (exported)", after)
	if err != nil {
		t.Fatalf("reading the export: %v", err)
	}
	got, guesses := g.Card("")
	if !reflect.DeepEqual(got, c) {
		t.Errorf("card after the round trip =\n %+v\nwant\n %+v", got, c)
	}
	if !guesses.None() {
		t.Errorf("the round-tripped card still has guesses: %+v", guesses)
	}
	if x, y := tree(t, before), withoutOurs(tree(t, after), tree(t, before)); !reflect.DeepEqual(x, y) {
		t.Errorf("keys other than ours changed:\nbefore %s\nafter  %s", before, after)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, file := range []string{
		"sillytavern-seraphina-v2-v3-lorebook.png",
		"sillytavern-flux-the-cat-v2.png",
		"sillytavern-coding-sensei-v2.png",
		"choral-default-chan-v3-ccv3-only.png",
		"llcm-shodan-v2-sorted-keys.png",
	} {
		t.Run("the real "+file+" keeps every other key through SetPersona and JSON", func(t *testing.T) {
			b := realCard(t, file)
			kw := "chara"
			if _, ok := pngText(t, b, "ccv3"); ok {
				kw = "ccv3"
			}
			orig, _ := pngText(t, b, kw)
			f, err := Read(file, b)
			if err != nil {
				t.Fatal(err)
			}
			exported, _ := f.JSON()
			if !reflect.DeepEqual(tree(t, orig), tree(t, exported)) {
				t.Fatalf("JSON() before any change differs from the %s chunk", kw)
			}
			roundTrip(t, file, b)
		})
	}
	t.Run("a card without data.extensions gets one and keeps everything else", func(t *testing.T) {
		roundTrip(t, "bare.json", []byte(v2(`{"name":"하늘","tags":["a"],"x-big":12345678901234567890,"x-float":1.50,"x-html":"<b>&</b>"}`)))
	})
	t.Run("an empty-array data.extensions is replaced by an object", func(t *testing.T) {
		roundTrip(t, "php.json", []byte(v2(`{"name":"하늘","extensions":[]}`)))
	})
	t.Run("unknown keys inside our extension survive", func(t *testing.T) {
		f, err := Read("x.json", []byte(v2(`{"name":"A","extensions":{"evident/persona":{"future_field":[1,2],"honorific_rule":"반말"}}}`)))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := f.Card("")
		if err := f.SetPersona(c); err != nil {
			t.Fatal(err)
		}
		out, _ := f.JSON()
		if !bytes.Contains(out, []byte(`"future_field":[1,2]`)) {
			t.Errorf("export lost future_field: %s", out)
		}
	})
	t.Run("numbers and HTML characters are written as read", func(t *testing.T) {
		f, err := Read("x.json", []byte(v2(`{"name":"A","n":12345678901234567890,"f":1.50,"h":"<b>&</b>"}`)))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := f.JSON()
		for _, s := range []string{`12345678901234567890`, `1.50`, `"<b>&</b>"`} {
			if !bytes.Contains(out, []byte(s)) {
				t.Errorf("export %s lost %s", out, s)
			}
		}
	})
	t.Run("a name that differs from data.name is kept in the extension", func(t *testing.T) {
		f, _ := Read("x.json", []byte(v2(`{"name":"Haneul"}`)))
		c, _ := f.Card("")
		c.Name = "하늘"
		if err := f.SetPersona(c); err != nil {
			t.Fatal(err)
		}
		out, _ := f.JSON()
		g, _ := Read("x.json", out)
		if got, _ := g.Card(""); got.Name != "하늘" || got.CharacterID != "Haneul" {
			t.Errorf("name/id after round trip = %q/%q", got.Name, got.CharacterID)
		}
	})
}

func TestSetPersonaRejects(t *testing.T) {
	tests := []struct {
		name string
		card persona.Card
		want string
	}{
		{"a third speech style is refused", persona.Card{HonorificRule: "하오체"}, `honorific_rule is "하오체"`},
		{"an empty forbidden topic is refused", persona.Card{ForbiddenTopics: []string{" "}}, `forbidden_topics[0] is " "`},
		{"a role without an entity is refused", persona.Card{EntityRoles: []persona.EntityRole{{Role: "동생"}}}, "entity_roles[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x.json", []byte(v2(`{"name":"A","extensions":{"k":1}}`)))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := f.JSON()
			err = f.SetPersona(tt.card)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SetPersona error = %v, want one containing %q", err, tt.want)
			}
			if after, _ := f.JSON(); !bytes.Equal(before, after) {
				t.Errorf("a refused SetPersona changed the document: %s", after)
			}
		})
	}
}

func TestPNG(t *testing.T) {
	t.Run("the real Seraphina PNG gets both chunks rewritten in place and every other chunk kept", func(t *testing.T) {
		b := realCard(t, "sillytavern-seraphina-v2-v3-lorebook.png")
		f, err := Read("seraphina.png", b)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := f.Card("")
		c.HonorificRule, c.FirstPerson = "존댓말", "저"
		if err := f.SetPersona(c); err != nil {
			t.Fatal(err)
		}
		out, err := PNG(b, f)
		if err != nil {
			t.Fatal(err)
		}
		t0, o0 := chunkTypes(b)
		t1, o1 := chunkTypes(out)
		if !reflect.DeepEqual(t0, t1) || !reflect.DeepEqual(o0, o1) {
			t.Errorf("chunks %q became %q (or other chunks' bytes changed)", t0, t1)
		}
		for kw, spec := range map[string]string{"chara": SpecV2, "ccv3": SpecV3} {
			js, _ := pngText(t, out, kw)
			if got := tree(t, js)["spec"]; got != spec {
				t.Errorf("chunk %s has spec %v, want %s", kw, got, spec)
			}
		}
		g, err := Read("seraphina2.png", out)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := g.Card(""); !reflect.DeepEqual(got, c) {
			t.Errorf("card from the rewritten PNG = %+v, want %+v", got, c)
		}
	})
	t.Run("the real Shodan PNG keeps its card chunk before IDAT", func(t *testing.T) {
		b := realCard(t, "llcm-shodan-v2-sorted-keys.png")
		f, _ := Read("shodan.png", b)
		out, err := PNG(b, f)
		if err != nil {
			t.Fatal(err)
		}
		t0, _ := chunkTypes(b)
		t1, _ := chunkTypes(out)
		if !reflect.DeepEqual(t0, t1) || t1[1] != "tEXt:chara" {
			t.Errorf("chunks %q became %q", t0, t1)
		}
	})
	t.Run("a PNG without a card gets ccv3 for a V3 card before IEND", func(t *testing.T) {
		f, _ := Read("x.json", []byte(v3(`{"name":"하늘"}`)))
		out, err := PNG(pngOf(), f)
		if err != nil {
			t.Fatal(err)
		}
		if types, _ := chunkTypes(out); strings.Join(types, " ") != "IHDR IDAT tEXt:ccv3 IEND" {
			t.Errorf("chunks = %q", types)
		}
	})
	t.Run("a zTXt chara chunk is replaced by a tEXt one and trailing bytes are kept", func(t *testing.T) {
		orig := append(pngOf(zTXt("chara", v2(`{"name":"Old"}`))), "trailer"...)
		f, _ := Read("x.json", []byte(v2(`{"name":"New"}`)))
		out, err := PNG(orig, f)
		if err != nil {
			t.Fatal(err)
		}
		if types, _ := chunkTypes(out); strings.Join(types, " ") != "IHDR tEXt:chara IDAT IEND" || !bytes.HasSuffix(out, []byte("trailer")) {
			t.Errorf("chunks = %q, suffix %q", types, out[len(out)-7:])
		}
	})
	t.Run("a file that is not a PNG is refused", func(t *testing.T) {
		f, _ := Read("x.json", []byte(v2(`{"name":"A"}`)))
		if _, err := PNG([]byte("GIF89a"), f); !errors.Is(err, ErrFormat) {
			t.Errorf("PNG(GIF) error = %v, want ErrFormat", err)
		}
		if _, err := PNG(pngOf(), nil); !errors.Is(err, ErrNoCard) {
			t.Errorf("PNG(nil File) error = %v, want ErrNoCard", err)
		}
	})
}

func TestReadJSON(t *testing.T) {
	tests := []struct {
		name, in, spec, card string
	}{
		{"a V2 JSON file is read", v2(`{"name":"하늘"}`), SpecV2, "하늘"},
		{"a V3 JSON file with a byte-order mark and leading space is read", "\uFEFF \n" + v3(`{"name":"하늘"}`), SpecV3, "하늘"},
		{"a decomposed (NFD) name comes out NFC", v2(`{"name":"\u1112\u1161\u1102\u1173\u11af"}`), SpecV2, "하늘"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x.json", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if c, _ := f.Card(""); f.Format != FormatJSON || f.Source != "" || f.Spec != tt.spec || c.Name != tt.card {
				t.Errorf("Read = %s %q %s name %q", f.Format, f.Source, f.Spec, c.Name)
			}
		})
	}
}
