package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"evident/internal/located"
)

// Game states of the API's FrameResponse.state, as written in metadata
// (spec arc.md "The real game").
const (
	StateNotPlayed   = "NOT_PLAYED"
	StateNotFinished = "NOT_FINISHED"
	StateWin         = "WIN"
	StateGameOver    = "GAME_OVER"
)

// ParseError is an error in a metadata file or in the session layout: the
// module's one located error, evident/internal/located.Error, shared with
// frame.ParseError. Line and Column are 1-based (0 when unknown; Column
// counts runes, as located.Error does); File is "" for in-memory input.
// Reason starts with "session: ", so Error reads "file:line:col: session:
// msg" (with a File) as it always has.
type ParseError = located.Error

// parseErr is a *ParseError in file (or "") at line and col.
func parseErr(file string, line, col int, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Column: col, Reason: "session: " + fmt.Sprintf(format, args...)}
}

// Metadata is one step_kkkk_metadata.json or initial_metadata.json (spec
// arc.md "Session recording"): the game's response to one command.
type Metadata struct {
	// StepIndex is the client's server-wide step counter ("step_index").
	StepIndex int
	// State is the API state ("state"): NOT_PLAYED, NOT_FINISHED, WIN or
	// GAME_OVER; other non-empty strings are kept as read.
	State string
	// LevelsCompleted is the number of levels completed so far
	// ("levels_completed"), ≥ 0.
	LevelsCompleted int
	// WinLevels is the number of levels that wins the game ("win_levels").
	WinLevels int
	// AvailableActions are the action numbers allowed next
	// ("available_actions"); nil when absent, null or empty.
	AvailableActions []int
	// ActionInput is the command that produced the response ("action_input");
	// nil when absent or null.
	ActionInput *ActionInput
	// Extra holds every other top-level key with its raw JSON value, written
	// back after the spec fields in key order.
	Extra map[string]json.RawMessage
}

// ActionInput is metadata's "action_input": the command as the server echoed
// it.
type ActionInput struct {
	// ID is "id": an integer or a name string.
	ID ActionID
	// Data is "data" as raw JSON (ACTION6 carries "x" and "y"); nil when
	// absent.
	Data json.RawMessage
	// Extra holds any other key of action_input (e.g. "reasoning").
	Extra map[string]json.RawMessage
}

// ActionID is action_input.id, which a client may write as an integer (the
// API's GameAction: 0 RESET, 1..7 ACTION1..ACTION7) or as a name string.
type ActionID struct {
	// Code is the action number: 0..7 for known actions, the integer as
	// written for other integers, -1 for a name that is not a known action.
	Code int
	// Name is "RESET" or "ACTION1".."ACTION7" for known actions, the
	// upper-cased string as written for unknown names, "" for unknown
	// integers.
	Name string
	// Text records that the id was written as a JSON string; MarshalJSON
	// writes Name then, else Code.
	Text bool
}

// Action names in the API's numbering: ActionNames[n] is the name of action n.
var ActionNames = [...]string{"RESET", "ACTION1", "ACTION2", "ACTION3", "ACTION4", "ACTION5", "ACTION6", "ACTION7"}

// ActionIDFromCode returns the integer id of action n, naming it when n is
// 0..7.
func ActionIDFromCode(n int) ActionID {
	id := ActionID{Code: n}
	if n >= 0 && n < len(ActionNames) {
		id.Name = ActionNames[n]
	}
	return id
}

// ActionIDFromName returns the string id for a name such as "ACTION6" or
// "reset" (any case; a decimal string is read as a number).
func ActionIDFromName(s string) ActionID {
	u := strings.ToUpper(strings.TrimSpace(s))
	id := ActionID{Code: -1, Name: u, Text: true}
	if i := slices.Index(ActionNames[:], u); i >= 0 {
		id.Code = i
	} else if n, err := strconv.Atoi(u); err == nil && n >= 0 {
		id = ActionIDFromCode(n)
		id.Text = true
		if id.Name == "" {
			id.Name = u
		}
	}
	return id
}

// Known reports whether id names RESET or ACTION1..ACTION7.
func (id ActionID) Known() bool { return id.Code >= 0 && id.Code < len(ActionNames) }

