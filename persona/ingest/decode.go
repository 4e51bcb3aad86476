package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"evident/persona"
)

// What each column must hold, for error messages.
const (
	wantID       = "non-empty string"
	wantText     = "string or null"
	wantString   = "string"
	wantList     = "array of strings or null"
	wantRoles    = `array of {"role", "entity"} objects or null`
	wantBool     = "true or false"
	wantTime     = "RFC 3339 time string"
	wantHonorRul = `"` + persona.Banmal + `" or "` + persona.Jondaemal + `"`
)

var turnWants = map[string]string{
	"turn_id": wantID, "session_id": wantID, "character_id": wantID, "model_id": wantID,
	"user_message": wantText, "reply_text": wantText, "first_person": wantText,
	"named_entities": wantList, "honorific_level": wantText, "user_asked_recall": wantBool,
	"created_at": wantTime, "prompt_id": wantString,
}

var cardWants = map[string]string{
	"character_id": wantID, "name": wantID, "honorific_rule": wantHonorRul, "first_person": wantID,
	"canon_entities": wantList, "forbidden_topics": wantList, "entity_roles": wantRoles,
	"description": wantString, "public": wantBool, "first_person_forms": wantList,
}

var lexiconWants = map[string]string{"term": wantID, "topic": wantID}

// jsonBool records what a JSON boolean column held without allocating:
// absent (0), false, true, null, or anything else.
type jsonBool uint8

const (
	boolAbsent jsonBool = iota
	boolFalse
	boolTrue
	boolNull
	boolOther
)

func (b *jsonBool) UnmarshalJSON(p []byte) error {
	switch string(p) {
	case "true":
		*b = boolTrue
	case "false":
		*b = boolFalse
	case "null":
		*b = boolNull
	default:
		*b = boolOther
	}
	return nil
}

type turnJSON struct {
	TurnID          string   `json:"turn_id"`
	SessionID       string   `json:"session_id"`
	CharacterID     string   `json:"character_id"`
	ModelID         string   `json:"model_id"`
	UserMessage     *string  `json:"user_message"`
	ReplyText       *string  `json:"reply_text"`
	FirstPerson     *string  `json:"first_person"`
	NamedEntities   []string `json:"named_entities"`
	HonorificLevel  *string  `json:"honorific_level"`
	UserAskedRecall jsonBool `json:"user_asked_recall"`
	CreatedAt       *string  `json:"created_at"`
	PromptID        *string  `json:"prompt_id"`
}

type roleJSON struct {
	Role   string `json:"role"`
	Entity string `json:"entity"`
}

type cardJSON struct {
	CharacterID     string     `json:"character_id"`
	Name            string     `json:"name"`
	HonorificRule   string     `json:"honorific_rule"`
	FirstPerson     string     `json:"first_person"`
	FirstPersonForm []string   `json:"first_person_forms"`
	CanonEntities   []string   `json:"canon_entities"`
	ForbiddenTopics []string   `json:"forbidden_topics"`
	EntityRoles     []roleJSON `json:"entity_roles"`
	Description     *string    `json:"description"`
	Public          jsonBool   `json:"public"`
}

type lexiconJSON struct {
	Term  string `json:"term"`
	Topic string `json:"topic"`
}

