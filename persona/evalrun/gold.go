package evalrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"evident/internal/located"
	"evident/persona"
)

// Gold is one turn a creator labelled by hand: the verdict a person reading
// the reply against the card would give, and why (Note, optional).
type Gold struct {
	TurnID  string          `json:"turn_id"`        // the labelled chat_turn row
	Verdict persona.Verdict `json:"verdict"`        // one of persona.Verdicts
	Note    string          `json:"note,omitempty"` // the creator's reason, free text
}

// LineError is the error ReadGold returns for a bad line of a gold file: the
// module's one located error (evident/internal/located) with Unit "gold",
// Line 1-based and Reason saying what is wrong; it reads "gold line 7:
// duplicate turn_id …".
type LineError = located.Error

// goldLine decodes one line; pointer fields tell a missing key from an empty
// value.
type goldLine struct {
	TurnID  *string `json:"turn_id"`
	Verdict *string `json:"verdict"`
	Note    *string `json:"note"`
}

// ReadGold reads a gold file (JSON Lines {turn_id, verdict, note?}; format and
// policy in the package doc) and returns its labels in file order. It stops at
// the first bad line with a *LineError naming the line; other errors come from
// reading r.
func ReadGold(r io.Reader) ([]Gold, error) {
	br := bufio.NewReader(r)
	var out []Gold
	first := map[string]int{} // turn_id → line it was labelled on
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			g, reason := decodeGold(t)
			if reason == "" {
				if at, dup := first[g.TurnID]; dup {
					reason = fmt.Sprintf("duplicate turn_id %q (first labelled on line %d)", g.TurnID, at)
				}
			}
			if reason != "" {
				return nil, &LineError{Unit: "gold", Line: line, Reason: reason}
			}
			first[g.TurnID] = line
			out = append(out, g)
		}
		if err == io.EOF {
			return out, nil
		}
	}
}

// decodeGold decodes one non-blank line; reason is "" when it is a valid label.
func decodeGold(b []byte) (Gold, string) {
	var raw goldLine
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return Gold{}, fmt.Sprintf("%s must be a string, not %s", ute.Field, ute.Value)
		}
		return Gold{}, "not a JSON object: " + err.Error()
	}
	if dec.More() {
		return Gold{}, "more than one JSON value on the line"
	}
	switch {
	case raw.TurnID == nil:
		return Gold{}, "turn_id missing"
	case *raw.TurnID == "":
		return Gold{}, "turn_id empty"
	case raw.Verdict == nil:
		return Gold{}, "verdict missing"
	case !persona.Verdict(*raw.Verdict).Valid():
		return Gold{}, fmt.Sprintf("verdict %q is not one of the five verdicts", *raw.Verdict)
	}
	g := Gold{TurnID: *raw.TurnID, Verdict: persona.Verdict(*raw.Verdict)}
	if raw.Note != nil {
		g.Note = *raw.Note
	}
	return g, ""
}