// MarshalJSON writes the id as a string (Name) if it was read as one, else as
// an integer (Code).
func (id ActionID) MarshalJSON() ([]byte, error) {
	if id.Text {
		return json.Marshal(id.Name)
	}
	return strconv.AppendInt(nil, int64(id.Code), 10), nil
}

// UnmarshalJSON reads an integer or a string id; anything else is an error.
func (id *ActionID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = ActionIDFromName(s)
		return nil
	}
	n, err := jsonInt(b)
	if err != nil {
		return fmt.Errorf("want an integer or a name string, got %s", clip(b))
	}
	*id = ActionIDFromCode(n)
	return nil
}

// jsonInt decodes a JSON number that is an integer fitting an int (1.0 and
// 1e2 are accepted, 1.5 is not).
func jsonInt(b []byte) (int, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return 0, fmt.Errorf("not a number: %s", clip(b))
	}
	var num json.Number
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&num); err != nil {
		return 0, err
	}
	if n, err := strconv.ParseInt(num.String(), 10, strconv.IntSize); err == nil {
		return int(n), nil
	}
	f, err := strconv.ParseFloat(num.String(), 64)
	if err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, fmt.Errorf("not an integer: %s", num)
	}
	return int(f), nil
}

// clip shortens raw JSON for error messages.
func clip(b []byte) string {
	s := string(b)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return strconv.Quote(s)
}

// Spec field names of metadata, in the order MarshalJSON writes them.
var metadataKeys = []string{"step_index", "state", "levels_completed", "win_levels", "available_actions", "action_input"}

// errAt builds a *ParseError at the first significant byte at or after off.
func errAt(data []byte, off int64, format string, args ...any) *ParseError {
	line, col := lineCol(data, off)
	return parseErr("", line, col, format, args...)
}

// lineCol returns the 1-based line and rune column of the first byte at or
// after off that is not JSON whitespace, ',' or ':'.
func lineCol(data []byte, off int64) (int, int) {
	o := int(max(0, min(off, int64(len(data)))))
	for o < len(data) && strings.IndexByte(" \t\r\n,:", data[o]) >= 0 {
		o++
	}
	return exactLineCol(data, int64(o))
}

// exactLineCol returns the 1-based line and rune column of byte off (the
// column of located.Error: what an editor shows).
func exactLineCol(data []byte, off int64) (int, int) {
	o := int(max(0, min(off, int64(len(data)))))
	line := 1 + bytes.Count(data[:o], []byte{'\n'})
	col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:o], '\n')+1:o])
	return line, col
}

// jsonErrAt converts a decoder error to a *ParseError, using the offset the
// error carries when it has one.
func jsonErrAt(data []byte, off int64, err error) *ParseError {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if strings.Contains(se.Error(), "unexpected end") {
			return errAt(data, int64(len(data)), "invalid JSON: unexpected end of input")
		}
		line, col := exactLineCol(data, se.Offset-1)
		return parseErr("", line, col, "invalid JSON: %v", se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errAt(data, int64(len(data)), "invalid JSON: unexpected end of input")
	}
	return errAt(data, off, "invalid JSON: %v", err)
}

