package session

import (
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"evident/arc/frame"
)

// fixtureResponses turns the fixture's records back into the responses a
// client would have received, in order: RESET, then each step, per attempt.
type recorded struct {
	reset bool
	resp  Response
}

func fixtureResponses(t *testing.T) []recorded {
	t.Helper()
	s := readFixture(t)
	var out []recorded
	for _, l := range s.Levels {
		for _, a := range l.Attempts {
			if a.Level == 1 { // level 2 attempt 1 is opened by the completing step
				out = append(out, recorded{true, Response{Frames: []frame.Grid{a.InitialFrame}, Metadata: a.InitialMetadata}})
			}
			for _, st := range a.Steps {
				frames := slices.Clone(st.Intermediates)
				if !st.Final.IsZero() {
					frames = append(frames, st.Final)
				}
				out = append(out, recorded{false, Response{Frames: frames, Metadata: st.Metadata}})
			}
		}
	}
	return out
}

// listTree returns every file under root as slash paths, sorted.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRecorderRoundTrip(t *testing.T) {
	root := filepath.Join(t.TempDir(), "client", "session")
	r, err := OpenRecorder(root)
	if err != nil {
		t.Fatal(err)
	}
	var positions []Position
	for i, rec := range fixtureResponses(t) {
		var pos Position
		if rec.reset {
			pos, err = r.Reset(rec.resp)
		} else {
			pos, err = r.Step(rec.resp)
		}
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		positions = append(positions, pos)
	}

	t.Run("the recorder moves through the attempts like the game", func(t *testing.T) {
		got := make([][3]int, len(positions))
		for i, p := range positions {
			got[i] = [3]int{p.Level, p.Attempt, p.Step}
		}
		want := [][3]int{{1, 1, 0}, {1, 1, 1}, {1, 1, 2}, {1, 1, 3}, {1, 2, 0}, {1, 2, 1}, {2, 1, 0}, {2, 1, 1}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("positions %v, want %v", got, want)
		}
	})

	t.Run("the recorder writes exactly the padded layout of the spec", func(t *testing.T) {
		want := []string{
			"level_01_attempt_01/initial_frame.png", "level_01_attempt_01/initial_frame.txt", "level_01_attempt_01/initial_metadata.json",
			"level_01_attempt_01/step_0001_final.png", "level_01_attempt_01/step_0001_final.txt", "level_01_attempt_01/step_0001_metadata.json",
			"level_01_attempt_01/step_0002_final.png", "level_01_attempt_01/step_0002_final.txt",
			"level_01_attempt_01/step_0002_intermediate_00.png", "level_01_attempt_01/step_0002_intermediate_00.txt",
			"level_01_attempt_01/step_0002_intermediate_01.png", "level_01_attempt_01/step_0002_intermediate_01.txt",
			"level_01_attempt_01/step_0002_metadata.json",
			"level_01_attempt_01/step_0003_metadata.json",
			"level_01_attempt_02/initial_frame.png", "level_01_attempt_02/initial_frame.txt", "level_01_attempt_02/initial_metadata.json",
			"level_01_attempt_02/step_0001_final.png", "level_01_attempt_02/step_0001_final.txt", "level_01_attempt_02/step_0001_metadata.json",
			"level_01_attempt_02/step_0002_final.png", "level_01_attempt_02/step_0002_final.txt", "level_01_attempt_02/step_0002_metadata.json",
			"level_02_attempt_01/initial_frame.png", "level_02_attempt_01/initial_frame.txt", "level_02_attempt_01/initial_metadata.json",
			"level_02_attempt_01/step_0001_final.png", "level_02_attempt_01/step_0001_final.txt", "level_02_attempt_01/step_0001_metadata.json",
		}
		if got := listTree(t, root); !reflect.DeepEqual(got, want) {
			t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	got, err := Read(root)
	if err != nil {
		t.Fatalf("Read of the recorded tree: %v", err)
	}
	want := readFixture(t)

	t.Run("reading the recorded tree gives the fixture's frames, metadata, actions and statuses", func(t *testing.T) {
		if len(got.Levels) != len(want.Levels) {
			t.Fatalf("%d levels, want %d", len(got.Levels), len(want.Levels))
		}
		for li := range want.Levels {
			for ai, wa := range want.Levels[li].Attempts {
				ga := got.Levels[li].Attempts[ai]
				where := filepath.Base(ga.Dir)
				if ga.Level != wa.Level || ga.Index != wa.Index || ga.Status != wa.Status || len(ga.Steps) != len(wa.Steps) {
					t.Fatalf("%s: %d/%d %s %d steps, want %d/%d %s %d", where, ga.Level, ga.Index, ga.Status, len(ga.Steps), wa.Level, wa.Index, wa.Status, len(wa.Steps))
				}
				if !frame.Equal(ga.InitialFrame, wa.InitialFrame) || !reflect.DeepEqual(ga.InitialMetadata, wa.InitialMetadata.Baseline1()) {
					t.Errorf("%s: initial response differs", where)
				}
				for k, ws := range wa.Steps {
					gs := ga.Steps[k]
					if gs.Action != ws.Action || gs.Observed != ws.Observed || !frame.Equal(gs.Final, ws.Final) ||
						!reflect.DeepEqual(gs.Metadata, ws.Metadata.Baseline1()) || len(gs.Intermediates) != len(ws.Intermediates) {
						t.Errorf("%s step %d differs: %+v vs %+v", where, k+1, gs.Action, ws.Action)
					}
					for i := range ws.Intermediates {
						if !frame.Equal(gs.Intermediates[i], ws.Intermediates[i]) {
							t.Errorf("%s step %d intermediate %d differs", where, k+1, i+1)
						}
					}
				}
			}
		}
	})

	t.Run("a string id and an integer id are both written as the action name, as baseline1 writes them", func(t *testing.T) {
		b1, _ := os.ReadFile(filepath.Join(root, "level_01_attempt_01", "step_0002_metadata.json"))
		b2, _ := os.ReadFile(filepath.Join(root, "level_01_attempt_01", "step_0001_metadata.json"))
		if !strings.Contains(string(b1), `"id": "ACTION6"`) || !strings.Contains(string(b2), `"id": "ACTION4"`) {
			t.Fatalf("got\n%s\n%s", b1, b2)
		}
	})

	t.Run("the recorded PNG decodes to the frame at 8× scale", func(t *testing.T) {
		a := got.Level(1).Attempts[0]
		f, err := os.Open(a.Steps[1].FinalPNGPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := decodePNGFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, g, b, _ := img.At(15*8+3, 47*8+5).RGBA()
		if img.Bounds().Dx() != 512 || r>>8 != 0xF9 || g>>8 != 0x3C || b>>8 != 0x31 {
			t.Fatalf("bounds %v colour %x %x %x, want 512 wide and F93C31", img.Bounds(), r>>8, g>>8, b>>8)
		}
	})

	t.Run("after the level 2 step the recorder is still open for more steps", func(t *testing.T) {
		pos, err := r.Step(Response{Frames: []frame.Grid{want.Level(2).Attempts[0].InitialFrame},
			Metadata: Metadata{StepIndex: 8, State: StateNotFinished, LevelsCompleted: 1, WinLevels: 2, ActionInput: mustInput(t, Action{Name: "ACTION4"})}})
		if err != nil || pos.Level != 2 || pos.Attempt != 1 || pos.Step != 2 {
			t.Fatalf("got %+v, %v", pos, err)
		}
	})
}

func mustInput(t *testing.T, a Action) *ActionInput {
	t.Helper()
	ai, err := a.Input()
	if err != nil {
		t.Fatal(err)
	}
	return &ai
}

// game is a tiny scripted game for recorder tests: 64×64 frames whose
// top-left 2×2 cells are given (the rest 0), metadata built from the step
// counter.
type game struct {
	t     *testing.T
	index int
}

func (g *game) resp(state string, done, win int, a Action, cells ...uint8) Response {
	g.t.Helper()
	var frames []frame.Grid
	if len(cells) > 0 {
		f, err := frame.New(frame.GameSide, frame.GameSide)
		if err != nil {
			g.t.Fatal(err)
		}
		for i, v := range cells {
			f.Set(i%2, i/2, v)
		}
		frames = append(frames, f)
	}
	g.index++
	return Response{Frames: frames, Metadata: Metadata{StepIndex: g.index, State: state, LevelsCompleted: done, WinLevels: win,
		AvailableActions: []int{1, 2}, ActionInput: mustInput(g.t, a)}}
}

func TestRecorderRules(t *testing.T) {
	reset := Action{Name: "RESET"}
	up := Action{Name: "ACTION1"}

	t.Run("a step before any RESET is refused with ErrNoAttempt", func(t *testing.T) {
		r, _ := OpenRecorder(t.TempDir())
		g := &game{t: t}
		if _, err := r.Step(g.resp(StateNotFinished, 0, 2, up, 0, 0, 0, 0)); !errors.Is(err, ErrNoAttempt) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("after GAME_OVER only a RESET is accepted, and it opens the next attempt", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0))
		mustDo(t, r.Step, g.resp(StateGameOver, 0, 2, up))
		_, err := r.Step(g.resp(StateNotFinished, 0, 2, up, 0, 0, 0, 0))
		if err == nil || !strings.Contains(err.Error(), "level_01_attempt_01 ended with GAME_OVER at step 1") {
			t.Fatalf("got %v", err)
		}
		pos := mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0))
		if pos.Level != 1 || pos.Attempt != 2 || filepath.Base(pos.Dir) != "level_01_attempt_02" {
			t.Fatalf("got %+v", pos)
		}
	})

	t.Run("winning the last level opens no further level and refuses more steps", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 1, reset, 0, 0, 0, 0))
		pos := mustDo(t, r.Step, g.resp(StateWin, 1, 1, up, 1, 1, 1, 1))
		if pos.Level != 1 || pos.Step != 1 {
			t.Fatalf("got %+v", pos)
		}
		if _, err := os.Stat(filepath.Join(root, "level_02_attempt_01")); !os.IsNotExist(err) {
			t.Fatal("a level 2 folder was created after the win")
		}
		if _, err := r.Step(g.resp(StateWin, 1, 1, up, 1, 1, 1, 1)); err == nil || !strings.Contains(err.Error(), "won game") {
			t.Fatalf("got %v", err)
		}
		s, err := Read(root)
		if err != nil || s.Level(1).Attempts[0].Status != LevelCompleted {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("a completion whose next level folder exists takes the next free attempt", func(t *testing.T) {
		root := t.TempDir()
		r2, err := OpenRecorder(root)
		if err != nil {
			t.Fatal(err)
		}
		g := &game{t: t}
		mustDo(t, r2.Reset, g.resp(StateNotFinished, 0, 3, reset, 0, 0, 0, 0))
		if err := os.Mkdir(filepath.Join(root, "level_2_attempt_1"), 0o755); err != nil {
			t.Fatal(err)
		}
		pos := mustDo(t, r2.Step, g.resp(StateNotFinished, 1, 3, up, 2, 2, 2, 2))
		if pos.Level != 2 || pos.Attempt != 2 || filepath.Base(pos.Dir) != "level_02_attempt_02" {
			t.Fatalf("got %+v", pos)
		}
	})

	t.Run("bad responses are refused before anything is written", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		if _, err := r.Reset(Response{Metadata: Metadata{State: StateNotFinished}}); err == nil {
			t.Error("RESET without frames accepted")
		}
		bad := g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0)
		small, _ := frame.New(8, 8)
		if _, err := r.Reset(Response{Frames: []frame.Grid{small}, Metadata: bad.Metadata}); err == nil ||
			!strings.Contains(err.Error(), "server response: frame 0 of 1 is 8×8 cells, want 64×64") {
			t.Errorf("8×8 frame: %v", err)
		}
		if _, err := r.Reset(Response{Frames: bad.Frames[:1], Metadata: Metadata{}}); err == nil {
			t.Error("metadata without state accepted")
		}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0))
		if _, err := r.Step(g.resp(StateNotFinished, 0, 2, up)); err == nil {
			t.Error("RUNNING step without frames accepted")
		}
		if got := listTree(t, root); len(got) != 3 {
			t.Errorf("files %v, want only the three initial files", got)
		}
	})
}

