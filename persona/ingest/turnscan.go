package ingest

import (
	"strings"
	"unicode/utf8"
)

// scanTurn is the chat_turn JSON fast path (issue 18): one pass over the row
// that both validates it and decodes the twelve columns into j, where the
// old path ran three (utf8.Valid, encoding/json's checkValid, json-iterator's
// decode) and allocated every string on its own.
//
// It accepts a row only when the result is certainly what checkJSON plus
// encoding/json.Unmarshal would give: the row is valid UTF-8, one JSON
// object with nothing but white space around it, every known column has its
// Go type (a string or null, an array of strings and nulls or null, a
// boolean or null), no known column is given twice, and no other key equals
// a column name ignoring case (encoding/json would match it). Anything else
// (a syntax error, a wrong type, a key that needs encoding/json's case
// folding or holds an escape, a \u escape of a surrogate, nesting deeper
// than encoding/json allows) returns false, and the caller decodes the row
// with encoding/json, which also words the error; so a bad row's message is
// exactly as before, and the fast path never has to produce one.
//
// The row is copied into one string, and every column value without escapes
// is a substring of it: one allocation per row for all its text, instead of
// one per cell. The optional text columns point into one shared [6]string.
// FuzzScanTurn holds scanTurn to encoding/json on arbitrary rows.
func scanTurn(data []byte, j *turnJSON) bool {
	p := turnScanner{s: string(data)}
	p.ws()
	if !p.byte('{') {
		return false
	}
	var seen uint16
	var opt *[6]string
	p.ws()
	if p.byte('}') {
		return p.end()
	}
	for {
		p.ws()
		key, esc, ok := p.str()
		if !ok || esc {
			return false
		}
		p.ws()
		if !p.byte(':') {
			return false
		}
		p.ws()
		col := turnColumn(key)
		if col < 0 {
			if foldsToColumn(key) {
				return false
			}
			if !p.value(0) {
				return false
			}
		} else {
			if seen&(1<<col) != 0 {
				return false // encoding/json: the last wins; rare, left to it
			}
			seen |= 1 << col
			if !p.column(col, j, &opt) {
				return false
			}
		}
		p.ws()
		if p.byte(',') {
			continue
		}
		if p.byte('}') {
			return p.end()
		}
		return false
	}
}

// The chat_turn columns in turnJSON, as scanTurn numbers them.
const (
	colTurnID = iota
	colSessionID
	colCharacterID
	colModelID
	colUserMessage
	colReplyText
	colFirstPerson
	colHonorificLevel
	colCreatedAt
	colPromptID
	colNamedEntities
	colUserAskedRecall
)

var turnColumnNames = [...]string{"turn_id", "session_id", "character_id", "model_id", "user_message",
	"reply_text", "first_person", "honorific_level", "created_at", "prompt_id", "named_entities", "user_asked_recall"}

// turnColumn returns the column numbered as above whose name is exactly key,
// or -1.
func turnColumn(key string) int {
	switch key {
	case "turn_id":
		return colTurnID
	case "session_id":
		return colSessionID
	case "character_id":
		return colCharacterID
	case "model_id":
		return colModelID
	case "user_message":
		return colUserMessage
	case "reply_text":
		return colReplyText
	case "first_person":
		return colFirstPerson
	case "honorific_level":
		return colHonorificLevel
	case "created_at":
		return colCreatedAt
	case "prompt_id":
		return colPromptID
	case "named_entities":
		return colNamedEntities
	case "user_asked_recall":
		return colUserAskedRecall
	}
	return -1
}

// foldsToColumn reports whether encoding/json might match key to a column
// by its case-insensitive rule: key equals a name ignoring ASCII case, or
// key has a non-ASCII byte (Unicode folding maps the Kelvin sign to k and ſ
// to s). Such rows go to encoding/json.
func foldsToColumn(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return true
		}
	}
	for _, name := range turnColumnNames {
		if len(key) == len(name) && strings.EqualFold(key, name) {
			return true
		}
	}
	return false
}

