package cardfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"evident/internal/clip"
	"evident/internal/located"
)

// Spec values of the two card specifications this package reads.
const (
	SpecV2 = "chara_card_v2"
	SpecV3 = "chara_card_v3"
)

// ExtensionKey is the key under data.extensions that holds the judge's fields.
const ExtensionKey = "evident/persona"

// Format is the container a card was read from.
type Format string

// The three containers [Read] recognises.
const (
	FormatJSON  Format = "json"
	FormatPNG   Format = "png"
	FormatCHARX Format = "charx"
)

// maxExpand caps what one compressed chunk or zip entry may expand to.
const maxExpand = 64 << 20

// Errors that [Error] wraps; test with errors.Is.
var (
	// ErrFormat: the bytes are not a PNG, a zip (CHARX) or a JSON object.
	ErrFormat = errors.New("not a PNG, CHARX (zip) or JSON file")
	// ErrNoCard: a PNG without a chara/ccv3 text chunk, or a zip without card.json.
	ErrNoCard = errors.New("no character card in the file")
	// ErrV1: a V1 card, whose fields sit at the root with no "data" object.
	// Read no longer returns it (V1 cards are imported, see [File.FromV1]);
	// it stays for callers that test for it.
	ErrV1 = errors.New(`V1 character card (no "spec" and no "data" object)`)
	// ErrNotSpec: JSON that is not a chara_card_v2/chara_card_v3 card.
	ErrNotSpec = errors.New("not a chara_card_v2/chara_card_v3 character card")
	// ErrMalformed: broken PNG, zlib, zip, base64 or JSON, or a field of the
	// wrong type (data, data.name, data.extensions, our extension).
	ErrMalformed = errors.New("malformed")
)

// Error is the error of [Read] and [PNG], the module's one position error
// (located.Error; issue 12 item 6): File is the name given to Read ("" for
// PNG's input); Field is where in the file (`tEXt chunk "ccv3"`, `zip entry
// "card.json"`, "" for the whole file); Err is the kind — ErrFormat,
// ErrNoCard, ErrNotSpec or ErrMalformed, so errors.Is(err, ErrNotSpec)
// works; Reason is the kind's text and what exactly, with a byte offset,
// line and column where there is one. The text is "file: part: kind:
// detail", leaving out empty pieces; Line and Column stay 0 (the position is
// in Reason), so the text keeps that shape.
type Error = located.Error

// cardError is the Error of kind at part of file, detail saying what
// exactly ("" for nothing more than the kind).
func cardError(file, part string, kind error, detail string) *Error {
	reason := kind.Error()
	if detail != "" {
		reason += ": " + detail
	}
	return &Error{File: file, Field: part, Err: kind, Reason: reason}
}

// File is one character card read from a file. Its JSON document is kept
// whole, so keys this package does not know survive [File.JSON] and [PNG].
// Card and JSON only read it; SetPersona changes it, so calls that overlap
// one SetPersona need the caller's lock.
type File struct {
	// Name is the file name given to Read, used in messages.
	Name string
	// Format is the container the card came from.
	Format Format
	// Source is where inside the container: the chunk keyword as written
	// ("ccv3", "chara") for a PNG, the zip entry path for CHARX, "" for JSON.
	Source string
	// Chunk is the PNG chunk type the card was read from ("tEXt", "zTXt"
	// or "iTXt"); "" for JSON and CHARX.
	Chunk string
	// Prefix is, for CHARX, how many bytes came before the zip (a
	// self-extracting stub or an image glued in front); 0 otherwise.
	Prefix int64
	// Spec is SpecV2 or SpecV3, as the document says; SpecV2 for a V1
	// card, which Read imports as V2.
	Spec string
	// SpecVersion is the document's spec_version ("" when absent or not a
	// string); "2.0" for an imported V1 card.
	SpecVersion string
	// FromV1 is true when the file held a Character Card V1 (the six
	// fields at the root, no spec, no data): Read turned it into a V2
	// document, and JSON and PNG write that V2 document.
	FromV1 bool

	doc    map[string]any
	raw    []byte  // the document's bytes as read (BOM cut); nil for V1
	dirty  bool    // SetPersona changed the extension since Read
	faults []Fault // see Faults
	assets []Asset // see Assets
}

// Faults returns the fields whose JSON type is not the spec's, in document
// order of the spec's field list (see [Fault]); nil when there are none.
// The slice is f's own; do not change it.
func (f *File) Faults() []Fault { return f.faults }