// DecodeTurn decodes one chat_turn row (spec persona.md "Input: three
// tables") into a persona.Turn with every string NFC-normalised.
//
// turn_id, session_id, character_id and model_id must be non-empty strings.
// user_message, reply_text, first_person and honorific_level are a string or
// null (absent = null; in CSV an empty cell = null). named_entities is an
// array of non-empty strings or null: null or absent gives a nil slice, []
// gives a non-nil empty slice (in CSV the cell holds the JSON array; an empty
// cell or the cell null = null). user_asked_recall is true or false, absent
// (or an empty CSV cell) = false; null or anything else is an error; CSV
// accepts true/false in any case. created_at, when present and not null (or
// a non-empty CSV cell), must parse as RFC 3339 (persona.ParseCreatedAt) and is kept as
// written; prompt_id is an optional string. Unknown columns are ignored.
//
// The error is always a *[RowError] with the line and, where known, the
// column of the problem: raw.Err, bad JSON syntax, a value that is not a JSON
// object, invalid UTF-8 anywhere in the row (encoding/json would replace it
// silently), a wrong type or a missing required column. DecodeTurn is pure
// and safe for concurrent use.
func DecodeTurn(raw Raw) (persona.Turn, error) {
	var t persona.Turn
	var err *RowError
	switch {
	case raw.Err != nil:
		err = asRowError(raw, raw.Err)
	case raw.JSON != nil:
		t, err = decodeTurnJSON(raw)
	case raw.CSV != nil:
		t, err = decodeTurnCSV(raw)
	default:
		err = &RowError{Line: raw.Line, Reason: "empty row"}
	}
	if err != nil {
		return persona.Turn{}, err
	}
	return t, nil
}

// DecodeCard decodes one character_card row (spec persona.md "Input: three
// tables") into a persona.Card with every string NFC-normalised.
//
// character_id, name and first_person must be non-empty strings;
// honorific_rule must be "반말" or "존댓말". canon_entities and
// forbidden_topics are arrays of non-empty strings (an empty forbidden topic
// would match every reply); entity_roles is an array of {"role", "entity"}
// objects whose two fields are non-empty strings. The three lists, when
// absent or null (or an empty CSV cell, or the cell null), come out as
// non-nil empty slices. description is an optional string, public an
// optional boolean (absent or null = false). first_person_forms is an
// optional array of non-empty strings, the card's declined forms of
// first_person (persona.Card.FirstPersonForms); absent, null or an empty CSV
// cell leave it nil. Unknown columns are ignored.
//
// The error is always a *[RowError], as for [DecodeTurn]. DecodeCard is pure
// and safe for concurrent use.
func DecodeCard(raw Raw) (persona.Card, error) {
	var c persona.Card
	var err *RowError
	switch {
	case raw.Err != nil:
		err = asRowError(raw, raw.Err)
	case raw.JSON != nil:
		c, err = decodeCardJSON(raw)
	case raw.CSV != nil:
		c, err = decodeCardCSV(raw)
	default:
		err = &RowError{Line: raw.Line, Reason: "empty row"}
	}
	if err != nil {
		return persona.Card{}, err
	}
	return c, nil
}

// DecodeLexicon decodes one topic_lexicon row (spec persona.md "Input: three
// tables"): term and topic must be non-empty strings, NFC-normalised.
// Unknown columns are ignored. Row order is the caller's to keep. The error
// is always a *[RowError], as for [DecodeTurn]. DecodeLexicon is pure and
// safe for concurrent use.
func DecodeLexicon(raw Raw) (persona.LexiconRow, error) {
	var l persona.LexiconRow
	var err *RowError
	switch {
	case raw.Err != nil:
		err = asRowError(raw, raw.Err)
	case raw.JSON != nil:
		l, err = decodeLexiconJSON(raw)
	case raw.CSV != nil:
		l, err = decodeLexiconCSV(raw)
	default:
		err = &RowError{Line: raw.Line, Reason: "empty row"}
	}
	if err != nil {
		return persona.LexiconRow{}, err
	}
	return l, nil
}

// nfc returns s in NFC. A string made only of ASCII and precomposed Hangul
// syllables (U+AC00–U+D7A3) is already in NFC (none of those characters
// combines with what precedes it or decomposes), and nearly every Korean
// cell is such a string, so it is returned at once; any other string goes
// through norm.NFC.String, whose own check costs a table lookup per rune.
func nfc(s string) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= 0xEA && c <= 0xED && i+2 < len(s) && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 {
			r := rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
			if r >= 0xAC00 && r <= 0xD7A3 {
				i += 3
				continue
			}
		}
		return norm.NFC.String(s)
	}
	return s
}

