package live

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"evident/persona"
)

// AppendJSON appends s's stored form — exactly the bytes json.Marshal(s)
// gives (map keys sorted, HTML-escaped strings, invalid UTF-8 as U+FFFD;
// TestAppendJSONIsJSONMarshal and FuzzAppendJSON hold it to that) — to b and
// returns the extended slice. It is State's JSON form written by hand: the
// live API stores a session's state once per request or group, and
// encoding/json's reflection cost several times more than the step itself.
// A nil s appends null, as json.Marshal does.
func (s *State) AppendJSON(b []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"turns":`...)
	b = strconv.AppendInt(b, int64(s.Turns), 10)
	if s.Untimed {
		b = append(b, `,"untimed":true`...)
	}
	if s.Latest != nil {
		b = append(b, `,"latest":{"turn_id":`...)
		b = appendMarshalString(b, s.Latest.TurnID)
		b = append(b, `,"created_at":`...)
		b = appendMarshalString(b, s.Latest.CreatedAt)
		b = append(b, '}')
	}
	if len(s.Mentions) > 0 {
		b = append(b, `,"mentions":{`...)
		keys := make([]string, 0, len(s.Mentions))
		for k := range s.Mentions {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json sorts map keys by their bytes
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMarshalString(b, k)
			b = append(b, ':')
			f := s.Mentions[k]
			if f == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, `{"by_arrival":`...)
			b = f.ByArrival.appendJSON(b)
			b = append(b, `,"by_time":`...)
			b = f.ByTime.appendJSON(b)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func (m *Mention) appendJSON(b []byte) []byte {
	b = append(b, `{"turn_id":`...)
	b = appendMarshalString(b, m.TurnID)
	b = append(b, `,"reply_text":`...)
	b = appendOptMarshalString(b, m.ReplyText)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(m.Seq), 10)
	if m.CreatedAt != "" {
		b = append(b, `,"created_at":`...)
		b = appendMarshalString(b, m.CreatedAt)
	}
	return append(b, '}')
}

// appendTurnJSON appends json.Marshal(t)'s bytes to b (Digest's input).
func appendTurnJSON(b []byte, t *persona.Turn) []byte {
	b = append(b, `{"turn_id":`...)
	b = appendMarshalString(b, t.TurnID)
	b = append(b, `,"session_id":`...)
	b = appendMarshalString(b, t.SessionID)
	b = append(b, `,"character_id":`...)
	b = appendMarshalString(b, t.CharacterID)
	b = append(b, `,"model_id":`...)
	b = appendMarshalString(b, t.ModelID)
	b = append(b, `,"user_message":`...)
	b = appendOptMarshalString(b, t.UserMessage)
	b = append(b, `,"reply_text":`...)
	b = appendOptMarshalString(b, t.ReplyText)
	b = append(b, `,"first_person":`...)
	b = appendOptMarshalString(b, t.FirstPerson)
	b = append(b, `,"named_entities":`...)
	if t.NamedEntities == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range t.NamedEntities {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMarshalString(b, e)
		}
		b = append(b, ']')
	}
	b = append(b, `,"honorific_level":`...)
	b = appendOptMarshalString(b, t.HonorificLevel)
	b = append(b, `,"user_asked_recall":`...)
	b = strconv.AppendBool(b, t.UserAskedRecall)
	if t.CreatedAt != "" {
		b = append(b, `,"created_at":`...)
		b = appendMarshalString(b, t.CreatedAt)
	}
	if t.PromptID != "" {
		b = append(b, `,"prompt_id":`...)
		b = appendMarshalString(b, t.PromptID)
	}
	return append(b, '}')
}

func appendOptMarshalString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendMarshalString(b, *s)
}

const hexDigits = "0123456789abcdef"

// appendMarshalString quotes s the way json.Marshal does (HTML escaping on):
// '"' and '\\' get a backslash; \b \f \n \r \t their short escapes; other
// bytes below 0x20 and '<', '>', '&' are \u00XX; U+2028 and U+2029 are
// \u2028 and \u2029; each byte of invalid UTF-8 becomes \ufffd; every other
// character is copied.
func appendMarshalString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
