package client_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/api"
	"evident/arc/client"
	"evident/arc/games"
	"evident/arc/session"
)

// The wanted texts were printed by baseline1's own print_step_summary
// (twma_v1.6 client/client.py) for the same frames and paths.
func TestWriteSummary(t *testing.T) {
	d, n := "/ws/client/session/level_01_attempt_01", "/ws/client/session/level_02_attempt_01"
	for _, tc := range []struct {
		name string
		res  client.Result
		want string
	}{
		{
			name: "a step that completes a level prints both folders, unknown actions get the unknown hint",
			res: client.Result{
				Action:   session.Action{Name: "ACTION6", X: 1, Y: 2},
				Metadata: session.Metadata{StepIndex: 7, State: "NOT_FINISHED", LevelsCompleted: 1, WinLevels: 3, AvailableActions: []int{1, 6, 9}},
				Files: []string{d + "/step_0007_metadata.json", d + "/step_0007_intermediate_00.png", d + "/step_0007_intermediate_00.txt",
					d + "/step_0007_final.png", d + "/step_0007_final.txt", n + "/initial_metadata.json", n + "/initial_frame.png", n + "/initial_frame.txt"},
			},
			want: `step: 7
state: NOT_FINISHED
level: 2 / 3 (completed: 1)
action: ACTION6
available_actions_next: [1(ACTION1, usual semantics: up), 6(ACTION6, usual semantics: coordinate action), 9(ACTION9, usual semantics: unknown)]
path: /ws/client/session/level_01_attempt_01
files:
  step_0007_metadata.json
  step_0007_intermediate_00.png
  step_0007_intermediate_00.txt
  step_0007_final.png
  step_0007_final.txt
path: /ws/client/session/level_02_attempt_01
files:
  initial_metadata.json
  initial_frame.png
  initial_frame.txt
`,
		},
		{
			name: "a won game shows the last level, no files print no path",
			res: client.Result{
				Metadata: session.Metadata{StepIndex: 0, State: "WIN", LevelsCompleted: 3, WinLevels: 3,
					ActionInput: &session.ActionInput{ID: session.ActionIDFromName("RESET")}},
			},
			want: "step: 0\nstate: WIN\nlevel: 3 / 3 (completed: 3)\naction: RESET\navailable_actions_next: []\n",
		},
		{
			name: "no win_levels and no action give level completed+1 and UNKNOWN",
			res:  client.Result{Metadata: session.Metadata{StepIndex: 2, State: "NOT_FINISHED", AvailableActions: []int{5}}},
			want: "step: 2\nstate: NOT_FINISHED\nlevel: 1 / 0 (completed: 0)\naction: UNKNOWN\navailable_actions_next: [5(ACTION5, usual semantics: primary interaction)]\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := client.WriteSummary(&b, &tc.res); err != nil || b.String() != tc.want {
				t.Fatalf("err %v\ngot:\n%s\nwant:\n%s", err, b.String(), tc.want)
			}
		})
	}
}

// names returns the base names of paths, with their folder's base name.
func names(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
	}
	return out
}

func TestResultFiles(t *testing.T) {
	l := newLocal(t, 0)
	c, ws := start(t, l, games.Vista.ID)
	att := filepath.Join(ws, session.Dir, "level_01_attempt_01")
	t.Run("start lists the initial files: metadata, PNG, text", func(t *testing.T) {
		last, err := c.LastStep()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(last.Files), " "); got != "level_01_attempt_01/initial_metadata.json level_01_attempt_01/initial_frame.png level_01_attempt_01/initial_frame.txt" {
			t.Fatalf("files %s", got)
		}
		if last.Action.Name != "RESET" || last.Metadata.StepIndex != 0 || last.Files[0] != filepath.Join(att, session.InitialMetadataFile) {
			t.Fatalf("last step %+v", last)
		}
	})
	sol := actionNames(games.Vista.Solution(0, 1))
	res := move(t, c, sol...)
	t.Run("a step lists metadata, then each frame PNG before text, final last, then the next level's initial files", func(t *testing.T) {
		if len(res.Files) < 8 || len(res.Files)%2 != 0 {
			t.Fatalf("files %q", names(res.Files))
		}
		k := res.Recorded.Step
		got := names(res.Files)
		if got[0] != "level_01_attempt_01/"+session.StepMetadataFile(k) ||
			got[len(got)-4] != "level_01_attempt_01/"+session.StepFinalFile(k) ||
			got[len(got)-5] != "level_01_attempt_01/"+session.StepFinalPNGFile(k) ||
			strings.Join(got[len(got)-3:], " ") != "level_02_attempt_01/initial_metadata.json level_02_attempt_01/initial_frame.png level_02_attempt_01/initial_frame.txt" {
			t.Fatalf("files %q", got)
		}
		for i := 1; i < len(got)-5; i += 2 {
			png, txt := got[i], got[i+1]
			if !strings.Contains(png, "_intermediate_") || strings.TrimSuffix(png, ".png") != strings.TrimSuffix(txt, ".txt") {
				t.Fatalf("frame files %q %q", png, txt)
			}
		}
		if len(res.Intermediates) != (len(got)-6)/2 {
			t.Fatalf("%d intermediates for files %q", len(res.Intermediates), got)
		}
		for _, f := range res.Files {
			if _, err := os.Stat(f); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("LastStep after a completed level is the next level's initial files with the completing step's metadata", func(t *testing.T) {
		last, err := c.LastStep()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(last.Files), " "); got != "level_02_attempt_01/initial_metadata.json level_02_attempt_01/initial_frame.png level_02_attempt_01/initial_frame.txt" {
			t.Fatalf("files %s", got)
		}
		if last.Metadata.StepIndex != len(sol) || last.Metadata.LevelsCompleted != 1 || last.Metadata.State != api.StateNotFinished {
			t.Fatalf("metadata %+v", last.Metadata)
		}
	})
}