// nfcPtr normalises *p in place (p is owned by the decoder).
func nfcPtr(p *string) *string {
	if p != nil {
		*p = nfc(*p)
	}
	return p
}

// nfcList normalises every element in place and reports the index of the
// first empty element (a JSON null element also decodes as ""), or -1.
func nfcList(s []string) int {
	bad := -1
	for i := range s {
		if s[i] == "" && bad < 0 {
			bad = i
		}
		s[i] = nfc(s[i])
	}
	return bad
}

// emptyElement is the reason for an empty or null element at index i of a
// list column.
func emptyElement(i int) string {
	return fmt.Sprintf("want array of non-empty strings or null, got empty or null element at index %d", i)
}

// ---- JSON rows ----

// jsonPos returns the line and column of byte k of raw.JSON.
func jsonPos(raw Raw, k int) (int, int) {
	if k > len(raw.JSON) {
		k = len(raw.JSON)
	}
	if k < 0 {
		k = 0
	}
	col := raw.col
	if col < 1 {
		col = 1
	}
	return advancePos(raw.Line, col, raw.JSON[:k])
}

// checkJSON rejects a JSON row that has invalid UTF-8 or is not an object.
func checkJSON(raw Raw) *RowError {
	if !utf8.Valid(raw.JSON) {
		k := firstInvalidUTF8(raw.JSON)
		l, c := jsonPos(raw, k)
		field, _, _ := fieldAt(raw.JSON, k)
		return &RowError{Line: l, Column: c, Field: field, Reason: "invalid UTF-8"}
	}
	i := 0
	for i < len(raw.JSON) && (raw.JSON[i] == ' ' || raw.JSON[i] == '\t' || raw.JSON[i] == '\r' || raw.JSON[i] == '\n') {
		i++
	}
	if i == len(raw.JSON) || raw.JSON[i] != '{' {
		l, c := jsonPos(raw, i)
		return &RowError{Line: l, Column: c, Reason: "want JSON object, got " + jsonKind(raw.JSON[i:])}
	}
	return nil
}

// loneSurrogate rejects a row, already decoded by encoding/json, that holds
// a \u escape of a surrogate half not paired with the other (\ud800 alone,
// or \udc00 first): encoding/json turns it into U+FFFD, so a name would be
// "\ufffd" and a reply's verbatim evidence would show a character the row
// does not have (the JSON text is then not Unicode: RFC 8259 section 8.2
// leaves its meaning open). Linear in the row; the row must be valid JSON,
// so every backslash starts an escape inside a string.
func loneSurrogate(raw Raw) *RowError {
	i, found := loneSurrogateAt(raw.JSON)
	if !found {
		return nil
	}
	l, c := jsonPos(raw, i)
	field, _, _ := fieldAt(raw.JSON, i)
	return &RowError{Line: l, Column: c, Field: field, Reason: surrogateReason(raw.JSON[i : i+6])}
}

// surrogateReason is the reason of a reject for esc, a lone surrogate's
// escape as the row writes it.
func surrogateReason(esc []byte) string {
	return fmt.Sprintf("%s is half of a surrogate pair, with no other half: the text is not Unicode (it would read as U+FFFD)", esc)
}

// loneSurrogateAt finds the first \u escape of an unpaired surrogate half in
// b, valid JSON text: its offset.
func loneSurrogateAt(b []byte) (at int, found bool) {
	hex4 := func(i int) (rune, bool) { // the \uXXXX escape at b[i], its value
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case '0' <= c && c <= '9':
				r = r<<4 | rune(c-'0')
			case 'a' <= c && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case 'A' <= c && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(b); {
		k := bytes.IndexByte(b[i:], '\\')
		if k < 0 {
			break
		}
		i += k
		r, ok := hex4(i)
		switch {
		case !ok: // another escape: two bytes
			i += 2
		case 0xD800 <= r && r < 0xDC00:
			if lo, ok := hex4(i + 6); ok && 0xDC00 <= lo && lo < 0xE000 {
				i += 12 // a pair
				continue
			}
			return i, true
		case 0xDC00 <= r && r < 0xE000:
			return i, true
		default:
			i += 6
		}
	}
	return 0, false
}

// topLevel calls fn with each key of the object in data and the byte range
// of its value, until fn returns false or the object ends or breaks. Used on
// error paths only.
func topLevel(data []byte, fn func(key string, start, end int) bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return
		}
		end := int(dec.InputOffset())
		if !fn(key, end-len(v), end) {
			return
		}
	}
}

