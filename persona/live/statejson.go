package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"evident/persona"
)

// A State's stored form is this JSON (AppendJSON writes it, UnmarshalJSON
// reads it back; strings are quoted as json.Marshal quotes them: HTML
// escaped, invalid UTF-8 as U+FFFD):
//
//	{"turns":N[,"untimed":true][,"latest":{"turn_id":S,"created_at":S}]
//	 [,"mentions":{ENTITY:{"by_arrival":SEQ,"by_time":SEQ},…}]
//	 [,"cited":[{"seq":SEQ,"turn_id":S,"reply_text":S|null[,"created_at":S]},…]]}
//
// mentions in the byte order of their entities, cited turns in seq order, so
// one state has one form. Each mention refers to cited turns by seq; each
// cited turn appears once, however many mentions refer to it.

// AppendJSON appends s's stored form to b and returns the extended slice;
// Bytes is its length. A nil s appends null, as json.Marshal does. It costs
// time linear in the state (plus sorting its entities): a store that writes
// what a step changed (Change) needs it only to hand the whole state over.
func (s *State) AppendJSON(b []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, jsonTurns...)
	b = strconv.AppendInt(b, int64(s.turns), 10)
	if s.untimed {
		b = append(b, jsonUntimed...)
	}
	if s.latest != nil {
		b = append(b, jsonLatest...)
		b = appendMarshalString(b, s.latest.TurnID)
		b = append(b, jsonCreatedAt...)
		b = appendMarshalString(b, s.latest.CreatedAt)
		b = append(b, '}')
	}
	if len(s.mentions) > 0 {
		b = append(b, jsonMentions...)
		keys := make([]string, 0, len(s.mentions))
		for k := range s.mentions {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the byte order of the entities
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			f := s.mentions[k]
			b = appendMarshalString(b, k)
			b = append(b, jsonByArrival...)
			b = strconv.AppendInt(b, int64(f.ByArrival), 10)
			b = append(b, jsonByTime...)
			b = strconv.AppendInt(b, int64(f.ByTime), 10)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if len(s.cited) > 0 {
		b = append(b, jsonCited...)
		seqs := make([]int, 0, len(s.cited))
		for seq := range s.cited {
			seqs = append(seqs, seq)
		}
		slices.Sort(seqs)
		for i, seq := range seqs {
			if i > 0 {
				b = append(b, ',')
			}
			c := s.cited[seq]
			b = append(b, jsonSeq...)
			b = strconv.AppendInt(b, int64(c.Seq), 10)
			b = append(b, jsonTurnID...)
			b = appendMarshalString(b, c.TurnID)
			b = append(b, jsonReplyText...)
			b = appendOptMarshalString(b, c.ReplyText)
			if c.CreatedAt != "" {
				b = append(b, jsonCreatedAt...)
				b = appendMarshalString(b, c.CreatedAt)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// The constant parts of the stored form, shared by AppendJSON and the byte
// counts below (which must agree: TestBytesIsTheLengthOfAppendJSON).
const (
	jsonTurns     = `{"turns":`
	jsonUntimed   = `,"untimed":true`
	jsonLatest    = `,"latest":{"turn_id":`
	jsonCreatedAt = `,"created_at":`
	jsonMentions  = `,"mentions":{`
	jsonByArrival = `:{"by_arrival":`
	jsonByTime    = `,"by_time":`
	jsonCited     = `,"cited":[`
	jsonSeq       = `{"seq":`
	jsonTurnID    = `,"turn_id":`
	jsonReplyText = `,"reply_text":`
)

// stateBytes is the stored form's length for a state of turns turns,
// untimed or not, whose latest stamp takes lb bytes, with nm mentions of mb
// bytes and nc cited turns of cb bytes (entries without their commas).
func stateBytes(turns int, untimed bool, lb, nm, mb, nc, cb int) int {
	n := len(jsonTurns) + digits(turns) + lb + 1
	if untimed {
		n += len(jsonUntimed)
	}
	if nm > 0 {
		n += len(jsonMentions) + mb + nm - 1 + 1
	}
	if nc > 0 {
		n += len(jsonCited) + cb + nc - 1 + 1
	}
	return n
}

// latestBytes is the length of the latest stamp's part of the stored form.
func latestBytes(turnID, createdAt string) int {
	return len(jsonLatest) + quotedLen(turnID) + len(jsonCreatedAt) + quotedLen(createdAt) + 1
}

// mentionEntryBytes is the length of a mention's entry whose entity quotes
// to keyLen bytes.
func mentionEntryBytes(keyLen, byArrival, byTime int) int {
	return keyLen + len(jsonByArrival) + digits(byArrival) + len(jsonByTime) + digits(byTime) + 1
}

// citedEntryBytes is the length of a cited turn's entry.
func citedEntryBytes(seq int, turnID string, reply *string, createdAt string) int {
	n := len(jsonSeq) + digits(seq) + len(jsonTurnID) + quotedLen(turnID) + len(jsonReplyText) + 1
	if reply == nil {
		n += len("null")
	} else {
		n += quotedLen(*reply)
	}
	if createdAt != "" {
		n += len(jsonCreatedAt) + quotedLen(createdAt)
	}
	return n
}

// digits is the length of n in decimal.
func digits(n int) int {
	d := 1
	if n < 0 {
		d, n = 2, -n
	}
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// quotedLen is len(appendMarshalString(nil, s)), without writing it.
func quotedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// MarshalJSON returns s's stored form (AppendJSON).
func (s State) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// UnmarshalJSON reads a stored form into s, replacing what s held: this
// version's (AppendJSON), or the earlier one, in which each mention held
// its turn's turn_id, reply_text, seq and created_at ({"by_arrival":
// {"turn_id":…,"reply_text":…,"seq":N,…},…}) — its copies of one turn
// become one cited turn. The error names what is inconsistent (a mention
// referring to no cited turn, a seq past turns). JSON null leaves s as it
// was. Memory: the decoded state, plus the input's copies while an earlier
// form is read.
func (s *State) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var in stateIn
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	r := Restore(Header{Turns: in.Turns, Untimed: in.Untimed, Latest: in.Latest})
	for _, c := range in.Cited {
		r.Cite(c)
	}
	// An earlier form's turns, once each (every copy of a seq is the same
	// turn), in no particular order: Restorer needs none.
	var old map[int]bool
	for _, f := range in.Mentions {
		for _, ref := range []*refIn{&f.ByArrival, &f.ByTime} {
			if ref.old == nil || old[ref.seq] {
				continue
			}
			if old == nil {
				old = map[int]bool{}
			}
			old[ref.seq] = true
			r.Cite(Cited{Seq: ref.seq, TurnID: ref.old.TurnID, ReplyText: ref.old.ReplyText, CreatedAt: ref.old.CreatedAt})
		}
	}
	for e, f := range in.Mentions {
		if f != nil {
			r.Mention(e, Firsts{ByArrival: f.ByArrival.seq, ByTime: f.ByTime.seq})
		}
	}
	st, err := r.State()
	if err != nil {
		return err
	}
	*s = *st
	return nil
}

// stateIn is the stored form as decoded (either version).
type stateIn struct {
	Turns    int                  `json:"turns"`
	Untimed  bool                 `json:"untimed"`
	Latest   *Stamp               `json:"latest"`
	Mentions map[string]*firstsIn `json:"mentions"`
	Cited    []Cited              `json:"cited"`
}

type firstsIn struct {
	ByArrival refIn `json:"by_arrival"`
	ByTime    refIn `json:"by_time"`
}

// refIn is a mention's reference: a seq, or an earlier form's turn.
type refIn struct {
	seq int
	old *oldMention
}

// oldMention is a mention of the earlier stored form.
type oldMention struct {
	TurnID    string  `json:"turn_id"`
	ReplyText *string `json:"reply_text"`
	Seq       int     `json:"seq"`
	CreatedAt string  `json:"created_at"`
}

func (r *refIn) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		r.old = new(oldMention)
		if err := json.Unmarshal(b, r.old); err != nil {
			return err
		}
		r.seq = r.old.Seq
		return nil
	}
	if err := json.Unmarshal(b, &r.seq); err != nil {
		return fmt.Errorf("live state: a mention's seq: %w", err)
	}
	return nil
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
