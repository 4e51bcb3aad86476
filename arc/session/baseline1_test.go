package session

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"evident/arc/frame"
	"evident/internal/testenv"
)

func TestPythonIndent(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"nested objects and lists are indented by two spaces, keys sorted, no final newline",
			`{"b":[1,2],"a":{"y":2,"x":1}}`, "{\n  \"a\": {\n    \"x\": 1,\n    \"y\": 2\n  },\n  \"b\": [\n    1,\n    2\n  ]\n}"},
		{"empty containers stay {} and []", `{"d":{},"l":[]}`, "{\n  \"d\": {},\n  \"l\": []\n}"},
		{"non-ASCII is escaped as ensure_ascii does, astral as a surrogate pair",
			`{"s":"é\u2028😀<&>\u007f"}`, "{\n  \"s\": \"\\u00e9\\u2028\\ud83d\\ude00<&>\\u007f\"\n}"},
		{"control characters use Python's short escapes", `{"s":"a\"\\\n\r\t\b\f\u0001"}`, "{\n  \"s\": \"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\"\n}"},
		{"floats are written as Python's repr", `[1.0,1e2,1e16,1e-5,0.5,-0,1234567.0]`, "[\n  1.0,\n  100.0,\n  1e+16,\n  1e-05,\n  0.5,\n  0,\n  1234567.0\n]"},
		{"literals are kept", `{"n":null,"t":true,"f":false}`, "{\n  \"f\": false,\n  \"n\": null,\n  \"t\": true\n}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pythonIndent([]byte(tc.in), true)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	t.Run("the output equals Python's json.dumps(json.loads(s), indent=2, sort_keys=True)", func(t *testing.T) {
		py := testenv.Python(t, "python3", "Python's json module is the reference")
		for _, tc := range tests {
			out, err := exec.Command(py, "-c", "import json,sys; sys.stdout.write(json.dumps(json.loads(sys.argv[1]), indent=2, sort_keys=True))", tc.in).Output()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := pythonIndent([]byte(tc.in), true)
			if !bytes.Equal(got, out) {
				t.Errorf("%s:\nevident %q\npython  %q", tc.name, got, out)
			}
		}
	})
}

func FuzzPythonIndent(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"é"}],"c":{}}`, `[1.5e300,-0.0,"\u0000"]`, `"x"`, `{"z":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		out, err := pythonIndent([]byte(s), true)
		if err != nil {
			return // numbers Go cannot parse
		}
		if bytes.Contains(out, []byte("Infinity")) {
			return
		}
		var a, b any
		if json.Unmarshal([]byte(s), &a) != nil {
			return
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("value changed:\n%s\n%s", s, out)
		}
	})
}