// fieldAt returns the key whose value holds byte k of data, with the value's
// range; "" when none.
func fieldAt(data []byte, k int) (key string, start, end int) {
	topLevel(data, func(kk string, s, e int) bool {
		if s <= k && k < e {
			key, start, end = kk, s, e
			return false
		}
		return true
	})
	return key, start, end
}

// valueOf returns where the value of key starts in data and its bytes; -1
// when the key is absent. Keys match as encoding/json matches them (the last
// key equal to key ignoring case wins).
func valueOf(data []byte, key string) (int, []byte) {
	start := -1
	var val []byte
	topLevel(data, func(k string, s, e int) bool {
		if strings.EqualFold(k, key) {
			start, val = s, data[s:e]
		}
		return true
	})
	return start, val
}

// fieldError builds the error for column field of a JSON row, placed at the
// column's value when the key is found.
func fieldError(raw Raw, field, reason string) *RowError {
	e := &RowError{Line: raw.Line, Field: field, Reason: reason}
	if start, _ := valueOf(raw.JSON, field); start >= 0 {
		e.Line, e.Column = jsonPos(raw, start)
	}
	return e
}

// describe names a JSON value for messages: `null`, `an empty string`,
// `the string "x"`, `a number`...
func describe(val []byte) string {
	if len(val) > 0 && val[0] == '"' {
		var s string
		if json.Unmarshal(val, &s) == nil {
			if s == "" {
				return "empty string"
			}
			return fmt.Sprintf("%q", s)
		}
	}
	return jsonKind(val)
}

// requiredJSON checks a required non-empty string column.
func requiredJSON(raw Raw, field, v string) *RowError {
	if v != "" {
		return nil
	}
	start, val := valueOf(raw.JSON, field)
	if start < 0 {
		return &RowError{Line: raw.Line, Field: field, Reason: "required column is missing"}
	}
	l, c := jsonPos(raw, start)
	return &RowError{Line: l, Column: c, Field: field, Reason: "want " + wantID + ", got " + describe(val)}
}

// jsonError turns an encoding/json error for raw into a *RowError.
func jsonError(raw Raw, err error, wants map[string]string) *RowError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		l, c := jsonPos(raw, int(se.Offset)-1)
		return &RowError{Line: l, Column: c, Reason: "bad JSON: " + se.Error()}
	case errors.As(err, &te):
		top, sub, _ := strings.Cut(te.Field, ".")
		want, ok := wants[top]
		if !ok {
			want = te.Type.String()
		}
		got := te.Value
		switch {
		case sub != "":
			got = "element with " + sub + " " + te.Value
		case te.Type != nil && te.Type.Kind() != reflect.Slice && (want == wantList || want == wantRoles):
			got = te.Value + " element"
		}
		return fieldError(raw, top, "want "+want+", got "+got)
	}
	return &RowError{Line: raw.Line, Reason: "bad JSON: " + err.Error()}
}

// boolJSON checks an optional boolean column; nullOK lets null mean false.
func boolJSON(raw Raw, field string, b jsonBool, nullOK bool) (bool, *RowError) {
	switch b {
	case boolTrue:
		return true, nil
	case boolAbsent, boolFalse:
		return false, nil
	case boolNull:
		if nullOK {
			return false, nil
		}
	}
	_, val := valueOf(raw.JSON, field)
	return false, fieldError(raw, field, "want "+wantBool+", got "+describe(val))
}

