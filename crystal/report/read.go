package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"evident/crystal"
	"evident/internal/located"
)

// ErrInput reports a references or predictions file that cannot be read:
// "crystal input: refs.jsonl:2: …". It wraps a *located.Error
// (evident/internal/located) naming the file and, where there is one, the
// line; the message names the item too.
var ErrInput = errors.New("crystal input")

func inputErr(name string, line int, format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrInput, &located.Error{File: name, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// itemRecord is one reference item as stored. Answer may be any JSON scalar;
// "choices" is accepted for "options".
type itemRecord struct {
	ID             json.RawMessage `json:"id"`
	Image          string          `json:"image"`
	Question       string          `json:"question"`
	Options        []string        `json:"options"`
	Choices        []string        `json:"choices"`
	Answer         json.RawMessage `json:"answer"`
	ReferenceSteps []string        `json:"reference_steps"`
}

// ReadItems reads reference items from r (name is used in messages). Three
// layouts are accepted:
//
//   - a JSON object keyed by item id: {"<id>": {"reference_steps": [...],
//     "answer": "...", "question": "...", "options": [...]}, ...} — items
//     keep the file's key order;
//   - a JSON array of items, each with an "id";
//   - JSON Lines, one item with an "id" per line (blank lines skipped).
//
// A single top-level object that itself has "reference_steps" is read as a
// one-line JSON Lines file. Fields: id, image, question, options (or
// choices), answer (a string, or a number or boolean, kept as its JSON text),
// reference_steps (strings); others are ignored. Errors wrap ErrInput and
// name the file and line or id: invalid JSON, a missing or duplicate id, a
// non-string step.
func ReadItems(r io.Reader, name string) ([]crystal.Item, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, inputErr(name, 0, "%v", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, inputErr(name, 0, "no items")
	}
	var items []crystal.Item
	switch {
	case trimmed[0] == '[':
		var recs []json.RawMessage
		if err := json.Unmarshal(trimmed, &recs); err != nil {
			return nil, inputErr(name, 0, "%v", err)
		}
		for k, raw := range recs {
			it, err := decodeItem(raw, "")
			if err != nil {
				return nil, inputErr(name, 0, "item %d: %v", k, err)
			}
			items = append(items, it)
		}
	case trimmed[0] == '{' && isKeyedObject(trimmed):
		if items, err = readKeyed(trimmed); err != nil {
			return nil, inputErr(name, 0, "%v", err)
		}
	default:
		err := eachLine(data, func(line int, raw []byte) error {
			it, err := decodeItem(raw, "")
			if err != nil {
				return inputErr(name, line, "%v", err)
			}
			items = append(items, it)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if seen[it.ID] {
			return nil, inputErr(name, 0, "duplicate id %q", it.ID)
		}
		seen[it.ID] = true
	}
	return items, nil
}

// isKeyedObject tells the id-keyed layout from JSON Lines: the data is one
// JSON value, an object without "reference_steps" of its own.
func isKeyedObject(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false // more values follow: JSON Lines
	}
	_, isItem := top["reference_steps"]
	return !isItem
}

// readKeyed reads {"id": item, ...} in key order.
func readKeyed(data []byte) ([]crystal.Item, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	var items []crystal.Item
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("item %q: %v", key, err)
		}
		it, err := decodeItem(raw, key)
		if err != nil {
			return nil, fmt.Errorf("item %q: %v", key, err)
		}
		items = append(items, it)
	}
	return items, nil
}

func decodeItem(raw []byte, key string) (crystal.Item, error) {
	var rec itemRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return crystal.Item{}, err
	}
	id, err := scalar(rec.ID)
	if err != nil {
		return crystal.Item{}, fmt.Errorf("id: %v", err)
	}
	switch {
	case key != "" && id != "" && id != key:
		return crystal.Item{}, fmt.Errorf("id %q differs from its key", id)
	case key != "":
		id = key
	case id == "":
		return crystal.Item{}, errors.New("no id")
	}
	answer, err := scalar(rec.Answer)
	if err != nil {
		return crystal.Item{}, fmt.Errorf("answer: %v", err)
	}
	opts := rec.Options
	if len(opts) == 0 {
		opts = rec.Choices
	}
	steps := rec.ReferenceSteps
	if steps == nil {
		steps = []string{}
	}
	return crystal.Item{ID: id, Image: rec.Image, Question: rec.Question, Options: opts, Answer: answer, ReferenceSteps: steps}, nil
}

// scalar reads a JSON string, number or boolean as text; null or absent is "".
func scalar(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '{', '[':
		return "", fmt.Errorf("want a string, got %s", raw)
	}
	return string(raw), nil
}

// eachLine calls fn for every non-blank line (1-based numbers).
func eachLine(data []byte, fn func(line int, raw []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), len(data)+1)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if err := fn(line, raw); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Prediction is one model's reply to one item, read by ReadPredictions.
type Prediction struct {
	Model string        `json:"model"`
	ID    string        `json:"id"`
	Reply crystal.Reply `json:"reply"`
}