func mustDo(t *testing.T, f func(Response) (Position, error), resp Response) Position {
	t.Helper()
	pos, err := f(resp)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

func TestOpenRecorderResumes(t *testing.T) {
	reset := Action{Name: "RESET"}
	up := Action{Name: "ACTION1"}

	t.Run("reopening continues the attempt with the newest step_index", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 3, reset, 0, 0, 0, 0))
		mustDo(t, r.Step, g.resp(StateNotFinished, 1, 3, up, 1, 1, 1, 1)) // completes level 1 → level 2 attempt 1
		mustDo(t, r.Step, g.resp(StateNotFinished, 1, 3, up, 2, 1, 1, 1))
		// Whole-game reset: back to level 1, newer than level 2's records.
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 3, reset, 0, 0, 0, 0))
		mustDo(t, r.Step, g.resp(StateNotFinished, 0, 3, up, 3, 0, 0, 0))

		r2, err := OpenRecorder(root)
		if err != nil {
			t.Fatal(err)
		}
		if p := r2.Position(); p.Level != 1 || p.Attempt != 2 || p.Step != 1 {
			t.Fatalf("resumed at %+v, want level 1 attempt 2 step 1", p)
		}
		pos := mustDo(t, r2.Step, g.resp(StateNotFinished, 0, 3, up, 3, 3, 0, 0))
		if pos.Step != 2 {
			t.Fatalf("got %+v", pos)
		}
	})

	t.Run("reopening right after a completion continues in the new level", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 3, reset, 0, 0, 0, 0))
		mustDo(t, r.Step, g.resp(StateNotFinished, 1, 3, up, 1, 1, 1, 1))
		r2, err := OpenRecorder(root)
		if err != nil {
			t.Fatal(err)
		}
		if p := r2.Position(); p.Level != 2 || p.Attempt != 1 || p.Step != 0 {
			t.Fatalf("resumed at %+v", p)
		}
	})

	t.Run("reopening after GAME_OVER still demands a RESET", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 3, reset, 0, 0, 0, 0))
		mustDo(t, r.Step, g.resp(StateGameOver, 0, 3, up))
		r2, err := OpenRecorder(root)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r2.Step(g.resp(StateNotFinished, 0, 3, up, 0, 0, 0, 0)); err == nil {
			t.Fatal("step after GAME_OVER accepted")
		}
	})

	t.Run("the fixture resumes in level 2 attempt 1 after step 1", func(t *testing.T) {
		r, err := OpenRecorder(copyFixture(t))
		if err != nil {
			t.Fatal(err)
		}
		if p := r.Position(); p.Level != 2 || p.Attempt != 1 || p.Step != 1 {
			t.Fatalf("resumed at %+v", p)
		}
	})

	t.Run("a broken last metadata file names the file", func(t *testing.T) {
		root := copyFixture(t)
		put(t, root, "level_02_attempt_01/step_0001_metadata.json", "{")
		_, err := OpenRecorder(root)
		if err == nil || !strings.Contains(err.Error(), "level_02_attempt_01/step_0001_metadata.json:1:2:") {
			t.Fatalf("got %v", err)
		}
	})
}

func decodePNGFile(r io.Reader) (image.Image, error) { return png.Decode(r) }