func decodeTurnJSON(raw Raw) (persona.Turn, *RowError) {
	var j turnJSON
	// scanTurn (turnscan.go) validates and decodes in one pass; only a row
	// it declines (bad, or unusual enough to need encoding/json's rules) is
	// read again by encoding/json, the reference, which decides and words
	// the error (its error types carry the offsets). So each good row is
	// validated once, not three times (issue 18; BenchmarkDecodeTurnJSONL).
	if scanTurn(raw.JSON, &j) {
		return turnFromJSON(raw, &j)
	}
	return decodeTurnJSONStd(raw)
}

// DecodeTurnChecked decodes a row that DecodeTurn already accepted once (the
// judge's second pass over the same file). It is DecodeTurn: the one-pass
// fast path (issue 18) validates as it decodes, so skipping the checks no
// longer saves anything; the name stays for callers.
func DecodeTurnChecked(raw Raw) (persona.Turn, error) { return DecodeTurn(raw) }

// decodeTurnJSONStd decodes a chat_turn JSON row with encoding/json: the
// reference decoder, used when scanTurn declines a row, and the writer
// of every syntax and type error.
func decodeTurnJSONStd(raw Raw) (persona.Turn, *RowError) {
	if e := checkJSON(raw); e != nil {
		return persona.Turn{}, e
	}
	var j turnJSON
	if err := json.Unmarshal(raw.JSON, &j); err != nil {
		return persona.Turn{}, jsonError(raw, err, turnWants)
	}
	if e := loneSurrogate(raw); e != nil {
		return persona.Turn{}, e
	}
	return turnFromJSON(raw, &j)
}

// turnFromJSON checks a decoded chat_turn row and builds the turn.
func turnFromJSON(raw Raw, j *turnJSON) (persona.Turn, *RowError) {
	for _, f := range [...]struct {
		name string
		v    string
	}{{"turn_id", j.TurnID}, {"session_id", j.SessionID}, {"character_id", j.CharacterID}, {"model_id", j.ModelID}} {
		if e := requiredJSON(raw, f.name, f.v); e != nil {
			return persona.Turn{}, e
		}
	}
	if bad := nfcList(j.NamedEntities); bad >= 0 {
		return persona.Turn{}, fieldError(raw, "named_entities",
			emptyElement(bad))
	}
	recall, e := boolJSON(raw, "user_asked_recall", j.UserAskedRecall, false)
	if e != nil {
		return persona.Turn{}, e
	}
	t := persona.Turn{
		TurnID:          nfc(j.TurnID),
		SessionID:       nfc(j.SessionID),
		CharacterID:     nfc(j.CharacterID),
		ModelID:         nfc(j.ModelID),
		UserMessage:     nfcPtr(j.UserMessage),
		ReplyText:       nfcPtr(j.ReplyText),
		FirstPerson:     nfcPtr(j.FirstPerson),
		NamedEntities:   j.NamedEntities,
		HonorificLevel:  nfcPtr(j.HonorificLevel),
		UserAskedRecall: recall,
	}
	if j.CreatedAt != nil {
		if _, err := persona.ParseCreatedAt(*j.CreatedAt); err != nil {
			return persona.Turn{}, fieldError(raw, "created_at", fmt.Sprintf("want %s, got %q", wantTime, *j.CreatedAt))
		}
		t.CreatedAt = nfc(*j.CreatedAt)
	}
	if j.PromptID != nil {
		t.PromptID = nfc(*j.PromptID)
	}
	return t, nil
}

