package client_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/api"
)

// TestOutOfPaletteCellsAreRecordedWithAWarning: a server frame with a cell
// outside 0..15 (here 16 at x=3, y=2 and -1 at x=0, y=5) does not lose the
// step. The step is recorded, the cells as 5 (black, the spec's palette
// for values outside it), and the client warns once for the response.
func TestOutOfPaletteCellsAreRecordedWithAWarning(t *testing.T) {
	f := newOfficial(t)
	c := newOffClient(t, f, "")
	c.start(t, f, offGame)
	f.override = func(action string, w http.ResponseWriter) bool {
		grid := make([][]int, 64)
		for y := range grid {
			grid[y] = make([]int, 64)
		}
		grid[2][3], grid[5][0] = 16, -1
		writeBody(w, 200, api.FrameResponse{GameID: offGame, GUID: offGUID, Frame: [][][]int{grid}, State: api.StateNotFinished,
			WinLevels: 3, ActionInput: api.ActionInput{ID: 1}, AvailableActions: []int{1, 2, 3, 4}})
		return true
	}
	res := c.move(t, "ACTION1")
	b, err := os.ReadFile(filepath.Join(c.ws, "client", "session", "level_01_attempt_01", "step_0001_final.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(rows) != 64 || rows[2][3] != '5' || rows[5][0] != '5' || rows[2][2] != '0' {
		t.Fatalf("recorded frame: %d rows, row 2 %q, row 5 %q", len(rows), rows[2][:6], rows[5][:6])
	}
	if res.Metadata.StepIndex != 1 {
		t.Errorf("step_index %d, want 1", res.Metadata.StepIndex)
	}
	want := "warning: the server response has 2 cell(s) outside the palette 0..15 (first: frame 0, x=3, y=2)"
	if got := c.warn.String(); strings.Count(got, "outside the palette") != 1 || !strings.HasPrefix(got, want) {
		t.Errorf("warnings %q, want one starting %q", got, want)
	}
}