// column decodes the value of column col into j as encoding/json would;
// false when the value's type is not the column's (or the value is bad).
func (p *turnScanner) column(col int, j *turnJSON, opt **[6]string) bool {
	switch col {
	case colTurnID, colSessionID, colCharacterID, colModelID:
		if p.null() {
			return true // encoding/json: null into a string is a no-op
		}
		v, _, ok := p.str()
		if !ok {
			return false
		}
		switch col {
		case colTurnID:
			j.TurnID = v
		case colSessionID:
			j.SessionID = v
		case colCharacterID:
			j.CharacterID = v
		case colModelID:
			j.ModelID = v
		}
		return true
	case colUserMessage, colReplyText, colFirstPerson, colHonorificLevel, colCreatedAt, colPromptID:
		var dst **string
		switch col {
		case colUserMessage:
			dst = &j.UserMessage
		case colReplyText:
			dst = &j.ReplyText
		case colFirstPerson:
			dst = &j.FirstPerson
		case colHonorificLevel:
			dst = &j.HonorificLevel
		case colCreatedAt:
			dst = &j.CreatedAt
		default:
			dst = &j.PromptID
		}
		if p.null() {
			*dst = nil
			return true
		}
		v, _, ok := p.str()
		if !ok {
			return false
		}
		if *opt == nil {
			*opt = new([6]string) // one allocation for the row's optional cells
		}
		k := col - colUserMessage
		(*opt)[k] = v
		*dst = &(*opt)[k]
		return true
	case colNamedEntities:
		if p.null() {
			j.NamedEntities = nil
			return true
		}
		if !p.byte('[') {
			return false
		}
		list := []string{} // [] decodes as a non-nil empty slice
		p.ws()
		if p.byte(']') {
			j.NamedEntities = list
			return true
		}
		for {
			p.ws()
			if p.null() {
				list = append(list, "") // null element: the zero string, as encoding/json
			} else {
				v, _, ok := p.str()
				if !ok {
					return false
				}
				list = append(list, v)
			}
			p.ws()
			if p.byte(',') {
				continue
			}
			if p.byte(']') {
				j.NamedEntities = list
				return true
			}
			return false
		}
	case colUserAskedRecall:
		switch {
		case p.literal("true"):
			j.UserAskedRecall = boolTrue
		case p.literal("false"):
			j.UserAskedRecall = boolFalse
		case p.null():
			j.UserAskedRecall = boolNull
		default:
			return false // another type: encoding/json's path words the error
		}
		return true
	}
	return false
}

// turnScanner reads JSON from s at i. Every method leaves i past what it
// read; on false the scan is abandoned, so i does not matter.
type turnScanner struct {
	s string
	i int
}

func (p *turnScanner) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// end reports whether only white space is left.
func (p *turnScanner) end() bool {
	p.ws()
	return p.i == len(p.s)
}

func (p *turnScanner) byte(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *turnScanner) literal(lit string) bool {
	if strings.HasPrefix(p.s[p.i:], lit) {
		p.i += len(lit)
		return true
	}
	return false
}

func (p *turnScanner) null() bool { return p.literal("null") }

// maxDepth is encoding/json's nesting limit; deeper rows go to it.
const maxDepth = 10000

// value skips one valid JSON value of any type.
func (p *turnScanner) value(depth int) bool {
	if p.i >= len(p.s) || depth >= maxDepth {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		_, _, ok := p.str()
		return ok
	case c == '{':
		p.i++
		p.ws()
		if p.byte('}') {
			return true
		}
		for {
			p.ws()
			if _, _, ok := p.str(); !ok {
				return false
			}
			p.ws()
			if !p.byte(':') {
				return false
			}
			p.ws()
			if !p.value(depth + 1) {
				return false
			}
			p.ws()
			if p.byte(',') {
				continue
			}
			return p.byte('}')
		}
	case c == '[':
		p.i++
		p.ws()
		if p.byte(']') {
			return true
		}
		for {
			p.ws()
			if !p.value(depth + 1) {
				return false
			}
			p.ws()
			if p.byte(',') {
				continue
			}
			return p.byte(']')
		}
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.null()
	}
	return false
}

// number skips a JSON number (RFC 8259 grammar).
func (p *turnScanner) number() bool {
	s, i := p.s, p.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	p.i = i
	return true
}

// str reads a JSON string at i and returns its value (a substring of s when
// it has no escape; esc reports an escape). It checks what encoding/json and
// checkJSON check: no control character, valid escapes, valid UTF-8. A \u
// escape of a surrogate half is left to encoding/json (it pairs or replaces
// them).
func (p *turnScanner) str() (v string, esc bool, ok bool) {
	s := p.s
	if p.i >= len(s) || s[p.i] != '"' {
		return "", false, false
	}
	start := p.i + 1
	i := start
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return s[start:i], false, true
		case c == '\\':
			return p.escaped(start, i)
		case c < 0x20:
			return "", false, false
		case c < utf8.RuneSelf:
			i++
		default:
			n := utf8Len(s, i)
			if n == 0 {
				return "", false, false
			}
			i += n
		}
	}
	return "", false, false
}

// utf8Len returns the length of the valid UTF-8 sequence at s[i] (a
// non-ASCII byte), or 0. Precomposed Hangul syllables (U+AC00–U+D7A3, three
// bytes starting 0xEA–0xED), nearly every non-ASCII character of a Korean
// log, are checked inline.
func utf8Len(s string, i int) int {
	if c := s[i]; c >= 0xEA && c <= 0xED && i+2 < len(s) && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 {
		if r := rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F); r >= 0xAC00 && r <= 0xD7A3 {
			return 3
		}
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n == 1 {
		return 0
	}
	return n
}

// escaped finishes a string from s[start:] whose first escape is at i.
func (p *turnScanner) escaped(start, i int) (string, bool, bool) {
	s := p.s
	b := make([]byte, 0, i-start+16)
	b = append(b, s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(b), true, true
		case c == '\\':
			if i+1 >= len(s) {
				return "", true, false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok || r >= 0xD800 && r < 0xE000 {
					return "", true, false
				}
				b = utf8.AppendRune(b, r)
				i += 4
			default:
				return "", true, false
			}
			i += 2
		case c < 0x20:
			return "", true, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			n := utf8Len(s, i)
			if n == 0 {
				return "", true, false
			}
			b = append(b, s[i:i+n]...)
			i += n
		}
	}
	return "", true, false
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
