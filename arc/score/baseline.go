package score

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ParseBaselines reads a baseline file: the per-level human baseline action
// counts of one game, level 1 first, either as a JSON list of integers
// ([18, 52, 44]) or as a JSON object with a "baseline_actions" list (the
// official EnvironmentInfo: a toolkit metadata.json, or the local server's
// GET /api/games/{game_id} answer). Every count must be an integer ≥ 1 and
// there must be at least one. Errors name the offending entry; the caller
// adds the file name.
func ParseBaselines(data []byte) ([]int, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("empty; want a JSON list of baseline action counts or an object with baseline_actions")
	}
	var raw []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("not a JSON list: %w", err)
		}
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
		b, ok := obj["baseline_actions"]
		if !ok {
			return nil, errors.New("the object has no baseline_actions")
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, fmt.Errorf("baseline_actions: want a list: %w", err)
		}
	default:
		return nil, errors.New("want a JSON list of baseline action counts or an object with baseline_actions")
	}
	if len(raw) == 0 {
		return nil, errors.New("no baseline: the list is empty")
	}
	out := make([]int, len(raw))
	for i, r := range raw {
		var n int
		if err := json.Unmarshal(r, &n); err != nil || n < 1 {
			return nil, fmt.Errorf("baseline of level %d: want an integer ≥ 1, got %s", i+1, clip(r))
		}
		out[i] = n
	}
	return out, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
