package crystal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// InsufficientInformation is the answer given to an unparseable reply (spec
// crystal.md "Prompt and parsing").
const InsufficientInformation = "insufficient information"

// Reply is a model's answer read by ParseReply: the seed's JSON object
// {"reasoning_steps": [...], "answer": "..."} (seed 002 system prompt).
type Reply struct {
	// Steps are the predicted reasoning steps in the model's order. Never nil.
	Steps []string `json:"reasoning_steps"`
	// Answer is the final answer text ("" when the object had none).
	Answer string `json:"answer"`
	// Unparseable is set when no JSON object could be read even after repair;
	// Steps is then empty and Answer is InsufficientInformation.
	Unparseable bool `json:"unparseable,omitempty"`
	// Repaired is set when the object was read only after the repair pass
	// (fences stripped, outer braces cut, control characters and trailing
	// commas dropped).
	Repaired bool `json:"repaired,omitempty"`
	// Notes lists every coercion applied, one short line each (evidence).
	Notes []string `json:"notes,omitempty"`
}

// ParseReply reads a model's raw reply. It never fails and never panics:
//
//  1. the reply is parsed as a JSON object as is;
//  2. else it is repaired — code-fence markers (```json, ```) removed, the
//     text cut from the first '{' to the last '}', control characters
//     dropped, trailing commas before '}' or ']' dropped — and parsed again
//     (Repaired = true);
//  3. else the reply is unparseable: no steps, answer InsufficientInformation,
//     Unparseable = true.
//
// Coercions (spec crystal.md "Prompt and parsing": non-string steps become
// strings; the rest are this package's decisions, see doc.go): a step that is
// a number, boolean, object or array becomes its compact JSON text; a null
// step is dropped; a reasoning_steps that is a single string becomes one step
// (none if empty); an answer that is a number/boolean/object becomes its JSON
// text, an array its elements joined by ", ", null or absent gives "". Keys are
// matched exactly (case-sensitive), as Python's dict lookup does. Strings are
// returned as valid UTF-8 (invalid bytes become U+FFFD); text is not trimmed.
func ParseReply(reply string) Reply {
	if r, ok := decodeReply([]byte(reply)); ok {
		return r
	}
	if fixed, ok := repairJSON(reply); ok {
		if r, ok := decodeReply([]byte(fixed)); ok {
			r.Repaired = true
			return r
		}
	}
	return Reply{Steps: []string{}, Answer: InsufficientInformation, Unparseable: true,
		Notes: []string{"no JSON object could be read"}}
}

// decodeReply parses data as one JSON object and coerces its two fields.
func decodeReply(data []byte) (Reply, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return Reply{}, false
	}
	r := Reply{Steps: []string{}}
	raw, ok := obj["reasoning_steps"]
	switch {
	case !ok:
		r.Notes = append(r.Notes, "reasoning_steps missing: no steps")
	case isNull(raw):
		r.Notes = append(r.Notes, "reasoning_steps null: no steps")
	case raw[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return Reply{}, false // cannot happen for valid JSON; be safe
		}
		for k, e := range elems {
			if isNull(e) {
				r.Notes = append(r.Notes, fmt.Sprintf("step %d null: dropped", k))
				continue
			}
			s, coerced := jsonText(e)
			if coerced {
				r.Notes = append(r.Notes, fmt.Sprintf("step %d not a string: became %q", k, s))
			}
			r.Steps = append(r.Steps, s)
		}
	default:
		s, coerced := jsonText(raw)
		if coerced {
			r.Notes = append(r.Notes, "reasoning_steps not a list or string: became one step")
		} else {
			r.Notes = append(r.Notes, "reasoning_steps a string: became one step")
		}
		if s != "" {
			r.Steps = append(r.Steps, s)
		}
	}
	raw, ok = obj["answer"]
	switch {
	case !ok:
		r.Notes = append(r.Notes, `answer missing: ""`)
	case isNull(raw):
		r.Notes = append(r.Notes, `answer null: ""`)
	case raw[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return Reply{}, false
		}
		parts := make([]string, 0, len(elems))
		for _, e := range elems {
			if !isNull(e) {
				s, _ := jsonText(e)
				parts = append(parts, s)
			}
		}
		r.Answer = strings.Join(parts, ", ")
		r.Notes = append(r.Notes, fmt.Sprintf("answer a list: joined as %q", r.Answer))
	default:
		s, coerced := jsonText(raw)
		if coerced {
			r.Notes = append(r.Notes, fmt.Sprintf("answer not a string: became %q", s))
		}
		r.Answer = s
	}
	return r, true
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// jsonText returns a JSON string's value, or the compact JSON text of any
// other value (coerced = true). The result is valid UTF-8.
func jsonText(raw json.RawMessage) (s string, coerced bool) {
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err == nil {
			return strings.ToValidUTF8(s, "\uFFFD"), false
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return strings.ToValidUTF8(string(raw), "\uFFFD"), true
	}
	return strings.ToValidUTF8(buf.String(), "\uFFFD"), true
}

// codeFence is a Markdown fence marker with its optional language tag.
var codeFence = regexp.MustCompile("```[\\w+-]*")

// repairJSON applies the spec's repair pass. ok is false when the reply has
// no '{' … '}' span.
func repairJSON(reply string) (string, bool) {
	s := codeFence.ReplaceAllString(reply, "")
	first, last := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if first < 0 || last < first {
		return "", false
	}
	return dropTrailingCommas(dropControls(s[first : last+1])), true
}

// dropControls removes C0 control characters and DEL. Outside JSON strings
// tab, newline and carriage return are kept (they are JSON whitespace); inside
// strings they become a space so that words stay apart. A backslash directly
// before a dropped character is doubled so the string stays valid.
func dropControls(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			white := c == '\t' || c == '\n' || c == '\r'
			switch {
			case !inStr:
				if white {
					b.WriteByte(c)
				}
			default:
				if esc {
					b.WriteByte('\\')
					esc = false
				}
				if white {
					b.WriteByte(' ')
				}
			}
			continue
		}
		b.WriteByte(c)
		switch {
		case !inStr:
			inStr = c == '"'
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			inStr = false
		}
	}
	return b.String()
}

// dropTrailingCommas removes, outside JSON strings, every comma whose next
// non-whitespace byte is '}' or ']'.
func dropTrailingCommas(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			b.WriteByte(c)
			continue
		}
		if c == '"' {
			inStr = true
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