func decodeCardJSON(raw Raw) (persona.Card, *RowError) {
	if e := checkJSON(raw); e != nil {
		return persona.Card{}, e
	}
	var j cardJSON
	if err := json.Unmarshal(raw.JSON, &j); err != nil {
		return persona.Card{}, jsonError(raw, err, cardWants)
	}
	if e := loneSurrogate(raw); e != nil {
		return persona.Card{}, e
	}
	for _, f := range [...]struct {
		name string
		v    string
	}{{"character_id", j.CharacterID}, {"name", j.Name}, {"honorific_rule", j.HonorificRule}, {"first_person", j.FirstPerson}} {
		if e := requiredJSON(raw, f.name, f.v); e != nil {
			return persona.Card{}, e
		}
	}
	c := persona.Card{
		CharacterID:   nfc(j.CharacterID),
		Name:          nfc(j.Name),
		HonorificRule: nfc(j.HonorificRule),
		FirstPerson:   nfc(j.FirstPerson),
	}
	if c.HonorificRule != persona.Banmal && c.HonorificRule != persona.Jondaemal {
		return persona.Card{}, fieldError(raw, "honorific_rule", fmt.Sprintf("want %s, got %q", wantHonorRul, j.HonorificRule))
	}
	var e *RowError
	if j.FirstPersonForm != nil { // optional: absent or null stays nil
		if c.FirstPersonForms, e = cardListJSON(raw, "first_person_forms", j.FirstPersonForm); e != nil {
			return persona.Card{}, e
		}
	}
	if c.CanonEntities, e = cardListJSON(raw, "canon_entities", j.CanonEntities); e != nil {
		return persona.Card{}, e
	}
	if c.ForbiddenTopics, e = cardListJSON(raw, "forbidden_topics", j.ForbiddenTopics); e != nil {
		return persona.Card{}, e
	}
	if c.EntityRoles, e = roles(j.EntityRoles); e != nil {
		return persona.Card{}, fieldError(raw, "entity_roles", e.Reason)
	}
	if j.Description != nil {
		c.Description = nfc(*j.Description)
	}
	if c.Public, e = boolJSON(raw, "public", j.Public, true); e != nil {
		return persona.Card{}, e
	}
	return c, nil
}

// cardListJSON normalises a card list; nil becomes an empty slice.
func cardListJSON(raw Raw, field string, s []string) ([]string, *RowError) {
	if s == nil {
		return []string{}, nil
	}
	if bad := nfcList(s); bad >= 0 {
		return nil, fieldError(raw, field, emptyElement(bad))
	}
	return s, nil
}

// roles converts entity_roles; the error carries only a Reason.
func roles(js []roleJSON) ([]persona.EntityRole, *RowError) {
	out := make([]persona.EntityRole, len(js))
	for i, r := range js {
		if r.Role == "" || r.Entity == "" {
			return nil, &RowError{Reason: fmt.Sprintf("want %s, got element at index %d without a non-empty role and entity", wantRoles, i)}
		}
		out[i] = persona.EntityRole{Role: nfc(r.Role), Entity: nfc(r.Entity)}
	}
	return out, nil
}

func decodeLexiconJSON(raw Raw) (persona.LexiconRow, *RowError) {
	if e := checkJSON(raw); e != nil {
		return persona.LexiconRow{}, e
	}
	var j lexiconJSON
	if err := json.Unmarshal(raw.JSON, &j); err != nil {
		return persona.LexiconRow{}, jsonError(raw, err, lexiconWants)
	}
	if e := loneSurrogate(raw); e != nil {
		return persona.LexiconRow{}, e
	}
	if e := requiredJSON(raw, "term", j.Term); e != nil {
		return persona.LexiconRow{}, e
	}
	if e := requiredJSON(raw, "topic", j.Topic); e != nil {
		return persona.LexiconRow{}, e
	}
	return persona.LexiconRow{Term: nfc(j.Term), Topic: nfc(j.Topic)}, nil
}

// ---- CSV rows ----

// cellError builds the error for cell i of a CSV row.
func cellError(raw Raw, i int, reason string) *RowError {
	e := &RowError{Line: raw.Line, Reason: reason}
	if i >= 0 && i < len(raw.Header) {
		e.Field = raw.Header[i]
	}
	if i >= 0 && i < len(raw.cells) {
		e.Line, e.Column = raw.cells[i].line, raw.cells[i].col
	}
	return e
}

