package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/frame"
	"evident/internal/located"
)

func TestParseErrorIsTheModulesLocatedError(t *testing.T) {
	t.Run("the column counts runes, not bytes: Ï is one column", func(t *testing.T) {
		// As `{"state": "WIN", "levels_completed": -1}` (column 38), with a
		// two-byte letter before the value.
		_, err := ParseMetadata([]byte(`{"state": "WÏN", "levels_completed": -1}`))
		e, ok := located.As(err)
		if !ok || e.Line != 1 || e.Column != 38 || e.Error() != "line 1, column 38: session: levels_completed: want an integer ≥ 0, got \"-1\"" {
			t.Fatalf("%v (%+v)", err, e)
		}
	})
	t.Run("a metadata file's error reads file:line:col: session: msg", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "step_0001_metadata.json")
		if err := os.WriteFile(path, []byte("{\"state\": \"WIN\",\n\"levels_completed\": \"x\"}"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readMetadataFile(path)
		want := path + `:2:21: session: levels_completed: want an integer ≥ 0, got "\"x\""`
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	})
	t.Run("a frame's parse error is the same type", func(t *testing.T) {
		_, err := frame.ParseASCII([]byte("00\n0Z\n"))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || pe.Column != 2 || !strings.HasPrefix(pe.Reason, "frame: invalid character 'Z'") {
			t.Fatalf("%v", err)
		}
		if err.Error() != "line 2, column 2: frame: invalid character 'Z', want a hex digit 0-9 or A-F" {
			t.Fatalf("in-memory form %q", err.Error())
		}
	})
}
