package ingest

import (
	"time"
	"unicode/utf8"

	"evident/persona"
)

// fastTurn decodes a chat_turn JSON row in one pass, without reflection and
// with about four allocations: the row is copied into one string and the
// unescaped values are substrings of it.
//
// It is only a fast path. ok is false whenever the row holds anything it does
// not handle exactly as encoding/json does, or anything wrong: a syntax
// error, a key with an escape or one that could match a column only by case
// folding, a column given twice, a type that is not the plain one, an
// escaped lone surrogate, nesting deeper than 64, an empty required column,
// an empty list element or a bad created_at. decodeTurnJSON then decodes the
// row with encoding/json, which is the reference and writes the error; the
// differential fuzz test FuzzDecodeTurnFastPath holds the two to the same
// result. data must be valid UTF-8.
func fastTurn(data []byte) (t persona.Turn, ok bool) {
	p := fastParser{s: string(data)}
	p.ws()
	if !p.eat('{') {
		return t, false
	}
	var seen uint16
	var texts *[4]string
	var createdAt string
	hasCreatedAt := false
	p.ws()
	if p.eat('}') {
		return t, false // no required columns
	}
	for {
		if p.peek() != '"' {
			return t, false
		}
		key, ok := p.rawKey()
		if !ok {
			return t, false
		}
		p.ws()
		if !p.eat(':') {
			return t, false
		}
		p.ws()
		f := turnFieldOf(key)
		if f >= 0 {
			if seen&(1<<f) != 0 {
				return t, false
			}
			seen |= 1 << f
		}
		switch f {
		case fTurnID, fSessionID, fCharacterID, fModelID:
			v, ok := p.str()
			if !ok || v == "" {
				return t, false
			}
			v = nfc(v)
			switch f {
			case fTurnID:
				t.TurnID = v
			case fSessionID:
				t.SessionID = v
			case fCharacterID:
				t.CharacterID = v
			default:
				t.ModelID = v
			}
		case fUserMessage, fReplyText, fFirstPerson, fHonorificLevel:
			if p.lit("null") {
				break
			}
			v, ok := p.str()
			if !ok {
				return t, false
			}
			if texts == nil {
				texts = new([4]string)
			}
			k := f - fUserMessage
			texts[k] = nfc(v)
			switch f {
			case fUserMessage:
				t.UserMessage = &texts[k]
			case fReplyText:
				t.ReplyText = &texts[k]
			case fFirstPerson:
				t.FirstPerson = &texts[k]
			default:
				t.HonorificLevel = &texts[k]
			}
		case fNamedEntities:
			if p.lit("null") {
				break
			}
			list, ok := p.strList()
			if !ok {
				return t, false
			}
			t.NamedEntities = list
		case fUserAskedRecall:
			switch {
			case p.lit("true"):
				t.UserAskedRecall = true
			case p.lit("false"):
			default:
				return t, false
			}
		case fCreatedAt:
			if p.lit("null") {
				break
			}
			v, ok := p.str()
			if !ok {
				return t, false
			}
			createdAt, hasCreatedAt = v, true
		case fPromptID:
			if p.lit("null") {
				break
			}
			v, ok := p.str()
			if !ok {
				return t, false
			}
			t.PromptID = nfc(v)
		default:
			if !plainKey(key) || !p.skip(0) {
				return t, false
			}
		}
		p.ws()
		if p.eat(',') {
			p.ws()
			continue
		}
		if !p.eat('}') {
			return t, false
		}
		break
	}
	p.ws()
	if p.i != len(p.s) || t.TurnID == "" || t.SessionID == "" || t.CharacterID == "" || t.ModelID == "" {
		return t, false
	}
	if hasCreatedAt {
		if _, err := time.Parse(time.RFC3339Nano, createdAt); err != nil {
			return t, false
		}
		t.CreatedAt = nfc(createdAt)
	}
	return t, true
}