// Origin says in one English line where the card was read from:
// "JSON", "PNG tEXt chunk \"ccv3\"", "CHARX zip entry \"card.json\", 23
// bytes before the zip", with ", Character Card V1 imported as V2" added
// for a V1 card.
func (f *File) Origin() string {
	var s string
	switch f.Format {
	case FormatPNG:
		s = fmt.Sprintf("PNG %s chunk %q", f.Chunk, f.Source)
	case FormatCHARX:
		s = fmt.Sprintf("CHARX zip entry %q, %d bytes before the zip", f.Source, f.Prefix)
	default:
		s = "JSON"
	}
	if f.FromV1 {
		s += ", Character Card V1 imported as V2"
	}
	return s
}

// Read reads a character card from the bytes of one file, choosing the
// container by content: the PNG signature, else a JSON object (after an
// optional UTF-8 byte-order mark and white space), else a zip (CHARX). name is
// used only in messages. The error is always an *[Error].
func Read(name string, b []byte) (*File, error) {
	switch {
	case len(b) == 0:
		return nil, cardError(name, "", ErrFormat, "empty file")
	case bytes.HasPrefix(b, pngSignature):
		return readPNG(name, b)
	}
	if c := firstByte(b); c == '{' || c == '[' {
		return readDoc(name, FormatJSON, "", "", b)
	}
	if f, ok, err := readCHARX(name, b); ok {
		return f, err
	}
	return nil, cardError(name, "", ErrFormat, fmt.Sprintf("starts with %q", head(b)))
}

