package session

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseMetadata(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Metadata
	}{
		{"a full step record with an integer id reads every spec field",
			`{"step_index": 12, "state": "NOT_FINISHED", "levels_completed": 1, "win_levels": 5,
			  "available_actions": [1, 2, 3, 4, 6], "action_input": {"id": 6, "data": {"x": 15, "y": 47}}}`,
			Metadata{StepIndex: 12, State: "NOT_FINISHED", LevelsCompleted: 1, WinLevels: 5, AvailableActions: []int{1, 2, 3, 4, 6},
				ActionInput: &ActionInput{ID: ActionID{Code: 6, Name: "ACTION6"}, Data: json.RawMessage(`{"x":15,"y":47}`)}}},
		{"a string id in lower case is normalised and remembered as text",
			`{"state": "GAME_OVER", "levels_completed": 0, "action_input": {"id": "action2"}}`,
			Metadata{State: "GAME_OVER", ActionInput: &ActionInput{ID: ActionID{Code: 2, Name: "ACTION2", Text: true}}}},
		{"a numeric string id is read as that action",
			`{"state": "NOT_FINISHED", "levels_completed": 0, "action_input": {"id": "7"}}`,
			Metadata{State: "NOT_FINISHED", ActionInput: &ActionInput{ID: ActionID{Code: 7, Name: "ACTION7", Text: true}}}},
		{"an unknown name is kept with code -1",
			`{"state": "NOT_FINISHED", "levels_completed": 0, "action_input": {"id": "jump"}}`,
			Metadata{State: "NOT_FINISHED", ActionInput: &ActionInput{ID: ActionID{Code: -1, Name: "JUMP", Text: true}}}},
		{"integral floats are accepted as integers",
			`{"step_index": 3.0, "state": "WIN", "levels_completed": 2e0, "win_levels": 2}`,
			Metadata{StepIndex: 3, State: "WIN", LevelsCompleted: 2, WinLevels: 2}},
		{"null action_input and available_actions read as absent",
			`{"state": "NOT_PLAYED", "levels_completed": 0, "action_input": null, "available_actions": null}`,
			Metadata{State: "NOT_PLAYED"}},
		{"unknown keys are kept compacted in Extra",
			`{"state": "NOT_FINISHED", "levels_completed": 0, "guid": "g-1", "score": {"a": [1, 2]}}`,
			Metadata{State: "NOT_FINISHED", Extra: map[string]json.RawMessage{"guid": json.RawMessage(`"g-1"`), "score": json.RawMessage(`{"a":[1,2]}`)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetadata([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseMetadataErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		line, col int
		msg       string
	}{
		{"a string where an integer belongs points at the value", "{\"state\": \"NOT_FINISHED\",\n  \"levels_completed\": \"one\"}", 2, 23, `levels_completed: want an integer ≥ 0, got "\"one\""`},
		{"a negative levels_completed is refused", `{"state": "WIN", "levels_completed": -1}`, 1, 38, "levels_completed: want an integer ≥ 0"},
		{"a fractional step_index is refused", `{"step_index": 1.5, "state": "WIN", "levels_completed": 0}`, 1, 16, "step_index: want an integer"},
		{"a missing state is refused", `{"levels_completed": 0}`, 1, 1, `missing or empty "state"`},
		{"a missing levels_completed is refused", `{"state": "WIN"}`, 1, 1, `missing "levels_completed"`},
		{"a duplicate key points at the second one", "{\"state\": \"WIN\",\n\"levels_completed\": 0,\n\"state\": \"GAME_OVER\"}", 3, 1, `duplicate key "state"`},
		{"a list is not an object", `[1, 2]`, 1, 1, "want a JSON object"},
		{"trailing data after the object is refused", `{"state": "WIN", "levels_completed": 0} {}`, 1, 41, "invalid JSON"},
		{"a syntax error names line and column", "{\"state\": \"WIN\",\n \"levels_completed\": 0,\n \"win_levels\": }", 3, 16, "invalid JSON"},
		{"a doubled comma is reported at the second comma", `{"state": "WIN", "available_actions": [1,, 2]}`, 1, 42, "invalid character ','"},
		{"truncated input is reported at its end", `{"state": "WIN"`, 1, 16, "invalid JSON"},
		{"empty input is invalid JSON", ``, 1, 1, "invalid JSON"},
		{"an action_input without id is refused", `{"state": "WIN", "levels_completed": 0, "action_input": {"data": {}}}`, 1, 57, `action_input: missing "id"`},
		{"a boolean id is refused", `{"state": "WIN", "levels_completed": 0, "action_input": {"id": true}}`, 1, 57, "action_input: id: want an integer or a name string"},
		{"available_actions with a string item is refused", `{"state": "WIN", "levels_completed": 0, "available_actions": [1, "2"]}`, 1, 62, "available_actions: item 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMetadata([]byte(tc.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line != tc.line || pe.Column != tc.col || !strings.Contains(pe.Reason, tc.msg) {
				t.Fatalf("got %d:%d %q, want %d:%d containing %q", pe.Line, pe.Column, pe.Reason, tc.line, tc.col, tc.msg)
			}
		})
	}
}

func TestMetadataMarshal(t *testing.T) {
	t.Run("spec fields come first in spec order, then extra keys sorted", func(t *testing.T) {
		m := Metadata{StepIndex: 7, State: "NOT_FINISHED", LevelsCompleted: 1, WinLevels: 3, AvailableActions: []int{1, 6},
			ActionInput: &ActionInput{ID: ActionIDFromName("ACTION6"), Data: json.RawMessage(`{"x": 1, "y": 2}`),
				Extra: map[string]json.RawMessage{"reasoning": json.RawMessage(`"click"`)}},
			Extra: map[string]json.RawMessage{"guid": json.RawMessage(`"g"`), "game_id": json.RawMessage(`"ls20"`)}}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"step_index":7,"state":"NOT_FINISHED","levels_completed":1,"win_levels":3,"available_actions":[1,6],` +
			`"action_input":{"id":"ACTION6","data":{"x":1,"y":2},"reasoning":"click"},"game_id":"ls20","guid":"g"}`
		if string(b) != want {
			t.Fatalf("got  %s\nwant %s", b, want)
		}
		back, err := ParseMetadata(b)
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(back)
		if string(b2) != want {
			t.Fatalf("second marshal %s", b2)
		}
	})
	t.Run("an integer id is written as its name, keys sorted, nil lists as [], without a final newline (baseline1's form)", func(t *testing.T) {
		m := Metadata{State: "GAME_OVER", ActionInput: &ActionInput{ID: ActionIDFromCode(3)}}
		b, err := m.MarshalFile()
		if err != nil {
			t.Fatal(err)
		}
		want := "{\n  \"action_input\": {\n    \"id\": \"ACTION3\"\n  },\n  \"available_actions\": [],\n  \"levels_completed\": 0,\n  \"state\": \"GAME_OVER\",\n  \"step_index\": 0,\n  \"win_levels\": 0\n}"
		if string(b) != want {
			t.Fatalf("got %q\nwant %q", b, want)
		}
	})
	t.Run("an extra key that shadows a spec field is refused", func(t *testing.T) {
		m := Metadata{State: "WIN", Extra: map[string]json.RawMessage{"state": json.RawMessage(`"X"`)}}
		if _, err := json.Marshal(m); err == nil || !strings.Contains(err.Error(), `"state" collides`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("json.Unmarshal into Metadata uses ParseMetadata", func(t *testing.T) {
		var m Metadata
		if err := json.Unmarshal([]byte(`{"state":"WIN","levels_completed":3}`), &m); err != nil || m.LevelsCompleted != 3 {
			t.Fatalf("got %+v, %v", m, err)
		}
		if err := json.Unmarshal([]byte(`{"levels_completed":3}`), &m); err == nil {
			t.Fatal("missing state accepted")
		}
	})
}

func TestObservedStatus(t *testing.T) {
	tests := []struct {
		name  string
		state string
		done  int
		level int
		want  Status
	}{
		{"GAME_OVER wins over a completed level", StateGameOver, 3, 2, GameOver},
		{"levels_completed equal to the level completes it", StateNotFinished, 2, 2, LevelCompleted},
		{"levels_completed beyond the level also completes it", StateNotFinished, 3, 2, LevelCompleted},
		{"WIN with the last level completed is LEVEL_COMPLETED", StateWin, 5, 5, LevelCompleted},
		{"fewer levels completed than the level is RUNNING", StateNotFinished, 1, 2, Running},
		{"a fresh game is RUNNING", StateNotPlayed, 0, 1, Running},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ObservedStatus(Metadata{State: tc.state, LevelsCompleted: tc.done}, tc.level); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestActions(t *testing.T) {
	tests := []struct {
		name string
		in   string // action_input JSON
		want Action
		err  string
	}{
		{"integer 1 is ACTION1", `{"id":1}`, Action{Name: "ACTION1"}, ""},
		{"integer 0 is RESET", `{"id":0,"data":{}}`, Action{Name: "RESET"}, ""},
		{"ACTION6 by number reads its click", `{"id":6,"data":{"x":0,"y":63,"game_id":"ls20"}}`, Action{Name: "ACTION6", X: 0, Y: 63}, ""},
		{"ACTION6 by name reads its click", `{"id":"ACTION6","data":{"x":15,"y":47}}`, Action{Name: "ACTION6", X: 15, Y: 47}, ""},
		{"ACTION6 without data is refused", `{"id":6}`, Action{}, "want an object with x and y"},
		{"ACTION6 with a string coordinate is refused", `{"id":6,"data":{"x":"15","y":47}}`, Action{}, "data.x of ACTION6"},
		{"ACTION6 with a negative coordinate is refused", `{"id":6,"data":{"x":-1,"y":47}}`, Action{}, "data.x of ACTION6"},
		{"integer 8 is refused", `{"id":8}`, Action{}, "action_input.id 8 is not"},
		{"an unknown name is refused", `{"id":"JUMP"}`, Action{}, `action_input.id "JUMP" is not`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ai, err := parseActionInput(json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ActionFromInput(&ai)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want error containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}

	t.Run("actions print and marshal like the seed", func(t *testing.T) {
		a := Action{Name: "ACTION6", X: 15, Y: 47}
		b, _ := json.Marshal(a)
		if a.String() != "ACTION6 x=15 y=47" || string(b) != `{"name":"ACTION6","x":15,"y":47}` {
			t.Fatalf("got %s / %s", a, b)
		}
		b, _ = json.Marshal(Action{Name: "ACTION1"})
		if string(b) != `{"name":"ACTION1"}` {
			t.Fatalf("got %s", b)
		}
	})
	t.Run("Input and ActionFromInput are inverse for every action", func(t *testing.T) {
		for _, a := range []Action{{Name: "RESET"}, {Name: "ACTION1"}, {Name: "ACTION5"}, {Name: "ACTION6", X: 63, Y: 7}, {Name: "ACTION7"}} {
			ai, err := a.Input()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ActionFromInput(&ai)
			if err != nil || back != a || ai.ID.Text {
				t.Fatalf("%v → %+v → %v, %v", a, ai, back, err)
			}
		}
		if _, err := (Action{Name: "JUMP"}).Input(); err == nil {
			t.Fatal("unknown action accepted")
		}
	})
}

// FuzzReadMetadata checks that ParseMetadata never panics, returns only
// *ParseError, and that marshalling what it accepts is a fixed point after one
// round.
func FuzzReadMetadata(f *testing.F) {
	for _, s := range []string{
		`{"step_index": 12, "state": "NOT_FINISHED", "levels_completed": 1, "win_levels": 5, "available_actions": [1, 6], "action_input": {"id": 6, "data": {"x": 15, "y": 47}}}`,
		`{"state": "GAME_OVER", "levels_completed": 0, "action_input": {"id": "action2", "reasoning": "x"}, "guid": "g"}`,
		`{"state": "WIN", "levels_completed": 1e0}`,
		`{"state": "WIN", "levels_completed": 0, "state": "X"}`,
		`[1]`, ``, `{"state": "W`, `{"state": "WIN", "levels_completed": 0} x`,
		`{"state":"WIN","levels_completed":0,"action_input":{"id":9999999999999999999999}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetadata(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if m.State == "" || m.LevelsCompleted < 0 {
			t.Fatalf("accepted %+v", m)
		}
		if m.ActionInput != nil {
			_, _ = ActionFromInput(m.ActionInput)
		}
		b1, err := m.MarshalFile()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		m2, err := ParseMetadata(b1)
		if err != nil {
			t.Fatalf("reparse %s: %v", b1, err)
		}
		b2, err := m2.MarshalFile()
		if err != nil || string(b1) != string(b2) {
			t.Fatalf("not a fixed point:\n%s\n%s", b1, b2)
		}
	})
}