// ParseMetadata parses one metadata file (spec arc.md "Session recording").
// It returns a *ParseError with line and column for invalid JSON, a value
// that is not an object, trailing data, a duplicate key, a spec field of the
// wrong type, a missing or empty "state", or a missing or negative
// "levels_completed". It never panics.
func ParseMetadata(data []byte) (Metadata, error) {
	var m Metadata
	// Validate the whole input first: json.Decoder's SyntaxError offsets are
	// not reliable after Token calls, Unmarshal's are.
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		return m, jsonErrAt(data, 0, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return m, jsonErrAt(data, 0, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return m, errAt(data, 0, "want a JSON object, got %v", tok)
	}
	seen := map[string]bool{}
	for dec.More() {
		keyOff := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return m, jsonErrAt(data, keyOff, err)
		}
		key, ok := tok.(string)
		if !ok {
			return m, errAt(data, keyOff, "want an object key, got %v", tok)
		}
		if seen[key] {
			return m, errAt(data, keyOff, "duplicate key %q", key)
		}
		seen[key] = true
		valOff := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return m, jsonErrAt(data, valOff, err)
		}
		if err := m.setField(key, raw); err != nil {
			return m, errAt(data, valOff, "%s: %v", key, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return m, jsonErrAt(data, dec.InputOffset(), err)
	}
	if end := dec.InputOffset(); len(bytes.TrimSpace(data[end:])) > 0 {
		return m, errAt(data, end, "trailing data after the JSON object")
	}
	if m.State == "" {
		return m, errAt(data, 0, `missing or empty "state"`)
	}
	if !seen["levels_completed"] {
		return m, errAt(data, 0, `missing "levels_completed"`)
	}
	return m, nil
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// setField decodes one top-level key into m.
func (m *Metadata) setField(key string, raw json.RawMessage) error {
	var err error
	switch key {
	case "step_index":
		m.StepIndex, err = jsonInt(raw)
		if err != nil {
			return fmt.Errorf("want an integer, got %s", clip(raw))
		}
	case "state":
		if err := json.Unmarshal(raw, &m.State); err != nil || isNull(raw) {
			return fmt.Errorf("want a string, got %s", clip(raw))
		}
	case "levels_completed", "win_levels":
		n, err := jsonInt(raw)
		if err != nil || n < 0 {
			return fmt.Errorf("want an integer ≥ 0, got %s", clip(raw))
		}
		if key == "win_levels" {
			m.WinLevels = n
		} else {
			m.LevelsCompleted = n
		}
	case "available_actions":
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("want a list of integers, got %s", clip(raw))
		}
		m.AvailableActions = nil
		for i, it := range items {
			n, err := jsonInt(it)
			if err != nil {
				return fmt.Errorf("item %d: want an integer, got %s", i, clip(it))
			}
			m.AvailableActions = append(m.AvailableActions, n)
		}
	case "action_input":
		if isNull(raw) {
			m.ActionInput = nil
			return nil
		}
		ai, err := parseActionInput(raw)
		if err != nil {
			return err
		}
		m.ActionInput = &ai
	default:
		if m.Extra == nil {
			m.Extra = map[string]json.RawMessage{}
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return err
		}
		m.Extra[key] = c.Bytes()
	}
	return nil
}

func parseActionInput(raw json.RawMessage) (ActionInput, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return ActionInput{}, fmt.Errorf("want an object, got %s", clip(raw))
	}
	var ai ActionInput
	idRaw, ok := fields["id"]
	if !ok || isNull(idRaw) {
		return ai, errors.New(`missing "id"`)
	}
	if err := ai.ID.UnmarshalJSON(idRaw); err != nil {
		return ai, fmt.Errorf("id: %v", err)
	}
	for k, v := range fields {
		switch k {
		case "id":
		case "data":
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return ai, fmt.Errorf("data: %v", err)
			}
			ai.Data = c.Bytes()
		default:
			if ai.Extra == nil {
				ai.Extra = map[string]json.RawMessage{}
			}
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return ai, fmt.Errorf("%s: %v", k, err)
			}
			ai.Extra[k] = c.Bytes()
		}
	}
	return ai, nil
}

// UnmarshalJSON parses m with ParseMetadata.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	v, err := ParseMetadata(b)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// appendKey appends `,"key":` (no comma for the first key).
func appendKey(b []byte, key string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	k, _ := json.Marshal(key)
	b = append(b, k...)
	return append(b, ':')
}

// appendExtra appends the extra keys in order; keys that are spec fields are
// an error.
func appendExtra(b []byte, extra map[string]json.RawMessage, reserved []string) ([]byte, error) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if slices.Contains(reserved, k) {
			return nil, fmt.Errorf("session: extra key %q collides with a spec field", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var c bytes.Buffer
		if err := json.Compact(&c, extra[k]); err != nil {
			return nil, fmt.Errorf("session: extra key %q: %w", k, err)
		}
		b = appendKey(b, k)
		b = append(b, c.Bytes()...)
	}
	return b, nil
}