func TestRecorderBaseline1Form(t *testing.T) {
	up := Action{Name: "ACTION1"}
	reset := Action{Name: "RESET"}

	t.Run("a cell outside 0..15 is recorded as 5 in the text and black in the PNG, with one warning", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0))
		resp := g.resp(StateNotFinished, 0, 2, up, 1, 1, 1, 1)
		resp.Frames[0].Set(10, 20, frame.Invalid)
		resp.Frames[0].Set(11, 20, frame.Invalid)
		rec, err := r.RecordStep(resp)
		if err != nil {
			t.Fatal(err)
		}
		want := OutOfPaletteWarning(2, 0, 10, 20)
		if rec.Warning != want || !strings.Contains(want, "2 cell(s) outside the palette 0..15 (first: frame 0, x=10, y=20)") {
			t.Fatalf("warning %q, want %q", rec.Warning, want)
		}
		if resp.Frames[0].At(10, 20) != frame.Invalid {
			t.Error("the caller's frame was changed")
		}
		a, err := ReadAttempt(rec.Position.Dir)
		if err != nil {
			t.Fatalf("the session does not read back: %v", err)
		}
		if v := a.Steps[0].Final.At(10, 20); v != 5 {
			t.Errorf("recorded cell = %d, want 5", v)
		}
		f, _ := os.Open(a.Steps[0].FinalPNGPath)
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		if r, g, b, _ := img.At(10*8+4, 20*8+4).RGBA(); r|g|b != 0 {
			t.Errorf("PNG cell colour %x %x %x, want black", r>>8, g>>8, b>>8)
		}
		wantFiles := []string{"step_0001_final.txt", "step_0001_final.png", "step_0001_metadata.json"}
		var gotFiles []string
		for _, p := range rec.Files {
			gotFiles = append(gotFiles, filepath.Base(p))
		}
		if !reflect.DeepEqual(gotFiles, wantFiles) {
			t.Errorf("files %v, want %v", gotFiles, wantFiles)
		}
	})

	t.Run("an in-palette response gives no warning", func(t *testing.T) {
		r, _ := OpenRecorder(t.TempDir())
		g := &game{t: t}
		rec, err := r.RecordReset(g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0))
		if err != nil || rec.Warning != "" || len(rec.Files) != 3 {
			t.Fatalf("got %+v, %v", rec, err)
		}
	})

	t.Run("an 8×8 frame in a step response is refused naming the response and its size, nothing written", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0))
		resp := g.resp(StateNotFinished, 0, 2, up, 1, 1, 1, 1)
		small, _ := frame.New(8, 8)
		resp.Frames = append([]frame.Grid{small}, resp.Frames...)
		_, err := r.Step(resp)
		if err == nil || !strings.Contains(err.Error(), "server response: frame 0 of 2 is 8×8 cells, want 64×64") {
			t.Fatalf("got %v", err)
		}
		if got := listTree(t, root); len(got) != 3 {
			t.Errorf("files %v, want only the three initial files", got)
		}
	})

	t.Run("intermediates are numbered from 00 and the id is written as the action name without reasoning", func(t *testing.T) {
		root := t.TempDir()
		r, _ := OpenRecorder(root)
		g := &game{t: t}
		mustDo(t, r.Reset, g.resp(StateNotFinished, 0, 2, reset, 0, 0, 0, 0))
		resp := g.resp(StateNotFinished, 0, 2, up, 1, 1, 1, 1)
		resp.Frames = append([]frame.Grid{resp.Frames[0].Clone(), resp.Frames[0].Clone()}, resp.Frames...)
		resp.Metadata.ActionInput.ID = ActionIDFromCode(1)
		resp.Metadata.ActionInput.Extra = map[string]json.RawMessage{"reasoning": json.RawMessage(`"why"`)}
		resp.Metadata.Extra = map[string]json.RawMessage{"guid": json.RawMessage(`"g"`), "full_reset": json.RawMessage(`false`)}
		pos := mustDo(t, r.Step, resp)
		for _, n := range []string{"step_0001_intermediate_00.txt", "step_0001_intermediate_01.png", "step_0001_final.txt"} {
			if _, err := os.Stat(filepath.Join(pos.Dir, n)); err != nil {
				t.Error(err)
			}
		}
		b, _ := os.ReadFile(filepath.Join(pos.Dir, "step_0001_metadata.json"))
		want := "{\n  \"action_input\": {\n    \"data\": {},\n    \"id\": \"ACTION1\"\n  },\n  \"available_actions\": [\n    1,\n    2\n  ]," +
			"\n  \"levels_completed\": 0,\n  \"state\": \"NOT_FINISHED\",\n  \"step_index\": 2,\n  \"win_levels\": 2\n}"
		if string(b) != want {
			t.Fatalf("got\n%s\nwant\n%s", b, want)
		}
	})
}

func TestReadBaseline1Variants(t *testing.T) {
	t.Run("a step without its final frame right after a GAME_OVER step is skipped, as baseline1 skips it", func(t *testing.T) {
		root := copyFixture(t)
		put(t, root, "level_01_attempt_01/step_0003_final.txt", strings.Repeat(strings.Repeat("0", 64)+"\n", 64))
		put(t, root, "level_01_attempt_01/step_0004_metadata.json", `{"state":"GAME_OVER","levels_completed":0,"action_input":{"id":"ACTION1","data":{}}}`)
		s, err := Read(root)
		if err != nil {
			t.Fatal(err)
		}
		a := s.Level(1).Attempts[0]
		if len(a.Steps) != 3 || len(a.Skipped) != 1 || filepath.Base(a.Skipped[0]) != "step_0004_metadata.json" || a.Status != GameOver {
			t.Fatalf("%d steps, skipped %v, status %s", len(a.Steps), a.Skipped, a.Status)
		}
	})
	t.Run("a step with its frames after a GAME_OVER step is read, as baseline1 reads it", func(t *testing.T) {
		root := copyFixture(t)
		put(t, root, "level_01_attempt_01/step_0004_metadata.json", `{"state":"NOT_FINISHED","levels_completed":0,"action_input":{"id":"ACTION1","data":{}}}`)
		put(t, root, "level_01_attempt_01/step_0004_final.txt", strings.Repeat(strings.Repeat("0", 64)+"\n", 64))
		s, err := Read(root)
		if err != nil {
			t.Fatal(err)
		}
		if a := s.Level(1).Attempts[0]; len(a.Steps) != 4 || a.Steps[3].Index != 4 || a.Status != Running {
			t.Fatalf("%d steps, status %s", len(a.Steps), a.Status)
		}
	})
	t.Run("an 8×8 initial frame names the file and its size", func(t *testing.T) {
		root := copyFixture(t)
		put(t, root, "level_02_attempt_01/initial_frame.txt", strings.Repeat("00000000\n", 8))
		_, err := Read(root)
		if err == nil || !strings.Contains(err.Error(), "level_02_attempt_01/initial_frame.txt: session: frame is 8×8 cells") {
			t.Fatalf("got %v", err)
		}
	})
}