// predRecord is one predictions line: either a raw reply or the parsed fields.
type predRecord struct {
	ID             json.RawMessage `json:"id"`
	Model          string          `json:"model"`
	Reply          json.RawMessage `json:"reply"`
	ReasoningSteps json.RawMessage `json:"reasoning_steps"`
	Answer         json.RawMessage `json:"answer"`
}

// ReadPredictions reads JSON Lines of predictions (a JSON array of the same
// records is accepted too). Each record has an "id", a "model" (when absent:
// defaultModel) and either
//
//   - "reply": the model's raw reply text, read by crystal.ParseReply (code
//     fences stripped, repaired or flagged unparseable, never an error); or
//   - "reasoning_steps" and "answer" as the model gave them, read with the
//     same coercions (non-string steps become strings, null steps dropped).
//
// Errors wrap ErrInput and name the file and line: invalid JSON, a missing
// id, a record with neither reply nor reasoning_steps/answer, a repeated
// (model, id) pair.
func ReadPredictions(r io.Reader, name, defaultModel string) ([]Prediction, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, inputErr(name, 0, "%v", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var out []Prediction
	seen := make(map[[2]string]int)
	add := func(line int, raw []byte) error {
		p, err := decodePrediction(raw, defaultModel)
		if err != nil {
			return inputErr(name, line, "%v", err)
		}
		k := [2]string{p.Model, p.ID}
		if first, dup := seen[k]; dup {
			return inputErr(name, line, "model %q already answered item %q (line %d)", p.Model, p.ID, first)
		}
		seen[k] = line
		out = append(out, p)
		return nil
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		var recs []json.RawMessage
		if err := json.Unmarshal(t, &recs); err != nil {
			return nil, inputErr(name, 0, "%v", err)
		}
		for k, raw := range recs {
			if err := add(k+1, raw); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if err := eachLine(data, add); err != nil {
		return nil, err
	}
	return out, nil
}

func decodePrediction(raw []byte, defaultModel string) (Prediction, error) {
	var rec predRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Prediction{}, err
	}
	id, err := scalar(rec.ID)
	if err != nil || id == "" {
		return Prediction{}, errors.New("no id")
	}
	p := Prediction{Model: rec.Model, ID: id}
	if p.Model == "" {
		p.Model = defaultModel
	}
	switch {
	case len(rec.Reply) > 0 && string(rec.Reply) != "null":
		text := string(rec.Reply)
		if rec.Reply[0] == '"' {
			if err := json.Unmarshal(rec.Reply, &text); err != nil {
				return Prediction{}, fmt.Errorf("reply: %v", err)
			}
		}
		p.Reply = crystal.ParseReply(text)
	case len(rec.ReasoningSteps) > 0 || len(rec.Answer) > 0:
		// Rebuild the seed's object and let ParseReply apply its coercions.
		obj := map[string]json.RawMessage{}
		if len(rec.ReasoningSteps) > 0 {
			obj["reasoning_steps"] = rec.ReasoningSteps
		}
		if len(rec.Answer) > 0 {
			obj["answer"] = rec.Answer
		}
		b, _ := json.Marshal(obj)
		p.Reply = crystal.ParseReply(string(b))
	default:
		return Prediction{}, fmt.Errorf("item %q: neither \"reply\" nor \"reasoning_steps\"/\"answer\"", id)
	}
	return p, nil
}

// Run is the predictions of one model, keyed by item id.
type Run struct {
	Model   string
	Replies map[string]crystal.Reply
}

// Group collects predictions into one Run per model, in the order models
// first appear.
func Group(preds []Prediction) []Run {
	var runs []Run
	index := map[string]int{}
	for _, p := range preds {
		k, ok := index[p.Model]
		if !ok {
			k = len(runs)
			index[p.Model] = k
			runs = append(runs, Run{Model: p.Model, Replies: map[string]crystal.Reply{}})
		}
		runs[k].Replies[p.ID] = p.Reply
	}
	return runs
}

// ReadItemsFile reads the references file at path (see ReadItems), capped
// at MaxInputBytes.
func ReadItemsFile(path string) ([]crystal.Item, error) {
	f, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ReadItems(bytes.NewReader(f.Data), path)
}

// ReadPredictionFiles reads prediction files in order and groups them into
// runs (see ReadPredictionSet, Group); each is capped at MaxInputBytes.
func ReadPredictionFiles(paths ...string) ([]Run, error) {
	files, err := ReadFiles(paths...)
	if err != nil {
		return nil, err
	}
	preds, err := ReadPredictionSet(files)
	if err != nil {
		return nil, err
	}
	return Group(preds), nil
}

// quote is strconv.Quote, kept short for table notes.
func quote(s string) string { return strconv.Quote(s) }