// MarshalJSON writes m as one compact JSON object: the spec fields in the
// order step_index, state, levels_completed, win_levels, available_actions
// ([] when nil), action_input (left out when nil), then Extra by key. It fails
// when an Extra key is a spec field or a raw value is not valid JSON.
func (m Metadata) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	b = appendKey(b, "step_index")
	b = strconv.AppendInt(b, int64(m.StepIndex), 10)
	b = appendKey(b, "state")
	s, _ := json.Marshal(m.State)
	b = append(b, s...)
	b = appendKey(b, "levels_completed")
	b = strconv.AppendInt(b, int64(m.LevelsCompleted), 10)
	b = appendKey(b, "win_levels")
	b = strconv.AppendInt(b, int64(m.WinLevels), 10)
	b = appendKey(b, "available_actions")
	b = append(b, '[')
	for i, a := range m.AvailableActions {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(a), 10)
	}
	b = append(b, ']')
	if ai := m.ActionInput; ai != nil {
		b = appendKey(b, "action_input")
		b = append(b, '{')
		b = appendKey(b, "id")
		id, _ := ai.ID.MarshalJSON()
		b = append(b, id...)
		if ai.Data != nil {
			var c bytes.Buffer
			if err := json.Compact(&c, ai.Data); err != nil {
				return nil, fmt.Errorf("session: action_input.data: %w", err)
			}
			b = appendKey(b, "data")
			b = append(b, c.Bytes()...)
		}
		var err error
		if b, err = appendExtra(b, ai.Extra, []string{"id", "data"}); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	b, err := appendExtra(b, m.Extra, metadataKeys)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// Baseline1DroppedKeys are the top-level keys baseline1's client removes
// from the server's frame before writing it as metadata; it also removes
// action_input.reasoning (baseline1 client.py compact_frame_metadata).
var Baseline1DroppedKeys = []string{"frame", "game_id", "guid", "full_reset"}

// Baseline1 returns m in the form baseline1's client writes (spec arc.md
// "Compatibility facts"; baseline1 client.py compact_frame_metadata): a
// known action_input.id becomes its name string ("ACTION4", "RESET"; an
// unknown id stays as it is), action_input.reasoning and the top-level keys
// of Baseline1DroppedKeys are removed, every other key is kept. m is not
// changed.
func (m Metadata) Baseline1() Metadata {
	out := m
	out.Extra = nil
	for k, v := range m.Extra {
		if slices.Contains(Baseline1DroppedKeys, k) {
			continue
		}
		if out.Extra == nil {
			out.Extra = map[string]json.RawMessage{}
		}
		out.Extra[k] = v
	}
	if m.ActionInput != nil {
		ai := *m.ActionInput
		if ai.ID.Known() {
			ai.ID = ActionIDFromName(ActionNames[ai.ID.Code])
		}
		ai.Extra = nil
		for k, v := range m.ActionInput.Extra {
			if k == "reasoning" {
				continue
			}
			if ai.Extra == nil {
				ai.Extra = map[string]json.RawMessage{}
			}
			ai.Extra[k] = v
		}
		out.ActionInput = &ai
	}
	return out
}

// MarshalFile returns m as the recorder writes it, byte for byte what
// baseline1's client writes for the same response (spec arc.md
// "Compatibility facts"; measured by recording with baseline1's own
// client.py, see evident/arc/client testdata/baseline1): m.Baseline1(), every
// object's keys sorted (baseline1's server answers through Flask's jsonify,
// which sorts keys, and its client keeps that order), then Python's
// json.dumps(indent=2): two-space indentation, [] and {} for empty
// containers, non-ASCII escaped as \uXXXX, no trailing newline. A nil
// ActionInput is written as "action_input": null, as baseline1's server
// sends it. So a step file reads
//
//	{
//	  "action_input": {
//	    "data": {},
//	    "id": "ACTION4"
//	  },
//	  "available_actions": [
//	    1,
//	    2
//	  ],
//	  "levels_completed": 0,
//	  "state": "NOT_FINISHED",
//	  "step_index": 3,
//	  "win_levels": 3
//	}
//
// It fails like MarshalJSON.
func (m Metadata) MarshalFile() ([]byte, error) {
	b := m.Baseline1()
	compact, err := b.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if b.ActionInput == nil {
		compact = append(compact[:len(compact)-1], `,"action_input":null}`...)
	}
	return pythonIndent(compact, true)
}