// checkCSV rejects a CSV row whose cell count differs from its header or
// that holds invalid UTF-8.
func checkCSV(raw Raw) *RowError {
	if len(raw.CSV) != len(raw.Header) {
		return &RowError{Line: raw.Line, Reason: fmt.Sprintf("want %d cells as in the header, got %d", len(raw.Header), len(raw.CSV))}
	}
	for i, cell := range raw.CSV {
		if !utf8.ValidString(cell) {
			return cellError(raw, i, "invalid UTF-8")
		}
	}
	return nil
}

// requiredCSV checks a required non-empty string column; idx is the cell
// index, or -1 when the header lacks the column.
func requiredCSV(raw Raw, field string, idx int, v string) *RowError {
	switch {
	case idx < 0:
		return &RowError{Line: raw.Line, Field: field, Reason: "required column is missing from the header"}
	case v == "":
		return cellError(raw, idx, "want "+wantID+", got an empty cell")
	}
	return nil
}

// optCell is a nullable text cell: empty = null.
func optCell(cell string) *string {
	if cell == "" {
		return nil
	}
	s := nfc(cell)
	return &s
}

// boolCell reads a boolean cell: true/false in any case, empty = false.
func boolCell(raw Raw, i int) (bool, *RowError) {
	s := strings.TrimSpace(raw.CSV[i])
	switch {
	case s == "", strings.EqualFold(s, "false"):
		return false, nil
	case strings.EqualFold(s, "true"):
		return true, nil
	}
	return false, cellError(raw, i, fmt.Sprintf("want true, false or an empty cell, got %q", raw.CSV[i]))
}

// listCell reads a list cell holding a JSON array into dst (a *[]string or
// *[]roleJSON); an empty cell or the cell null leaves dst nil.
func listCell(raw Raw, i int, dst any, want string) *RowError {
	s := strings.TrimSpace(raw.CSV[i])
	if s == "" || s == "null" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		got := jsonKind([]byte(s))
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			got = "invalid JSON (" + se.Error() + ")"
		case s[0] == '[':
			got = "array with a wrong element"
		}
		return cellError(raw, i, "want JSON "+want+", got "+got)
	}
	if at, found := loneSurrogateAt([]byte(s)); found {
		return cellError(raw, i, surrogateReason([]byte(s[at:at+6])))
	}
	return nil
}

func decodeTurnCSV(raw Raw) (persona.Turn, *RowError) {
	if e := checkCSV(raw); e != nil {
		return persona.Turn{}, e
	}
	var t persona.Turn
	req := [4]int{-1, -1, -1, -1}
	for i, name := range raw.Header {
		cell := raw.CSV[i]
		switch name {
		case "turn_id":
			t.TurnID, req[0] = nfc(cell), i
		case "session_id":
			t.SessionID, req[1] = nfc(cell), i
		case "character_id":
			t.CharacterID, req[2] = nfc(cell), i
		case "model_id":
			t.ModelID, req[3] = nfc(cell), i
		case "user_message":
			t.UserMessage = optCell(cell)
		case "reply_text":
			t.ReplyText = optCell(cell)
		case "first_person":
			t.FirstPerson = optCell(cell)
		case "honorific_level":
			t.HonorificLevel = optCell(cell)
		case "named_entities":
			t.NamedEntities = nil
			if e := listCell(raw, i, &t.NamedEntities, wantList); e != nil {
				return persona.Turn{}, e
			}
			if bad := nfcList(t.NamedEntities); bad >= 0 {
				return persona.Turn{}, cellError(raw, i, emptyElement(bad))
			}
		case "user_asked_recall":
			var e *RowError
			if t.UserAskedRecall, e = boolCell(raw, i); e != nil {
				return persona.Turn{}, e
			}
		case "created_at":
			if cell != "" {
				if _, err := persona.ParseCreatedAt(cell); err != nil {
					return persona.Turn{}, cellError(raw, i, fmt.Sprintf("want %s, got %q", wantTime, cell))
				}
				t.CreatedAt = nfc(cell)
			}
		case "prompt_id":
			t.PromptID = nfc(cell)
		}
	}
	for k, f := range [...]struct {
		name string
		v    string
	}{{"turn_id", t.TurnID}, {"session_id", t.SessionID}, {"character_id", t.CharacterID}, {"model_id", t.ModelID}} {
		if e := requiredCSV(raw, f.name, req[k], f.v); e != nil {
			return persona.Turn{}, e
		}
	}
	return t, nil
}

