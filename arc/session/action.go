package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Status is the outcome of one step as the world model and the verifier see
// it (spec arc.md "Vocabulary and contracts").
type Status string

// The three statuses.
const (
	Running        Status = "RUNNING"
	LevelCompleted Status = "LEVEL_COMPLETED"
	GameOver       Status = "GAME_OVER"
)

// ObservedStatus is the spec's rule for a recorded response in an attempt of
// level (1-based) (spec arc.md "Session recording"): GameOver if m.State is
// GAME_OVER, else LevelCompleted if m.LevelsCompleted ≥ level, else Running.
func ObservedStatus(m Metadata, level int) Status {
	switch {
	case m.State == StateGameOver:
		return GameOver
	case m.LevelsCompleted >= level:
		return LevelCompleted
	default:
		return Running
	}
}

// ClickMax is the largest ACTION6 coordinate: x and y are 0..ClickMax, origin
// top-left (spec arc.md "Vocabulary and contracts").
const ClickMax = 63

// Action is one command as the world model receives it (seed
// AttemptStep.action): Name is "RESET" or "ACTION1".."ACTION7"; X (column)
// and Y (row) are the click cell of ACTION6 and 0 for every other action.
type Action struct {
	Name string
	X, Y int
}

// String formats a like the plan executor's log: "ACTION1", or
// "ACTION6 x=15 y=47".
func (a Action) String() string {
	if a.Name == "ACTION6" {
		return fmt.Sprintf("%s x=%d y=%d", a.Name, a.X, a.Y)
	}
	return a.Name
}

// MarshalJSON writes the seed's action dict: {"name":"ACTION1"}, or
// {"name":"ACTION6","x":15,"y":47}.
func (a Action) MarshalJSON() ([]byte, error) {
	n, _ := json.Marshal(a.Name)
	b := append([]byte(`{"name":`), n...)
	if a.Name == "ACTION6" {
		b = fmt.Appendf(b, `,"x":%d,"y":%d`, a.X, a.Y)
	}
	return append(b, '}'), nil
}

// Input returns the action_input the recorder writes for a: the integer id
// (0 RESET, n for ACTIONn) and data {} — {"x":X,"y":Y} for ACTION6. It fails
// for a name that is not a known action.
func (a Action) Input() (ActionInput, error) {
	id := ActionIDFromName(a.Name)
	if !id.Known() {
		return ActionInput{}, fmt.Errorf("session: unknown action %q", a.Name)
	}
	id.Text = false
	data := json.RawMessage(`{}`)
	if a.Name == "ACTION6" {
		data = fmt.Appendf(nil, `{"x":%d,"y":%d}`, a.X, a.Y)
	}
	return ActionInput{ID: id, Data: data}, nil
}

// ActionFromInput decodes the action of a step from its action_input. It
// fails when ai is nil, the id is not RESET or ACTION1..ACTION7, or an ACTION6
// lacks integer "x" and "y" in 0..ClickMax in its data.
func ActionFromInput(ai *ActionInput) (Action, error) {
	if ai == nil {
		return Action{}, fmt.Errorf(`action_input missing`)
	}
	if !ai.ID.Known() {
		b, _ := ai.ID.MarshalJSON()
		return Action{}, fmt.Errorf("action_input.id %s is not RESET or ACTION1..ACTION7", b)
	}
	a := Action{Name: ActionNames[ai.ID.Code]}
	if a.Name != "ACTION6" {
		return a, nil
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(ai.Data, &data); err != nil || data == nil {
		return Action{}, fmt.Errorf("action_input.data of ACTION6: want an object with x and y, got %s", clip(bytes.TrimSpace(ai.Data)))
	}
	for _, c := range []struct {
		key string
		dst *int
	}{{"x", &a.X}, {"y", &a.Y}} {
		raw, ok := data[c.key]
		if !ok {
			return Action{}, fmt.Errorf("action_input.data of ACTION6: missing %q", c.key)
		}
		n, err := jsonInt(raw)
		if err != nil || n < 0 || n > ClickMax {
			return Action{}, fmt.Errorf("action_input.data.%s of ACTION6: want an integer 0..%s, got %s", c.key, strconv.Itoa(ClickMax), clip(raw))
		}
		*c.dst = n
	}
	return a, nil
}
