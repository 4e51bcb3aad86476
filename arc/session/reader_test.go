package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/frame"
)

const fixture = "testdata/client/session"

func readFixture(t *testing.T) *Session {
	t.Helper()
	s, err := Read(fixture)
	if err != nil {
		t.Fatalf("Read(%s): %v", fixture, err)
	}
	return s
}

func TestReadFixture(t *testing.T) {
	s := readFixture(t)

	t.Run("the session has levels 1 and 2 and model level 2", func(t *testing.T) {
		if len(s.Levels) != 2 || s.Levels[0].Index != 1 || s.Levels[1].Index != 2 || s.ModelLevel() != 2 {
			t.Fatalf("levels %+v, model level %d", s.Levels, s.ModelLevel())
		}
		if len(s.Level(1).Attempts) != 2 || len(s.Level(2).Attempts) != 1 || s.Level(3) != nil {
			t.Fatal("wrong attempt counts")
		}
		if !filepath.IsAbs(s.Root) {
			t.Fatalf("root %s is not absolute", s.Root)
		}
	})

	a1 := s.Level(1).Attempts[0]
	a2 := s.Level(1).Attempts[1]
	l2 := s.Level(2).Attempts[0]

	t.Run("attempt 1 of level 1 ends in GAME_OVER after three steps", func(t *testing.T) {
		if a1.Level != 1 || a1.Index != 1 || a1.Status != GameOver || len(a1.Steps) != 3 {
			t.Fatalf("got level %d attempt %d status %s with %d steps", a1.Level, a1.Index, a1.Status, len(a1.Steps))
		}
		if a1.InitialFrame.At(12, 40) != 9 || a1.InitialFrame.At(30, 20) != 14 || a1.InitialFrame.At(0, 0) != 3 {
			t.Fatal("initial frame lost the player, goal or border")
		}
		if a1.InitialMetadata.ActionInput == nil || a1.InitialMetadata.ActionInput.ID != ActionIDFromCode(0) {
			t.Fatalf("initial action_input %+v, want id 0 (RESET)", a1.InitialMetadata.ActionInput)
		}
		if !strings.HasSuffix(a1.InitialPNGPath, "level_01_attempt_01/initial_frame.png") {
			t.Fatalf("initial PNG path %q", a1.InitialPNGPath)
		}
	})

	steps := []struct {
		name          string
		step          Step
		action        Action
		observed      Status
		cell          frame.Cell
		value         uint8
		intermediates []uint8 // value of cell (15,47) in each intermediate frame
	}{
		{"step 1 decodes integer id 4 as ACTION4 and moves the player right", a1.Steps[0], Action{Name: "ACTION4"}, Running, frame.Cell{X: 19, Y: 43}, 9, nil},
		{"step 2 decodes the string id ACTION6 with its click and keeps two intermediate frames in order", a1.Steps[1], Action{Name: "ACTION6", X: 15, Y: 47}, Running, frame.Cell{X: 15, Y: 47}, 8, []uint8{11, 12}},
		{"step 3 is GAME_OVER although its frame files are missing", a1.Steps[2], Action{Name: "ACTION2"}, GameOver, frame.Cell{}, frame.Invalid, nil},
		{"an unpadded step with the lowercase id action1 moves the player up", a2.Steps[0], Action{Name: "ACTION1"}, Running, frame.Cell{X: 12, Y: 36}, 9, nil},
		{"the step that reaches levels_completed 1 is LEVEL_COMPLETED", a2.Steps[1], Action{Name: "ACTION5"}, LevelCompleted, frame.Cell{X: 5, Y: 5}, 9, nil},
		{"a level 2 step with levels_completed 1 is RUNNING and reads a CRLF frame", l2.Steps[0], Action{Name: "ACTION3"}, Running, frame.Cell{X: 2, Y: 5}, 9, nil},
	}
	for _, tc := range steps {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.step
			if st.Action != tc.action || st.Observed != tc.observed {
				t.Fatalf("action %v status %s, want %v %s", st.Action, st.Observed, tc.action, tc.observed)
			}
			if got := st.Final.At(tc.cell.X, tc.cell.Y); got != tc.value {
				t.Fatalf("final cell %v = %d, want %d", tc.cell, got, tc.value)
			}
			if len(st.Intermediates) != len(tc.intermediates) || len(st.IntermediatePaths) != len(tc.intermediates) {
				t.Fatalf("%d intermediates, want %d", len(st.Intermediates), len(tc.intermediates))
			}
			for i, v := range tc.intermediates {
				if st.Intermediates[i].At(15, 47) != v || st.IntermediatePNGPaths[i] == "" {
					t.Errorf("intermediate %d: cell (15,47) = %d, want %d (png %q)", i+1, st.Intermediates[i].At(15, 47), v, st.IntermediatePNGPaths[i])
				}
			}
			if st.Final.IsZero() != (st.FinalPath == "") {
				t.Errorf("final frame zero = %v but path %q", st.Final.IsZero(), st.FinalPath)
			}
		})
	}

	t.Run("the GAME_OVER step has no final frame and no paths", func(t *testing.T) {
		st := a1.Steps[2]
		if !st.Final.IsZero() || st.FinalPath != "" || st.FinalPNGPath != "" || st.Metadata.State != StateGameOver {
			t.Fatalf("got %+v", st)
		}
	})

	t.Run("the unpadded attempt reads lowercase blank-lined frames, a string RESET id and extra keys", func(t *testing.T) {
		if a2.Index != 2 || filepath.Base(a2.Dir) != "level_1_attempt_2" || a2.Status != LevelCompleted {
			t.Fatalf("got attempt %d dir %s status %s", a2.Index, a2.Dir, a2.Status)
		}
		if !frame.Equal(a2.InitialFrame, a1.InitialFrame) {
			t.Fatalf("lowercase initial frame differs in %d cells", frame.CountMismatches(a2.InitialFrame, a1.InitialFrame))
		}
		if a2.InitialPNGPath != "" {
			t.Fatalf("missing PNG gave path %q", a2.InitialPNGPath)
		}
		id := a2.InitialMetadata.ActionInput.ID
		if id.Code != 0 || id.Name != "RESET" || !id.Text {
			t.Fatalf("RESET id read as %+v", id)
		}
		if string(a2.InitialMetadata.Extra["guid"]) != `"g-7f3a"` {
			t.Fatalf("extra guid = %s", a2.InitialMetadata.Extra["guid"])
		}
		if string(a2.Steps[0].Metadata.ActionInput.Extra["reasoning"]) != `"up to the goal row"` {
			t.Fatalf("reasoning lost: %v", a2.Steps[0].Metadata.ActionInput.Extra)
		}
	})

	t.Run("the completing response is also the initial response of level 2 attempt 1", func(t *testing.T) {
		done := a2.Steps[1]
		if !frame.Equal(l2.InitialFrame, done.Final) {
			t.Fatal("level 2 initial frame differs from the completing step's final frame")
		}
		if l2.InitialMetadata.StepIndex != done.Metadata.StepIndex || l2.InitialMetadata.LevelsCompleted != 1 {
			t.Fatalf("level 2 initial metadata %+v", l2.InitialMetadata)
		}
		if ObservedStatus(l2.InitialMetadata, 2) != Running || l2.Status != Running {
			t.Fatal("level 2 does not read as RUNNING")
		}
	})

	t.Run("every recorded path is absolute and exists", func(t *testing.T) {
		for _, l := range s.Levels {
			for _, a := range l.Attempts {
				paths := []string{a.Dir, a.InitialMetadataPath, a.InitialFramePath}
				for _, st := range a.Steps {
					paths = append(paths, st.MetadataPath)
					paths = append(paths, st.IntermediatePaths...)
					if st.FinalPath != "" {
						paths = append(paths, st.FinalPath, st.FinalPNGPath)
					}
				}
				for _, p := range paths {
					if _, err := os.Stat(p); err != nil || !filepath.IsAbs(p) {
						t.Errorf("%q: %v", p, err)
					}
				}
			}
		}
	})
}