func decodeCardCSV(raw Raw) (persona.Card, *RowError) {
	if e := checkCSV(raw); e != nil {
		return persona.Card{}, e
	}
	c := persona.Card{CanonEntities: []string{}, ForbiddenTopics: []string{}, EntityRoles: []persona.EntityRole{}}
	req := [4]int{-1, -1, -1, -1}
	for i, name := range raw.Header {
		cell := raw.CSV[i]
		switch name {
		case "character_id":
			c.CharacterID, req[0] = nfc(cell), i
		case "name":
			c.Name, req[1] = nfc(cell), i
		case "honorific_rule":
			c.HonorificRule, req[2] = nfc(cell), i
		case "first_person":
			c.FirstPerson, req[3] = nfc(cell), i
		case "canon_entities", "forbidden_topics":
			var list []string
			if e := listCell(raw, i, &list, wantList); e != nil {
				return persona.Card{}, e
			}
			if bad := nfcList(list); bad >= 0 {
				return persona.Card{}, cellError(raw, i, emptyElement(bad))
			}
			if list == nil {
				list = []string{}
			}
			if name == "canon_entities" {
				c.CanonEntities = list
			} else {
				c.ForbiddenTopics = list
			}
		case "entity_roles":
			var js []roleJSON
			if e := listCell(raw, i, &js, wantRoles); e != nil {
				return persona.Card{}, e
			}
			rs, e := roles(js)
			if e != nil {
				return persona.Card{}, cellError(raw, i, e.Reason)
			}
			c.EntityRoles = rs
		case "first_person_forms":
			var list []string
			if e := listCell(raw, i, &list, wantList); e != nil {
				return persona.Card{}, e
			}
			if bad := nfcList(list); bad >= 0 {
				return persona.Card{}, cellError(raw, i, emptyElement(bad))
			}
			c.FirstPersonForms = list // an empty cell or null: nil, as absent
		case "description":
			c.Description = nfc(cell)
		case "public":
			var e *RowError
			if c.Public, e = boolCell(raw, i); e != nil {
				return persona.Card{}, e
			}
		}
	}
	for k, f := range [...]struct {
		name string
		v    string
	}{{"character_id", c.CharacterID}, {"name", c.Name}, {"honorific_rule", c.HonorificRule}, {"first_person", c.FirstPerson}} {
		if e := requiredCSV(raw, f.name, req[k], f.v); e != nil {
			return persona.Card{}, e
		}
	}
	if c.HonorificRule != persona.Banmal && c.HonorificRule != persona.Jondaemal {
		return persona.Card{}, cellError(raw, req[2], fmt.Sprintf("want %s, got %q", wantHonorRul, raw.CSV[req[2]]))
	}
	return c, nil
}

func decodeLexiconCSV(raw Raw) (persona.LexiconRow, *RowError) {
	if e := checkCSV(raw); e != nil {
		return persona.LexiconRow{}, e
	}
	var l persona.LexiconRow
	req := [2]int{-1, -1}
	for i, name := range raw.Header {
		switch name {
		case "term":
			l.Term, req[0] = nfc(raw.CSV[i]), i
		case "topic":
			l.Topic, req[1] = nfc(raw.CSV[i]), i
		}
	}
	if e := requiredCSV(raw, "term", req[0], l.Term); e != nil {
		return persona.LexiconRow{}, e
	}
	if e := requiredCSV(raw, "topic", req[1], l.Topic); e != nil {
		return persona.LexiconRow{}, e
	}
	return l, nil
}
