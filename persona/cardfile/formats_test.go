package cardfile

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"
)

// zipThenPrefix builds a zip with offsets from its own start and glues
// prefix in front without fixing them (as `cat stub zip > sfx` does).
func zipThenPrefix(t testing.TB, prefix string, entries ...[2]string) []byte {
	return append([]byte(prefix), zipOf(t, "", entries...)...)
}

func TestOrigin(t *testing.T) {
	card := v3(`{"name":"하늘"}`)
	stub := "MZ\x90\x00 a self-extracting stub of 39 bytes"
	tests := []struct {
		name   string
		in     []byte
		origin string
		chunk  string
		prefix int64
	}{
		{"a JSON file says JSON", []byte(card), "JSON", "", 0},
		{"a tEXt ccv3 chunk is named with its type and keyword", pngOf(tEXt("ccv3", card)), `PNG tEXt chunk "ccv3"`, "tEXt", 0},
		{"a zTXt chara chunk is named with its type and keyword", pngOf(zTXt("chara", v2(`{"name":"하늘"}`))), `PNG zTXt chunk "chara"`, "zTXt", 0},
		{"an iTXt chunk keeps the keyword as written", pngOf(iTXt("CCV3", card)), `PNG iTXt chunk "CCV3"`, "iTXt", 0},
		{"a CHARX without a prefix has 0 bytes before the zip", zipOf(t, "", [2]string{"card.json", card}), `CHARX zip entry "card.json", 0 bytes before the zip`, "", 0},
		{"a CHARX whose offsets count the prefix names the prefix length", zipOf(t, stub, [2]string{"card.json", card}), `CHARX zip entry "card.json", 39 bytes before the zip`, "", 39},
		{"a CHARX with a prefix glued in front names the prefix length", zipThenPrefix(t, stub, [2]string{"card.json", card}), `CHARX zip entry "card.json", 39 bytes before the zip`, "", 39},
		{"a V1 card says it was imported", []byte(`{"name":"하늘","first_mes":"안녕"}`), "JSON, Character Card V1 imported as V2", "", 0},
	}
	if len(stub) != 39 {
		t.Fatalf("stub is %d bytes", len(stub))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if f.Origin() != tt.origin || f.Chunk != tt.chunk || f.Prefix != tt.prefix {
				t.Errorf("Origin %q chunk %q prefix %d, want %q %q %d", f.Origin(), f.Chunk, f.Prefix, tt.origin, tt.chunk, tt.prefix)
			}
		})
	}
}

