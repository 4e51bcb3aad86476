package cardfile

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
)

func TestFaults(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"a clean V2 card has no faults",
			v2(`{"name":"A","tags":["x"],"character_book":{"entries":[{"keys":["k"],"id":3}]},"extensions":{}}`), nil},
		{"a null lorebook is reported where an object is expected",
			v2(`{"name":"A","character_book":null}`), []string{"data.character_book: null where an object is expected"}},
		{"tags written as one string are reported where a list is expected",
			v2(`{"name":"A","tags":"fantasy, elf"}`), []string{"data.tags: string where a list is expected"}},
		{"a number among the greetings names its index",
			v2(`{"name":"A","alternate_greetings":["안녕",42]}`), []string{"data.alternate_greetings[1]: number where a string is expected"}},
		{"a null first_mes is reported where a string is expected",
			v2(`{"name":"A","first_mes":null}`), []string{"data.first_mes: null where a string is expected"}},
		{"null and [] extensions are read as empty and reported",
			v2(`{"name":"A","extensions":null}`), []string{"data.extensions: null where an object is expected"}},
		{"an empty-array extensions is reported as a list",
			v2(`{"name":"A","extensions":[]}`), []string{"data.extensions: list where an object is expected"}},
		{"lorebook entries that are null, and keys as a string, are reported inside the book",
			v3(`{"name":"A","character_book":{"entries":[{"keys":"a, b","secondary_keys":null,"enabled":"yes"},"x"],"scan_depth":"4"}}`),
			[]string{
				`data.character_book.scan_depth: string where a number is expected`,
				`data.character_book.entries[0].keys: string where a list is expected`,
				`data.character_book.entries[0].secondary_keys: null where a list is expected`,
				`data.character_book.entries[0].enabled: string where a boolean is expected`,
				`data.character_book.entries[1]: string where an object is expected`,
			}},
		{"a lorebook entry id may be a number or a string but not a boolean",
			v3(`{"name":"A","character_book":{"entries":[{"id":"e1"},{"id":true}]}}`),
			[]string{"data.character_book.entries[1].id: boolean where a number or a string is expected"}},
		{"V3 fields: assets as an object, a date as a string, a multilingual note as a number",
			v3(`{"name":"A","assets":{"icon":"x"},"creation_date":"2024-01-01","creator_notes_multilingual":{"ko":"메모","en":1},"group_only_greetings":null}`),
			[]string{
				"data.group_only_greetings: null where a list is expected",
				"data.assets: object where a list is expected",
				`data.creator_notes_multilingual["en"]: number where a string is expected`,
				"data.creation_date: string where a number is expected",
			}},
		{"an asset that is not an object and an asset uri that is null are reported",
			v3(`{"name":"A","assets":["icon.png",{"type":"icon","uri":null}]}`),
			[]string{"data.assets[0]: string where an object is expected", "data.assets[1].uri: null where a string is expected"}},
		{"a number spec_version is reported at the root",
			`{"spec":"chara_card_v3","spec_version":3.0,"data":{"name":"A"}}`, []string{"spec_version: number where a string is expected"}},
		{"a V1 card's faults have no data. prefix",
			`{"name":"A","first_mes":null,"personality":["kind"]}`,
			[]string{"personality: list where a string is expected", "first_mes: null where a string is expected"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x.json", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range f.Faults() {
				got = append(got, x.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Faults =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

func TestFaultyFieldsAreNotRead(t *testing.T) {
	f, err := Read("x.json", []byte(v2(`{"name":"하늘","first_mes":null,"alternate_greetings":"안녕하세요.","character_book":{"entries":[{"keys":"아카데미, 리안"}]}}`)))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.Card("")
	if c.HonorificRule != "" || !reflect.DeepEqual(c.CanonEntities, []string{"하늘"}) {
		t.Errorf("a faulty field was read: rule %q canon %q", c.HonorificRule, c.CanonEntities)
	}
}

// TestExportKeepsBytes checks that export changes nothing but our extension:
// unknown keys, faulty fields, white space, escapes and numbers stay byte
// for byte.
func TestExportKeepsBytes(t *testing.T) {
	card := persona.Card{CharacterID: "h", Name: "하늘", HonorificRule: "반말", FirstPerson: "나", CanonEntities: []string{"하늘"}}
	oursVal := `{"canon_entities":["하늘"],"character_id":"h","entity_roles":[],"first_person":"나","forbidden_topics":[],"honorific_rule":"반말"}`
	ours := `"evident/persona":` + oursVal
	head := "{\n  \"spec\": \"chara_card_v3\",\n  \"zz_unknown\": {\"b\": 1, \"a\": [1.50, \"\\u00e9\", \"<&>\"]},\n  \"spec_version\": \"3.0\",\n  \"data\": {\n    \"name\": \"하늘\",\n    \"character_book\": null,\n    \"tags\": \"a, b\""
	tests := []struct {
		name     string
		in, want string
	}{
		{"our member is added at the end of an existing extensions object",
			head + ",\n    \"extensions\": {\"other/app\": {\"k\": 1}}\n  }\n}",
			head + ",\n    \"extensions\": {\"other/app\": {\"k\": 1}," + ours + "}\n  }\n}"},
		{"an existing member of ours is replaced where it is",
			head + ",\n    \"extensions\": {\"evident/persona\": {\"honorific_rule\": \"존댓말\"}, \"z\": 0}\n  }\n}",
			head + ",\n    \"extensions\": {\"evident/persona\": " + oursVal + ", \"z\": 0}\n  }\n}"},
		{"a null extensions becomes an object holding ours only",
			head + ",\n    \"extensions\": null\n  }\n}",
			head + ",\n    \"extensions\": {" + ours + "}\n  }\n}"},
		{"a missing extensions is added at the end of data",
			head + "\n  }\n}",
			head + ",\"extensions\":{" + ours + "}\n  }\n}"},
		{"our member goes first into an empty extensions object",
			head + ",\n    \"extensions\": { }\n  }\n}",
			head + ",\n    \"extensions\": {" + ours + " }\n  }\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Read("x.json", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if out, _ := f.JSON(); string(out) != tt.in {
				t.Fatalf("JSON before SetPersona is not the input:\n%s", out)
			}
			faults := f.Faults()
			if err := f.SetPersona(card); err != nil {
				t.Fatal(err)
			}
			out, err := f.JSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("export =\n%s\nwant\n%s", out, tt.want)
			}
			g, err := Read("x2.json", out)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := g.Card(""); !reflect.DeepEqual(got.CanonEntities, card.CanonEntities) || got.HonorificRule != "반말" {
				t.Errorf("card read back = %+v", got)
			}
			// Only data.extensions may change fault (it had to become an object).
			var keep []Fault
			for _, x := range faults {
				if x.Path != "data.extensions" {
					keep = append(keep, x)
				}
			}
			if !reflect.DeepEqual(g.Faults(), keep) {
				t.Errorf("faults after export = %v, want %v", g.Faults(), keep)
			}
		})
	}
	t.Run("the PNG chunk carries the same bytes, relabelled only in spec and spec_version", func(t *testing.T) {
		in := head + ",\n    \"extensions\": {}\n  }\n}"
		f, err := Read("x.json", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetPersona(card); err != nil {
			t.Fatal(err)
		}
		out, err := PNG(pngOf(tEXt("chara", v2(`{"name":"old"}`)), tEXt("ccv3", v3(`{"name":"old"}`))), f)
		if err != nil {
			t.Fatal(err)
		}
		want := head + ",\n    \"extensions\": {" + ours + "}\n  }\n}"
		if js, _ := pngText(t, out, "ccv3"); string(js) != want {
			t.Errorf("ccv3 chunk =\n%s\nwant\n%s", js, want)
		}
		wantV2 := strings.Replace(strings.Replace(want, `"chara_card_v3"`, `"chara_card_v2"`, 1), `"3.0"`, `"2.0"`, 1)
		if js, _ := pngText(t, out, "chara"); string(js) != wantV2 {
			t.Errorf("chara chunk =\n%s\nwant\n%s", js, wantV2)
		}
	})
	t.Run("a refused SetPersona leaves the export as read", func(t *testing.T) {
		in := head + "\n  }\n}"
		f, _ := Read("x.json", []byte(in))
		if err := f.SetPersona(persona.Card{HonorificRule: "하오체"}); err == nil {
			t.Fatal("SetPersona accepted 하오체")
		}
		if out, _ := f.JSON(); !bytes.Equal(out, []byte(in)) {
			t.Errorf("export changed: %s", out)
		}
	})
}

func TestMembers(t *testing.T) {
	raw := []byte(` { "a" : [1, 2] ,"b":"x\"y", "a": null , "c":{} } `)
	ms, n, err := members(raw, whole(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, sp := range ms {
		got[k] = string(raw[sp.start:sp.end])
	}
	want := map[string]string{"a": "null", "b": `"x\"y"`, "c": "{}"}
	if n != 4 || !reflect.DeepEqual(got, want) {
		t.Errorf("members = %q (%d), want %q (4; a key written twice is its last value)", got, n, want)
	}
}