// copyFixture copies the fixture tree into a temporary session root.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "session")
	if err := os.CopyFS(dst, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, root string)
		want   []string // substrings of the error
	}{
		{"a gap in the step numbers names the missing step",
			func(t *testing.T, root string) { removeGlob(t, root, "level_01_attempt_01/step_0002_*") },
			[]string{"level_01_attempt_01", "step 2 missing", "step 3 exists"}},
		{"a RUNNING step without its final frame names the file",
			func(t *testing.T, root string) { remove(t, root, "level_01_attempt_01/step_0001_final.txt") },
			[]string{"level_01_attempt_01/step_0001_final.txt", "missing for a RUNNING step"}},
		{"a step without metadata names the metadata file",
			func(t *testing.T, root string) { remove(t, root, "level_02_attempt_01/step_0001_metadata.json") },
			[]string{"level_02_attempt_01/step_0001_metadata.json", "missing"}},
		{"a missing initial frame names the file",
			func(t *testing.T, root string) { remove(t, root, "level_02_attempt_01/initial_frame.txt") },
			[]string{"level_02_attempt_01/initial_frame.txt: session: missing"}},
		{"broken metadata JSON names file, line and column",
			func(t *testing.T, root string) {
				put(t, root, "level_02_attempt_01/step_0001_metadata.json", "{\"state\": \"NOT_FINISHED\",\n \"levels_completed\": 1,\n \"win_levels\": }\n")
			},
			[]string{"level_02_attempt_01/step_0001_metadata.json:3:16:", "invalid JSON"}},
		{"a metadata field of the wrong type names its line",
			func(t *testing.T, root string) {
				put(t, root, "level_02_attempt_01/step_0001_metadata.json", "{\"state\": \"NOT_FINISHED\",\n  \"levels_completed\": \"one\"}\n")
			},
			[]string{"step_0001_metadata.json:2:23:", "levels_completed: want an integer ≥ 0"}},
		{"a ragged frame names file and line",
			func(t *testing.T, root string) {
				put(t, root, "level_02_attempt_01/step_0001_final.txt", "000\n00\n")
			},
			[]string{"level_02_attempt_01/step_0001_final.txt:2:", "row has 2 cells, want 3"}},
		{"a step file whose number is not 4 digits is refused, as baseline1 reads only step_NNNN_ names",
			func(t *testing.T, root string) {
				put(t, root, "level_01_attempt_01/step_1_final.txt", "0\n")
			},
			[]string{"step_1_final.txt", "exactly 4 digits (step_0001_...)"}},
		{"the same attempt under padded and unpadded folder names is ambiguous",
			func(t *testing.T, root string) {
				if err := os.Mkdir(filepath.Join(root, "level_1_attempt_01"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			[]string{"same level 1 attempt 1 as folder"}},
		{"an 8×8 final frame names the file and its size",
			func(t *testing.T, root string) {
				put(t, root, "level_01_attempt_01/step_0001_final.txt", strings.Repeat("00000000\n", 8))
			},
			[]string{"level_01_attempt_01/step_0001_final.txt: session: frame is 8×8 cells (width×height), want 64×64"}},
		{"ACTION6 without y names the metadata file",
			func(t *testing.T, root string) {
				put(t, root, "level_01_attempt_01/step_0002_metadata.json", `{"state":"NOT_FINISHED","levels_completed":0,"action_input":{"id":6,"data":{"x":15}}}`)
			},
			[]string{"step_0002_metadata.json", `missing "y"`}},
		{"ACTION6 off the 64×64 screen is refused",
			func(t *testing.T, root string) {
				put(t, root, "level_01_attempt_01/step_0002_metadata.json", `{"state":"NOT_FINISHED","levels_completed":0,"action_input":{"id":"ACTION6","data":{"x":15,"y":64}}}`)
			},
			[]string{"step_0002_metadata.json", "data.y of ACTION6: want an integer 0..63"}},
		{"an unknown action id is refused",
			func(t *testing.T, root string) {
				put(t, root, "level_02_attempt_01/step_0001_metadata.json", `{"state":"NOT_FINISHED","levels_completed":1,"action_input":{"id":9}}`)
			},
			[]string{"step_0001_metadata.json", "action_input.id 9 is not RESET or ACTION1..ACTION7"}},
		{"a step numbered 0 is refused",
			func(t *testing.T, root string) {
				put(t, root, "level_02_attempt_01/step_0000_metadata.json", `{}`)
			},
			[]string{"step_0000_metadata.json", "count from 1"}},
		{"an intermediate PNG without its text frame is refused on a RUNNING step",
			func(t *testing.T, root string) { remove(t, root, "level_01_attempt_01/step_0002_intermediate_02.txt") },
			[]string{"step_0002_intermediate_02.png", "PNG without its .txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := copyFixture(t)
			tc.mutate(t, root)
			_, err := Read(root)
			if err == nil {
				t.Fatal("Read succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}

	t.Run("a missing session folder is reported as not existing", func(t *testing.T) {
		_, err := Read(filepath.Join(t.TempDir(), "nope"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("an empty session folder has no levels", func(t *testing.T) {
		s, err := Read(t.TempDir())
		if err != nil || len(s.Levels) != 0 || s.ModelLevel() != 0 {
			t.Fatalf("got %+v, %v", s, err)
		}
	})
	t.Run("a GAME_OVER step may also lack some intermediate frames", func(t *testing.T) {
		root := copyFixture(t)
		put(t, root, "level_01_attempt_01/step_0003_intermediate_01.png", "")
		a, err := ReadAttempt(filepath.Join(root, "level_01_attempt_01"))
		if err != nil || len(a.Steps[2].Intermediates) != 0 {
			t.Fatalf("got %v", err)
		}
	})
}

func put(t *testing.T, root, rel, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(root, rel)); err != nil {
		t.Fatal(err)
	}
}

func removeGlob(t *testing.T, root, pattern string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("glob %s: %v", pattern, err)
	}
	for _, p := range m {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadInitialFullFrame(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat(strings.Repeat("3", 80)+"\n", 70)
	if err := os.WriteFile(filepath.Join(dir, "level_2.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("an 80×70 full frame larger than the screen is read from the unpadded name", func(t *testing.T) {
		g, ok, err := ReadInitialFullFrame(dir, 2)
		if err != nil || !ok || g.Width() != 80 || g.Height() != 70 {
			t.Fatalf("got %d×%d ok=%v err=%v", g.Width(), g.Height(), ok, err)
		}
	})
	t.Run("a level without a full frame gives ok false and no error", func(t *testing.T) {
		if _, ok, err := ReadInitialFullFrame(dir, 3); ok || err != nil {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
	})
}