func TestV1(t *testing.T) {
	v1 := `{"name":"하늘","description":"검사.","personality":"","scenario":"","first_mes":"어서 와. 나는 하늘이야.","mes_example":"","create_date":"2023-5-1","talkativeness":"0.5"}`
	t.Run("a flat V1 JSON card is imported as V2 and guessed from its greeting", func(t *testing.T) {
		f, err := Read("v1.json", []byte(v1))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := f.Card("")
		if !f.FromV1 || f.Spec != SpecV2 || f.SpecVersion != "2.0" || c.Name != "하늘" || c.HonorificRule != "반말" || c.FirstPerson != "나" {
			t.Errorf("Read = FromV1 %v spec %s %s, card %+v", f.FromV1, f.Spec, f.SpecVersion, c)
		}
	})
	t.Run("the export is a V2 document that keeps the root keys and nests the V1 fields in data", func(t *testing.T) {
		f, _ := Read("v1.json", []byte(v1))
		c, _ := f.Card("")
		if err := f.SetPersona(c); err != nil {
			t.Fatal(err)
		}
		out, err := f.JSON()
		if err != nil {
			t.Fatal(err)
		}
		doc := tree(t, out)
		data, _ := doc["data"].(map[string]any)
		if doc["spec"] != SpecV2 || doc["spec_version"] != "2.0" || doc["create_date"] != "2023-5-1" || doc["first_mes"] != "어서 와. 나는 하늘이야." {
			t.Errorf("root of the export = %v", doc)
		}
		if data["first_mes"] != "어서 와. 나는 하늘이야." || data["description"] != "검사." || data["creator_notes"] != "" || !reflect.DeepEqual(data["tags"], []any{}) {
			t.Errorf("data of the export = %v", data)
		}
		g, err := Read("v2.json", out)
		if err != nil {
			t.Fatal(err)
		}
		if got, gs := g.Card(""); g.FromV1 || !reflect.DeepEqual(got, c) || !gs.None() {
			t.Errorf("read back: FromV1 %v card %+v guesses %v", g.FromV1, got, gs)
		}
	})
	t.Run("a PNG chara chunk holding V1 is imported and written back as a V2 chara chunk", func(t *testing.T) {
		png := pngOf(tEXt("chara", v1))
		f, err := Read("v1.png", png)
		if err != nil {
			t.Fatal(err)
		}
		if !f.FromV1 || f.Origin() != `PNG tEXt chunk "chara", Character Card V1 imported as V2` {
			t.Fatalf("Origin %q", f.Origin())
		}
		c, _ := f.Card("")
		c.ForbiddenTopics = []string{"연애"}
		if err := f.SetPersona(c); err != nil {
			t.Fatal(err)
		}
		out, err := PNG(png, f)
		if err != nil {
			t.Fatal(err)
		}
		if types, _ := chunkTypes(out); strings.Join(types, " ") != "IHDR tEXt:chara IDAT IEND" {
			t.Errorf("chunks = %q", types)
		}
		g, err := Read("v2.png", out)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := g.Card(""); g.FromV1 || g.Spec != SpecV2 || !reflect.DeepEqual(got, c) {
			t.Errorf("read back: %v %s %+v", g.FromV1, g.Spec, got)
		}
	})
	t.Run("a V1 card with only mes_example beside its name is V1", func(t *testing.T) {
		f, err := Read("v1.json", []byte(`{"name":"A","mes_example":""}`))
		if err != nil || !f.FromV1 {
			t.Errorf("Read = %v, %v", f, err)
		}
	})
}

func TestAssets(t *testing.T) {
	assets := `[
	  {"type":"icon","uri":"embeded://assets/icon/images/main.png","name":"main","ext":"png"},
	  {"type":"emotion","uri":"embedded://assets/emotion/images/smile.png","name":"smile","ext":"png"},
	  {"type":"background","uri":"embeded://../outside.png","name":"bg","ext":"png"},
	  {"type":"other","uri":"embeded:///etc/passwd","name":"abs","ext":""},
	  {"type":"other","uri":"embeded://assets\\other\\x.bin","name":"bs","ext":"bin"},
	  {"type":"other","uri":"embeded://assets/%2e%2e/%2e%2e/x","name":"enc","ext":""},
	  {"type":"icon","uri":"ccdefault:","name":"default","ext":"png"},
	  {"type":"icon","uri":"https://example.invalid/a.png","name":"web","ext":"png"},
	  {"type":"other","uri":"embeded://assets/missing.png","name":"gone","ext":"png"},
	  {"type":"other","uri":"embeded://assets/other/my%20file.txt","name":"space","ext":"txt"},
	  "not an asset"
	]`
	card := v3(`{"name":"하늘","assets":` + assets + `}`)
	entries := [][2]string{
		{"card.json", card},
		{"assets/icon/images/main.png", "PNG-BYTES"},
		{"assets/emotion/images/smile.png", "SMILE"},
		{"outside.png", "must not be read"},
		{"assets/other/my file.txt", "spaced"},
	}
	f, err := Read("c.charx", zipOf(t, "", entries...))
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ name, scheme, path, data, problem string }
	var got []row
	for _, a := range f.Assets() {
		got = append(got, row{a.Name, a.Scheme, a.Path, string(a.Data), a.Problem})
	}
	want := []row{
		{"main", "embeded", "assets/icon/images/main.png", "PNG-BYTES", ""},
		{"smile", "embedded", "assets/emotion/images/smile.png", "SMILE", ""},
		{"bg", "embeded", "../outside.png", "", `refused: the path escapes the archive (..): "../outside.png"`},
		{"abs", "embeded", "/etc/passwd", "", `refused: absolute path: "/etc/passwd"`},
		{"bs", "embeded", `assets\other\x.bin`, "", `refused: backslash in the path (the spec separates by '/'): "assets\\other\\x.bin"`},
		{"enc", "embeded", "assets/%2e%2e/%2e%2e/x", "", `refused: the path escapes the archive (..): "assets/../../x" (percent-decoded from "assets/%2e%2e/%2e%2e/x")`},
		{"default", "ccdefault", "", "", ""},
		{"web", "https", "", "", ""},
		{"gone", "embeded", "assets/missing.png", "", `no zip entry "assets/missing.png"`},
		{"space", "embeded", "assets/other/my file.txt", "spaced", ""},
	}
	t.Run("embedded assets of both spellings are read and escaping paths refused", func(t *testing.T) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("assets =\n %q\nwant\n %q", got, want)
		}
	})
	t.Run("an element that is not an object is a fault, not an asset", func(t *testing.T) {
		if fs := f.Faults(); len(fs) != 1 || fs[0].String() != "data.assets[10]: string where an object is expected" {
			t.Errorf("faults = %v", fs)
		}
	})
	t.Run("assets are found next to a card.json in a folder", func(t *testing.T) {
		g, err := Read("c.charx", zipOf(t, "", [2]string{"하늘/card.json", card}, [2]string{"하늘/assets/icon/images/main.png", "IN-FOLDER"}))
		if err != nil {
			t.Fatal(err)
		}
		if a := g.Assets()[0]; string(a.Data) != "IN-FOLDER" || a.Path != "하늘/assets/icon/images/main.png" {
			t.Errorf("asset = %+v", a)
		}
	})
	t.Run("a JSON card lists its assets but reads none", func(t *testing.T) {
		g, _ := Read("c.json", []byte(card))
		if a := g.Assets()[0]; a.Data != nil || a.Problem != "not read: the card is not a CHARX" {
			t.Errorf("asset = %+v", a)
		}
	})
}

func TestAssetCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates a 64 MiB entry")
	}
	big := bytes.Repeat([]byte{0}, maxExpand+1)
	var packed bytes.Buffer
	fw, _ := flate.NewWriter(&packed, flate.BestSpeed)
	fw.Write(big)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("card.json")
	w.Write([]byte(v3(`{"name":"A","assets":[{"type":"other","uri":"embeded://big.bin","name":"big","ext":"bin"},{"type":"other","uri":"embeded://liar.bin","name":"liar","ext":"bin"}]}`)))
	w, _ = zw.Create("big.bin")
	w.Write(big)
	// A zip bomb whose header says 1 KiB: reading stops there.
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "liar.bin", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(big),
		CompressedSize64: uint64(packed.Len()), UncompressedSize64: 1024})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(packed.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Read("bomb.charx", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	as := f.Assets()
	if as[0].Data != nil || as[0].Problem != "not read: the entry expands past 64 MiB" {
		t.Errorf("big asset: %d bytes, problem %q", len(as[0].Data), as[0].Problem)
	}
	if as[1].Data != nil || !strings.HasPrefix(as[1].Problem, `zip entry "liar.bin": `) {
		t.Errorf("lying asset: %d bytes, problem %q", len(as[1].Data), as[1].Problem)
	}
}

func TestUnsafePath(t *testing.T) {
	tests := []struct{ path, why string }{
		{"assets/icon/main.png", ""},
		{"./assets/a.png", ""},
		{"a..b/c", ""},
		{"", "empty path"},
		{"../x", "the path escapes the archive (..)"},
		{"assets/../../x", "the path escapes the archive (..)"},
		{"/x", "absolute path"},
		{"C:/x", "drive-letter path"},
		{`a\b`, "backslash in the path (the spec separates by '/')"},
		{"a\x00b", "NUL in the path"},
	}
	for _, tt := range tests {
		t.Run("path "+tt.path, func(t *testing.T) {
			if got := unsafePath(tt.path); got != tt.why {
				t.Errorf("unsafePath(%q) = %q, want %q", tt.path, got, tt.why)
			}
		})
	}
}

func TestProseGuesses(t *testing.T) {
	tests := []struct {
		name, data string
		rule, fp   string
		ruleTexts  []string
	}{
		{name: "the description stating 존댓말 and 1인칭 decides over a 반말 narration greeting",
			data: `{"name":"하늘","description":"하늘은 기사단의 검사다. 누구에게나 존댓말을 쓴다. 1인칭은 '저'.","first_mes":"*하늘이 검을 내려놓는다.* 왔어?"}`,
			rule: "존댓말", fp: "저", ruleTexts: []string{"data.description"}},
		{name: "a negated statement is not read and the greeting decides",
			data: `{"name":"하늘","description":"반말을 쓰지 않는다.","first_mes":"어서 오세요."}`,
			rule: "존댓말", fp: "", ruleTexts: []string{"data.first_mes"}},
		{name: "a sentence naming both styles is not read",
			data: `{"name":"하늘","description":"반말 대신 존댓말. 자신을 소인이라고 부른다."}`,
			rule: "", fp: "소인"},
		{name: "statements that disagree guess nothing from the prose",
			data: `{"name":"하늘","personality":"말투: 반말","description":"존댓말을 쓴다."}`,
			rule: "", fp: ""},
		{name: "quoted speech in the description counts like a greeting",
			data: `{"name":"하늘","description":"입버릇은 \"내가 할게.\"이다. 또 “나만 믿어.”라고 말한다."}`,
			rule: "반말", fp: "나", ruleTexts: []string{"data.description quote 1", "data.description quote 2"}},
		{name: "an English first-person statement with a declined form maps to its base",
			data: `{"name":"Rin","description":"Rin is a knight. First person: 제가"}`,
			rule: "", fp: "저"},
		{name: "an English description without Hangul guesses nothing",
			data: `{"name":"Rin","description":"Rin speaks \"politely\" and calls herself \"I\"."}`,
			rule: "", fp: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x.json", []byte(v2(tt.data)))
			if err != nil {
				t.Fatal(err)
			}
			c, g := f.Card("")
			if c.HonorificRule != tt.rule || c.FirstPerson != tt.fp {
				t.Errorf("rule %q fp %q, want %q %q (guesses %v / %v)", c.HonorificRule, c.FirstPerson, tt.rule, tt.fp, g.Guessed, g.Empty)
			}
			if tt.ruleTexts != nil {
				if len(g.Guessed) == 0 || g.Guessed[0].Field != "honorific_rule" || !reflect.DeepEqual(g.Guessed[0].Texts, tt.ruleTexts) {
					t.Errorf("honorific_rule guess = %+v, want texts %q", g.Guessed, tt.ruleTexts)
				}
			}
		})
	}
	t.Run("a guess from the prose quotes the sentence", func(t *testing.T) {
		f, _ := Read("x.json", []byte(v2(`{"name":"하늘","description":"누구에게나 존댓말을 쓴다."}`)))
		_, g := f.Card("")
		want := `honorific_rule: guessed 존댓말: the card's prose says so ("누구에게나 존댓말을 쓴다") (존댓말 1; data.description)`
		if g.Guessed[0].String() != want {
			t.Errorf("guess = %s\nwant    %s", g.Guessed[0], want)
		}
	})
}

// TestFirstPersonAfterMarker checks the statement forms one by one.
func TestFirstPersonAfterMarker(t *testing.T) {
	tests := []struct{ sent, want string }{
		{"1인칭: 저", "저"},
		{"1인칭은 나", "나"},
		{"일인칭은 「본좌」", "본좌"},
		{"자신을 '이 몸'이라 부른다", "이 몸"},
		{"스스로를 저라고 칭한다", "저"},
		{"자신을 소인이라고 부른다", "소인"},
		{"first-person is 내가", "나"},
		{"1인칭 없음", ""},
		{"자신을 '저'라 부르지 않는다", ""},
		{"1인칭: I", ""},
		{"자신을 사랑한다", ""},
		{"자신을 본좌라 칭한다", "본좌"},
		{"그녀는 검사다", ""},
	}
	for _, tt := range tests {
		t.Run(tt.sent, func(t *testing.T) {
			if got := firstPersonAfterMarker(tt.sent); got != tt.want {
				t.Errorf("firstPersonAfterMarker(%q) = %q, want %q", tt.sent, got, tt.want)
			}
		})
	}
}