// firstByte returns the first byte after a BOM and JSON white space, or 0.
func firstByte(b []byte) byte {
	b = bytes.TrimLeft(bytes.TrimPrefix(b, bom), " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

var bom = []byte("\xEF\xBB\xBF")

// head is the first few bytes of b, for messages.
func head(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// readDoc decodes and classifies one JSON document found in a container.
func readDoc(name string, format Format, source, part string, js []byte) (*File, error) {
	fail := func(kind error, format string, args ...any) error {
		return cardError(name, part, kind, fmt.Sprintf(format, args...))
	}
	js = bytes.TrimPrefix(js, bom)
	var raw json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the offending byte; point at it (at the end
			// for a cut-off document).
			off := int(se.Offset)
			if off > 0 && off <= len(js) && !strings.HasPrefix(se.Error(), "unexpected end") {
				off--
			}
			line, col := position(js, off)
			return nil, fail(ErrMalformed, "JSON at byte %d (line %d, column %d): %v", off, line, col, err)
		}
		return nil, fail(ErrMalformed, "JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fail(ErrMalformed, "JSON: %v", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fail(ErrNotSpec, "the JSON is %s, not an object", kind(v))
	}
	f := &File{Name: name, Format: format, Source: source, doc: doc, raw: js}
	spec, hasSpec := doc["spec"]
	f.Spec, _ = spec.(string)
	f.SpecVersion, _ = doc["spec_version"].(string)
	_, hasData := doc["data"]
	switch {
	case f.Spec == SpecV2 || f.Spec == SpecV3:
		f.faults = checkFields(nil, doc, "", topFields)
	case hasSpec:
		return nil, fail(ErrNotSpec, "spec is %s (want %q or %q)", describe(spec), SpecV2, SpecV3)
	case hasData:
		return nil, fail(ErrNotSpec, `a "data" object but no "spec" (want %q or %q)`, SpecV2, SpecV3)
	case isV1(doc):
		if _, ok := doc["name"].(string); !ok {
			return nil, fail(ErrMalformed, "Character Card V1 whose name is %s, not a string", describe(doc["name"]))
		}
		f.faults = checkFields(nil, doc, "", v1Fields)
		f.doc, f.raw, f.FromV1 = fromV1(doc), nil, true
		f.Spec, f.SpecVersion = SpecV2, "2.0"
		return f, nil
	default:
		return nil, fail(ErrNotSpec, `no "spec", no "data" and no "first_mes" or "mes_example" (a V1 card has one beside its name); keys: %s`, keyList(doc))
	}
	data, ok := doc["data"].(map[string]any)
	if !ok {
		return nil, fail(ErrMalformed, "spec %s but data is %s, not an object", f.Spec, describe(doc["data"]))
	}
	if _, ok := data["name"].(string); !ok {
		return nil, fail(ErrMalformed, "data.name is %s, not a string", describe(data["name"]))
	}
	// The spec's fields are checked first, so that a card refused for our
	// own extension still names every other faulty field (a fresh user
	// found only the first one reported).
	f.faults = checkFields(f.faults, data, "data", dataFields)
	also := ""
	for i, x := range f.faults {
		if i == 0 {
			also = "; also "
		} else {
			also += "; "
		}
		also += x.String()
	}
	ext, err := extensionOf(data)
	if err != nil {
		return nil, fail(ErrMalformed, "%v%s", err, also)
	}
	if _, err := parseExt(ext); err != nil {
		return nil, fail(ErrMalformed, "data.extensions[%q].%v%s", ExtensionKey, err, also)
	}
	f.assets = assetsOf(data)
	return f, nil
}

// v1Text are the V1 fields besides name (TavernCardV1).
var v1Text = []string{"description", "personality", "scenario", "first_mes", "mes_example"}

// isV1 reports whether a root object without spec and data is a V1 card:
// it has a name and first_mes or mes_example, the two Tavern-only names
// (description, personality and scenario are common words that other apps'
// own formats use too, such as NativeTavern's).
func isV1(doc map[string]any) bool {
	_, name := doc["name"]
	_, first := doc["first_mes"]
	_, ex := doc["mes_example"]
	return name && (first || ex)
}

// fromV1 returns the V2 document of a V1 card, as SillyTavern imports one:
// every root key kept where it is (the V1 fields stay at the root too, for
// V1 readers), spec chara_card_v2 2.0, and a data object with the six V1
// fields as they were (a missing one as "") and the V2 fields' defaults
// (empty strings, [] and {}).
func fromV1(doc map[string]any) map[string]any {
	data := map[string]any{
		"creator_notes": "", "system_prompt": "", "post_history_instructions": "",
		"creator": "", "character_version": "",
		"alternate_greetings": []any{}, "tags": []any{}, "extensions": map[string]any{},
	}
	out := make(map[string]any, len(doc)+3)
	for k, v := range doc {
		out[k] = v
	}
	data["name"] = doc["name"]
	for _, k := range v1Text {
		if v, ok := doc[k]; ok {
			data[k] = v
		} else {
			data[k] = ""
		}
	}
	out["spec"], out["spec_version"], out["data"] = SpecV2, "2.0", data
	return out
}

// extensionOf returns our extension object (nil when absent or null) and an
// error when data.extensions or our key has a type we cannot keep.
func extensionOf(data map[string]any) (map[string]any, error) {
	exts, err := extensionsOf(data)
	if err != nil || exts == nil {
		return nil, err
	}
	switch v := exts[ExtensionKey].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("data.extensions[%q] is %s, not an object", ExtensionKey, describe(v))
	}
}

// extensionsOf returns data.extensions as an object: nil when absent, null or
// an empty array; an error for any other non-object.
func extensionsOf(data map[string]any) (map[string]any, error) {
	switch v := data["extensions"].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	case []any:
		if len(v) == 0 {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("data.extensions is %s, not an object", describe(data["extensions"]))
}

// position returns the 1-based line and rune column of byte offset off in b.
func position(b []byte, off int) (line, col int) {
	off = min(max(off, 0), len(b))
	line = 1 + bytes.Count(b[:off], []byte{'\n'})
	start := bytes.LastIndexByte(b[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(b[start:off])
}

// kind names a JSON value's type.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// describe names a value for messages: strings quoted (cut to at most 40
// bytes between two grapheme clusters, internal/clip), other types by kind;
// "missing" for nil.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "missing or null"
	case string:
		if len(v) > 40 {
			v = strings.ToValidUTF8(v[:clip.Bytes(v, 40)], "") + "…"
		}
		return fmt.Sprintf("%q", v)
	}
	return kind(v)
}

// keyList is up to eight of doc's keys, sorted, for messages.
func keyList(doc map[string]any) string {
	keys := sortedKeys(doc)
	if len(keys) == 0 {
		return "none"
	}
	more := ""
	if len(keys) > 8 {
		more = fmt.Sprintf(", … (%d in all)", len(keys))
		keys = keys[:8]
	}
	return strings.Join(keys, ", ") + more
}

// sortedKeys returns m's keys in sorted order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// data returns the document's data object (present after Read).
func (f *File) data() map[string]any {
	d, _ := f.doc["data"].(map[string]any)
	return d
}

// JSON exports the whole card document. Until [File.SetPersona] changes
// something it is the document's bytes exactly as read (a UTF-8 BOM cut);
// after, the same bytes with only data.extensions["evident/persona"]
// replaced or inserted (keys in sorted order inside it), so unknown keys
// and faulty fields come out byte for byte. A V1 card has no V2 bytes to
// keep: its V2 document is written with sorted keys and HTML characters
// unescaped. The returned slice is the caller's.
func (f *File) JSON() ([]byte, error) {
	if f.raw == nil {
		return marshal(f.doc)
	}
	if !f.dirty {
		return bytes.Clone(f.raw), nil
	}
	exts, _ := extensionsOf(f.data())
	ext, err := marshal(exts[ExtensionKey])
	if err != nil {
		return nil, err
	}
	out, err := spliceExtension(f.raw, ext)
	if err != nil {
		// Read checked the bytes, so this does not happen; the tree
		// still holds every key.
		return marshal(f.doc)
	}
	return out, nil
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