// Columns of chat_turn, as bit numbers for fastTurn.
const (
	fTurnID = iota
	fSessionID
	fCharacterID
	fModelID
	fUserMessage // the four nullable texts are consecutive
	fReplyText
	fFirstPerson
	fHonorificLevel
	fNamedEntities
	fUserAskedRecall
	fCreatedAt
	fPromptID
)

func turnFieldOf(key string) int {
	switch key {
	case "turn_id":
		return fTurnID
	case "session_id":
		return fSessionID
	case "character_id":
		return fCharacterID
	case "model_id":
		return fModelID
	case "user_message":
		return fUserMessage
	case "reply_text":
		return fReplyText
	case "first_person":
		return fFirstPerson
	case "honorific_level":
		return fHonorificLevel
	case "named_entities":
		return fNamedEntities
	case "user_asked_recall":
		return fUserAskedRecall
	case "created_at":
		return fCreatedAt
	case "prompt_id":
		return fPromptID
	}
	return -1
}

// plainKey reports whether an unknown key surely matches no column under
// encoding/json's case-insensitive matching: it holds no upper-case ASCII
// letter and no non-ASCII byte (the column names are lower-case ASCII).
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// fastParser is a strict JSON reader over one row; every method returns
// false (or leaves i unchanged) on anything unexpected.
type fastParser struct {
	s string
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// lit consumes the literal word (true, false, null) if it comes next.
func (p *fastParser) lit(word string) bool {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return true
	}
	return false
}

// rawKey reads an object key that has no escapes.
func (p *fastParser) rawKey() (string, bool) {
	p.i++ // '"'
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// str reads a JSON string value.
func (p *fastParser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], true
		case c == '\\':
			return p.unescape(start)
		case c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// unescape finishes a string whose first escape is at p.i.
func (p *fastParser) unescape(start int) (string, bool) {
	b := make([]byte, 0, p.i-start+16)
	b = append(b, p.s[start:p.i]...)
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", false
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
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
			r, ok := p.hex4()
			if !ok {
				return "", false
			}
			if r >= 0xD800 && r < 0xE000 {
				// Only a high surrogate followed by an escaped low one; a lone
				// surrogate goes to encoding/json (it writes U+FFFD).
				if r >= 0xDC00 || !p.lit(`\u`) {
					return "", false
				}
				r2, ok := p.hex4()
				if !ok || r2 < 0xDC00 || r2 >= 0xE000 {
					return "", false
				}
				r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (p *fastParser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

// strList reads an array of non-empty strings; [] gives a non-nil empty
// slice.
func (p *fastParser) strList() ([]string, bool) {
	if !p.eat('[') {
		return nil, false
	}
	list := make([]string, 0, 4)
	p.ws()
	if p.eat(']') {
		return list, true
	}
	for {
		v, ok := p.str()
		if !ok || v == "" {
			return nil, false
		}
		list = append(list, nfc(v))
		p.ws()
		if p.eat(']') {
			return list, true
		}
		if !p.eat(',') {
			return nil, false
		}
		p.ws()
	}
}

// skip consumes one JSON value of any kind, checking its syntax.
func (p *fastParser) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch c := p.peek(); {
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '{':
		p.i++
		p.ws()
		if p.eat('}') {
			return true
		}
		for {
			if _, ok := p.str(); !ok {
				return false
			}
			p.ws()
			if !p.eat(':') {
				return false
			}
			p.ws()
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			if p.eat('}') {
				return true
			}
			if !p.eat(',') {
				return false
			}
			p.ws()
		}
	case c == '[':
		p.i++
		p.ws()
		if p.eat(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			if p.eat(']') {
				return true
			}
			if !p.eat(',') {
				return false
			}
			p.ws()
		}
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return false
}

// number consumes a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *fastParser) number() bool {
	p.eat('-')
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return false
	}
	if p.eat('.') {
		if !p.digits() {
			return false
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if !p.digits() {
			return false
		}
	}
	return true
}

// digits consumes one or more digits.
func (p *fastParser) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}
