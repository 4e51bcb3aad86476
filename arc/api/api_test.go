package api

import (
	"encoding/json"
	"testing"

	"evident/arc/session"
)

func TestFrameResponse(t *testing.T) {
	t.Run("a response converts to the recorder's frames and metadata", func(t *testing.T) {
		row := make([]int, 64)
		grid := make([][]int, 64)
		for i := range grid {
			grid[i] = row
		}
		r := FrameResponse{Frame: [][][]int{grid, grid}, State: StateNotFinished, LevelsCompleted: 1, WinLevels: 3,
			ActionInput: ActionInput{ID: 6, Data: json.RawMessage(`{"x":1,"y":2}`), Reasoning: json.RawMessage(`"why"`)}, AvailableActions: []int{6}}
		sr, err := r.Session(7)
		if err != nil || len(sr.Frames) != 2 || sr.Frames[1].Width() != 64 {
			t.Fatalf("%v, %d frames", err, len(sr.Frames))
		}
		m := sr.Metadata
		a, err := session.ActionFromInput(m.ActionInput)
		if m.StepIndex != 7 || m.State != StateNotFinished || m.LevelsCompleted != 1 || m.WinLevels != 3 || err != nil ||
			a != (session.Action{Name: "ACTION6", X: 1, Y: 2}) || string(m.ActionInput.Extra["reasoning"]) != `"why"` {
			t.Fatalf("metadata %+v, action %+v %v", m, a, err)
		}
		b, _ := m.MarshalJSON()
		if _, err := session.ParseMetadata(b); err != nil {
			t.Fatalf("metadata does not parse back: %v\n%s", err, b)
		}
	})
	t.Run("data defaults to {} and no reasoning is no extra key", func(t *testing.T) {
		m := (&FrameResponse{State: StateNotFinished}).Metadata(1)
		if string(m.ActionInput.Data) != "{}" || m.ActionInput.Extra != nil || m.ActionInput.ID.Code != 0 {
			t.Fatalf("action_input %+v", m.ActionInput)
		}
	})
	t.Run("a ragged or empty grid is an error", func(t *testing.T) {
		for _, f := range [][][][]int{{{}}, {{{1, 2}, {3}}}} {
			r := FrameResponse{Frame: f}
			if _, err := r.Grids(); err == nil {
				t.Errorf("%v accepted", f)
			}
		}
	})
	t.Run("action ids follow the API's numbering", func(t *testing.T) {
		if id, ok := ActionID("RESET"); !ok || id != 0 {
			t.Error("RESET")
		}
		if id, ok := ActionID("ACTION7"); !ok || id != 7 {
			t.Error("ACTION7")
		}
		if _, ok := ActionID("ACTION8"); ok {
			t.Error("ACTION8")
		}
	})
}
