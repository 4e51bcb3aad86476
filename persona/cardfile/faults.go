package cardfile

import (
	"encoding/json"
	"fmt"
)

// Fault is one field of a card whose JSON type is not the one its spec
// wants: a null where an object or list belongs, a string where a list
// belongs, a number where a string belongs and so on (Character Card V2
// spec_v2.md "Proposed fields", V3 SPEC_V3.md "CharacterCard Object",
// V1 = the six strings of TavernCardV1). [Read] reports every one in
// [File.Faults] and reads nothing from such a field; the field itself is
// never written back changed (see the package doc, "Faults").
type Fault struct {
	// Path is where the field is, in JSON terms: "data.character_book",
	// "data.tags[2]", "data.character_book.entries[0].keys"; a V1 card's
	// fields have no "data." ("first_mes").
	Path string
	// Want is the type the spec wants, with its article: "an object",
	// "a list", "a string", "a number", "a boolean", "a number or a string".
	Want string
	// Got is the type found: "null", "string", "number", "boolean",
	// "object" or "list".
	Got string
}

// String is "PATH: GOT where WANT is expected", for example
// "data.character_book: null where an object is expected".
func (x Fault) String() string {
	return fmt.Sprintf("%s: %s where %s is expected", x.Path, x.Got, x.Want)
}

// jsonType is one JSON type a field may have.
type jsonType int

const (
	tString jsonType = iota
	tNumber
	tBool
	tObject
	tList
	tNumberOrString
)

var wantText = map[jsonType]string{
	tString: "a string", tNumber: "a number", tBool: "a boolean",
	tObject: "an object", tList: "a list", tNumberOrString: "a number or a string",
}

// shape is what the spec wants of one value: its type, the shape of a
// list's elements or of an object's values (elem), and an object's known
// fields.
type shape struct {
	typ    jsonType
	elem   *shape
	fields []field
}

// field is one known key of an object and its shape.
type field struct {
	key string
	shape
}

var (
	sString  = shape{typ: tString}
	sNumber  = shape{typ: tNumber}
	sBool    = shape{typ: tBool}
	sObject  = shape{typ: tObject}
	sStrings = shape{typ: tList, elem: &sString}
	sEntry   = shape{typ: tObject, fields: entryFields}
)

// entryFields: a lorebook entry (spec_v2.md CharacterBook entries, V3 adds
// use_regex and lets id be a string).
var entryFields = []field{
	{"keys", sStrings}, {"secondary_keys", sStrings},
	{"content", sString}, {"comment", sString}, {"name", sString}, {"position", sString},
	{"extensions", sObject},
	{"enabled", sBool}, {"case_sensitive", sBool}, {"constant", sBool}, {"selective", sBool}, {"use_regex", sBool},
	{"insertion_order", sNumber}, {"priority", sNumber},
	{"id", shape{typ: tNumberOrString}},
}

// bookFields: data.character_book.
var bookFields = []field{
	{"name", sString}, {"description", sString},
	{"scan_depth", sNumber}, {"token_budget", sNumber},
	{"recursive_scanning", sBool},
	{"extensions", sObject},
	{"entries", shape{typ: tList, elem: &sEntry}},
}

// assetFields: one element of data.assets (V3).
var assetFields = []field{{"type", sString}, {"uri", sString}, {"name", sString}, {"ext", sString}}

// dataFields: the data object of V2 and V3 (data.name is checked by Read,
// data.extensions is reported here and also checked by Read).
var dataFields = []field{
	{"description", sString}, {"personality", sString}, {"scenario", sString},
	{"first_mes", sString}, {"mes_example", sString},
	{"creator_notes", sString}, {"system_prompt", sString}, {"post_history_instructions", sString},
	{"creator", sString}, {"character_version", sString}, {"nickname", sString},
	{"alternate_greetings", sStrings}, {"tags", sStrings},
	{"group_only_greetings", sStrings}, {"source", sStrings},
	{"extensions", sObject},
	{"character_book", shape{typ: tObject, fields: bookFields}},
	{"assets", shape{typ: tList, elem: &shape{typ: tObject, fields: assetFields}}},
	{"creator_notes_multilingual", shape{typ: tObject, elem: &sString}},
	{"creation_date", sNumber}, {"modification_date", sNumber},
}

// v1Fields: the six strings of a V1 card, at the root.
var v1Fields = []field{
	{"name", sString}, {"description", sString}, {"personality", sString},
	{"scenario", sString}, {"first_mes", sString}, {"mes_example", sString},
}

// topFields: the root of a V2/V3 card besides spec and data.
var topFields = []field{{"spec_version", sString}}

// typeOf names a decoded JSON value's type as Fault.Got does.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "list"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

// fits reports whether v has type t.
func fits(v any, t jsonType) bool {
	switch v.(type) {
	case string:
		return t == tString || t == tNumberOrString
	case json.Number:
		return t == tNumber || t == tNumberOrString
	case bool:
		return t == tBool
	case map[string]any:
		return t == tObject
	case []any:
		return t == tList
	}
	return false
}

// checkFields appends to out a Fault for every present field of obj whose
// value does not fit its shape, recursively; prefix is obj's path ("" for
// the root).
func checkFields(out []Fault, obj map[string]any, prefix string, fields []field) []Fault {
	for _, fl := range fields {
		v, ok := obj[fl.key]
		if !ok {
			continue
		}
		p := fl.key
		if prefix != "" {
			p = prefix + "." + fl.key
		}
		out = checkValue(out, v, p, fl.shape)
	}
	return out
}

// checkValue appends the faults of one value at path p.
func checkValue(out []Fault, v any, p string, s shape) []Fault {
	if !fits(v, s.typ) {
		return append(out, Fault{Path: p, Want: wantText[s.typ], Got: typeOf(v)})
	}
	switch v := v.(type) {
	case []any:
		if s.elem != nil {
			for i, x := range v {
				out = checkValue(out, x, fmt.Sprintf("%s[%d]", p, i), *s.elem)
			}
		}
	case map[string]any:
		out = checkFields(out, v, p, s.fields)
		if s.elem != nil {
			for _, k := range sortedKeys(v) {
				out = checkValue(out, v[k], fmt.Sprintf("%s[%q]", p, k), *s.elem)
			}
		}
	}
	return out
}
