package ingest

import (
	"encoding/json"
	"reflect"
	"testing"

	"golang.org/x/text/unicode/norm"

	"evident/persona"
)

// The optional card column first_person_forms (persona.Card.FirstPersonForms,
// issue 14 item 2).
func TestFirstPersonForms(t *testing.T) {
	const head = `{"character_id":"c1","name":"무영","honorific_rule":"존댓말","first_person":"소인"`
	for _, tc := range []struct {
		name, row string
		want      []string
		err       string
	}{
		{"a card without the column has no forms (nil, as before)", head + `}`, nil, ""},
		{"a null column is no forms", head + `,"first_person_forms":null}`, nil, ""},
		{"the listed forms are read in order", head + `,"first_person_forms":["소인이","소인의"]}`, []string{"소인이", "소인의"}, ""},
		{"forms in NFD come out in NFC", head + `,"first_person_forms":["` + norm.NFD.String("소인이") + `"]}`, []string{"소인이"}, ""},
		{"a string where the list is expected is rejected", head + `,"first_person_forms":"소인이"}`, nil,
			"line 1, column 98: first_person_forms: want array of strings or null, got string"}, // rune 98 opens the value
		{"an empty form is rejected", head + `,"first_person_forms":["소인이",""]}`, nil,
			"line 1, column 98: first_person_forms: want array of non-empty strings or null, got empty or null element at index 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeCard(Raw{Line: 1, JSON: []byte(tc.row)})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error = %v\nwant    %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.FirstPersonForms, tc.want) {
				t.Errorf("forms %#v, want %#v", got.FirstPersonForms, tc.want)
			}
		})
	}
	t.Run("a CSV card reads the column as a JSON list cell; an empty cell is no forms", func(t *testing.T) {
		in := "character_id,name,honorific_rule,first_person,first_person_forms\n" +
			"c1,무영,존댓말,소인,\"[\"\"소인이\"\"]\"\n" +
			"c2,하람,반말,나,\n"
		got := mustReadAll(t, []byte(in), CSV, DecodeCard)
		if len(got) != 2 || got[0].Err != "" || got[1].Err != "" {
			t.Fatalf("%+v", got)
		}
		if !reflect.DeepEqual(got[0].V.FirstPersonForms, []string{"소인이"}) || got[1].V.FirstPersonForms != nil {
			t.Errorf("forms %#v, %#v", got[0].V.FirstPersonForms, got[1].V.FirstPersonForms)
		}
	})
	t.Run("a card without forms encodes without the key, one with forms after public", func(t *testing.T) {
		c := persona.Card{CharacterID: "c1", Name: "무영", HonorificRule: "존댓말", FirstPerson: "소인",
			CanonEntities: []string{}, ForbiddenTopics: []string{}, EntityRoles: []persona.EntityRole{}}
		b, _ := json.Marshal(c)
		if want := `{"character_id":"c1","name":"무영","honorific_rule":"존댓말","first_person":"소인","canon_entities":[],"forbidden_topics":[],"entity_roles":[]}`; string(b) != want {
			t.Errorf("%s", b)
		}
		c.FirstPersonForms = []string{"소인이"}
		b, _ = json.Marshal(c)
		if want := `{"character_id":"c1","name":"무영","honorific_rule":"존댓말","first_person":"소인","canon_entities":[],"forbidden_topics":[],"entity_roles":[],"first_person_forms":["소인이"]}`; string(b) != want {
			t.Errorf("%s", b)
		}
	})
}

// FuzzDecodeCardFirstPersonForms: any card row decodes without a panic; a
// decoded card's forms are nil or non-empty NFC strings, and the card
// encoded again decodes to the same card.
func FuzzDecodeCardFirstPersonForms(f *testing.F) {
	const head = `{"character_id":"c1","name":"무영","honorific_rule":"존댓말","first_person":"소인"`
	for _, s := range []string{head + `}`, head + `,"first_person_forms":null}`, head + `,"first_person_forms":["소인이","소인의"]}`,
		head + `,"first_person_forms":"소인이"}`, head + `,"first_person_forms":[""]}`, head + `,"first_person_forms":[1]}`,
		head + `,"first_person_forms":[]}`, head + `,"first_person_forms":{"a":1}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, row string) {
		c, err := DecodeCard(Raw{Line: 1, JSON: []byte(row)})
		if err != nil {
			return
		}
		for _, s := range c.FirstPersonForms {
			if s == "" || !norm.NFC.IsNormalString(s) {
				t.Fatalf("form %q", s)
			}
		}
		b, merr := json.Marshal(c)
		if merr != nil {
			t.Fatal(merr)
		}
		again, err := DecodeCard(Raw{Line: 1, JSON: b})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if len(c.FirstPersonForms) == 0 {
			c.FirstPersonForms = nil // [] encodes as absent
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("round trip\n%+v\n%+v", c, again)
		}
	})
}
