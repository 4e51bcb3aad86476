package persona

import (
	"strconv"
	"unicode/utf8"
)

// AppendRecord appends rec as one JSON Lines record of the output (spec
// persona.md "Output"; with its '\n') to b and returns the extended slice, in
// exactly the bytes persona/batch has always written (json-iterator:
// encoding/json's bytes with SetEscapeHTML(false), except that U+2028 and
// U+2029 stay unescaped; persona/batch's TestRecordBytes), so every writer of
// records (the batch output, the store, the live API, the Kafka consumer)
// writes the same bytes. ok is false, and b is returned unchanged, when an
// evidence value has a type the judge never writes or a string is not valid
// UTF-8 (never from the rules, whose readers check every cell): the caller
// then falls back to a reflection encoder, which replaces such bytes.
//
// Why: a reflection encoder reaches each field through an interface call
// per field and per evidence value, about 11 % of a batch run's CPU (issue
// 18); appending straight into a reused buffer costs a fraction of that
// (persona/batch's BenchmarkEncodeRecord) and allocates nothing.
func AppendRecord(b []byte, rec *Record) ([]byte, bool) {
	if !validRecordText(rec) {
		return b, false
	}
	start := len(b)
	b = append(b, `{"turn_id":`...)
	b = appendJSONString(b, rec.TurnID)
	b = append(b, `,"session_id":`...)
	b = appendJSONString(b, rec.SessionID)
	b = append(b, `,"character_id":`...)
	b = appendJSONString(b, rec.CharacterID)
	b = append(b, `,"model_id":`...)
	b = appendJSONString(b, rec.ModelID)
	b = append(b, `,"verdict":`...)
	b = appendJSONString(b, string(rec.Verdict))
	b = append(b, `,"rule_expected":`...)
	b = appendOptJSONString(b, rec.RuleExpected)
	b = append(b, `,"rule_observed":`...)
	b = appendOptJSONString(b, rec.RuleObserved)
	b = append(b, `,"off_canon_entities":`...)
	b = appendJSONStrings(b, rec.OffCanonEntities)
	b = append(b, `,"touched_term":`...)
	b = appendOptJSONString(b, rec.TouchedTerm)
	b = append(b, `,"touched_topic":`...)
	b = appendOptJSONString(b, rec.TouchedTopic)
	b = append(b, `,"recall_target":`...)
	b = appendOptJSONString(b, rec.RecallTarget)
	b = append(b, `,"recall_source_turn":`...)
	b = appendOptJSONString(b, rec.RecallSourceTurn)
	b = append(b, `,"evidence":`...)
	if rec.Evidence == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range rec.Evidence {
			if i > 0 {
				b = append(b, ',')
			}
			e := &rec.Evidence[i]
			b = append(b, `{"source":`...)
			b = appendJSONString(b, string(e.Source))
			b = append(b, `,"field":`...)
			b = appendJSONString(b, e.Field)
			if e.Agg != "" { // omitempty
				b = append(b, `,"agg":`...)
				b = appendJSONString(b, string(e.Agg))
			}
			b = append(b, `,"value":`...)
			var ok bool
			if b, ok = appendEvidenceValue(b, e.Value); !ok {
				return b[:start], false
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"summary":`...)
	b = appendJSONString(b, rec.Summary)
	b = append(b, `,"hedge":`...)
	b = appendOptJSONString(b, rec.Hedge)
	return append(b, "}\n"...), true
}

// validRecordText reports whether every string AppendRecord copies into its
// output is valid UTF-8 (appendJSONString copies bytes as they are).
func validRecordText(rec *Record) bool {
	for _, s := range [...]string{rec.TurnID, rec.SessionID, rec.CharacterID, rec.ModelID, string(rec.Verdict), rec.Summary} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	for _, p := range [...]*string{rec.RuleExpected, rec.RuleObserved, rec.TouchedTerm, rec.TouchedTopic, rec.RecallTarget, rec.RecallSourceTurn, rec.Hedge} {
		if p != nil && !utf8.ValidString(*p) {
			return false
		}
	}
	for _, s := range rec.OffCanonEntities {
		if !utf8.ValidString(s) {
			return false
		}
	}
	for i := range rec.Evidence {
		e := &rec.Evidence[i]
		if !utf8.ValidString(string(e.Source)) || !utf8.ValidString(e.Field) || !utf8.ValidString(string(e.Agg)) {
			return false
		}
		switch v := e.Value.(type) {
		case string:
			if !utf8.ValidString(v) {
				return false
			}
		case *string:
			if v != nil && !utf8.ValidString(*v) {
				return false
			}
		}
	}
	return true
}

// appendEvidenceValue writes the evidence value types the judge uses
// (Evidence: a string, a bool, nil, an int; a *string for callers
// that cite a cell by pointer).
func appendEvidenceValue(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, v), true
	case *string:
		return appendOptJSONString(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	}
	return b, false
}

func appendOptJSONString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

func appendJSONStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

const lowerHex = "0123456789abcdef"

// appendJSONString quotes s as json-iterator's Stream.WriteString does
// without HTML escaping: '"' and '\\' get a backslash, \n \r \t their short
// escapes, any other byte below 0x20 \u00XX; every other byte, non-ASCII
// included, is copied (the judge's strings are valid UTF-8: the readers
// check every cell; AppendRecord checks first).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
