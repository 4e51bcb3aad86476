package frame

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestASCIIRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // canonical form written back
		w, h  int
	}{
		{"a canonical 3×2 frame reads and writes back byte for byte", "0F1\nA9C\n", "0F1\nA9C\n", 3, 2},
		{"lowercase digits read as the same colours and write back uppercase", "0f1\na9c\n", "0F1\nA9C\n", 3, 2},
		{"blank lines before, between and after rows are skipped", "\n\n0F1\n\n   \nA9C\n\n", "0F1\nA9C\n", 3, 2},
		{"Windows line endings and a missing final newline are accepted", "0F1\r\nA9C", "0F1\nA9C\n", 3, 2},
		{"spaces and tabs around a row are ignored", "  0F1\t\n\tA9C  \n", "0F1\nA9C\n", 3, 2},
		{"a single cell is a 1×1 frame", "5\n", "5\n", 1, 1},
		{"a frame taller than wide keeps its shape", "E\nE\nE\nE\n", "E\nE\nE\nE\n", 1, 4},
		{"every colour 0 through F survives", "0123456789ABCDEF\n", "0123456789ABCDEF\n", 16, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ParseASCII([]byte(tc.input))
			if err != nil {
				t.Fatalf("ParseASCII: %v", err)
			}
			if g.Width() != tc.w || g.Height() != tc.h {
				t.Fatalf("size %d×%d, want %d×%d", g.Width(), g.Height(), tc.w, tc.h)
			}
			if got := g.String(); got != tc.want {
				t.Fatalf("written back as %q, want %q", got, tc.want)
			}
			g2, err := ParseASCII([]byte(g.String()))
			if err != nil || !Equal(g, g2) {
				t.Fatalf("second round trip differs: %v", err)
			}
		})
	}

	t.Run("a 64×64 game frame round-trips through a file", func(t *testing.T) {
		g := gamePattern(t)
		path := filepath.Join(t.TempDir(), "step_0001_final.txt")
		if err := g.WriteASCIIFile(path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != 64*65 {
			t.Fatalf("file has %d bytes, want 64 rows × (64 digits + newline) = 4160", len(data))
		}
		lines := strings.Split(string(data), "\n")
		if lines[0] != strings.Repeat("3", 64) || lines[1][:17] != "30123456789ABCDEF" || lines[40][12:16] != "9999" {
			t.Fatalf("unexpected rows: %q / %q / %q", lines[0], lines[1], lines[40])
		}
		back, err := ReadASCIIFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(g, back) {
			t.Fatalf("read back %d mismatching cells", CountMismatches(g, back))
		}
		if back.At(13, 41) != 9 || back.At(1, 1) != 0 || back.At(16, 1) != 15 {
			t.Fatalf("cells (13,41)=%d (1,1)=%d (16,1)=%d, want 9 0 15", back.At(13, 41), back.At(1, 1), back.At(16, 1))
		}
	})

	t.Run("out-of-palette cells are written as question marks that do not read back", func(t *testing.T) {
		g, err := FromRows([][]int{{1, 16, -1}, {256, 15, 0}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := g.String(), "1??\n?F0\n"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if _, err := ParseASCII([]byte(g.String())); err == nil {
			t.Fatal("ParseASCII accepted '?'")
		}
	})
}

func TestParseASCIIErrors(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		line, col int
		msg       string
	}{
		{"a letter beyond F names its line and column", "012\n0G2\n", 2, 2, `invalid character 'G'`},
		{"a space inside a row is not a cell", "0 12\n", 1, 2, `invalid character ' '`},
		{"the column counts the skipped indentation", "012\n  01x\n", 2, 5, `invalid character 'x'`},
		{"a shorter row names its line", "012\n\n01\n", 3, 0, "row has 2 cells, want 3"},
		{"a longer row names its line", "01\n012\n", 2, 0, "row has 3 cells, want 2"},
		{"empty input has no rows", "", 0, 0, "no rows"},
		{"only blank lines has no rows", "\n \r\n\t\n", 0, 0, "no rows"},
		{"a NUL byte is rejected", "0\x001\n", 1, 2, `invalid character '\x00'`},
		{"a row wider than MaxSide is rejected", strings.Repeat("0", MaxSide+1), 1, 0, "at most 4096"},
		{"more rows than MaxSide are rejected", strings.Repeat("0\n", MaxSide+1), MaxSide + 1, 0, "more than 4096 rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseASCII([]byte(tc.input))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line != tc.line || pe.Column != tc.col || !strings.Contains(pe.Reason, tc.msg) {
				t.Fatalf("got line %d col %d msg %q, want line %d col %d msg containing %q", pe.Line, pe.Column, pe.Reason, tc.line, tc.col, tc.msg)
			}
		})
	}

	t.Run("a file error names the file, line and column", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "initial_frame.txt")
		if err := os.WriteFile(path, []byte("00\n0Z\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadASCIIFile(path)
		if err == nil || err.Error() != path+":2:2: frame: invalid character 'Z', want a hex digit 0-9 or A-F" {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("a missing file is reported as not existing", func(t *testing.T) {
		_, err := ReadASCIIFile(filepath.Join(t.TempDir(), "nope.txt"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got %v, want fs.ErrNotExist", err)
		}
	})
}

func TestGridConstructors(t *testing.T) {
	t.Run("New rejects zero and oversized sides", func(t *testing.T) {
		for _, wh := range [][2]int{{0, 5}, {5, 0}, {-1, 1}, {MaxSide + 1, 1}, {1, MaxSide + 1}} {
			if _, err := New(wh[0], wh[1]); !errors.Is(err, ErrSize) {
				t.Errorf("New(%d, %d) = %v, want ErrSize", wh[0], wh[1], err)
			}
		}
	})
	t.Run("FromRows rejects ragged rows naming the row", func(t *testing.T) {
		_, err := FromRows([][]int16{{1, 2}, {3, 4}, {5}})
		if !errors.Is(err, ErrSize) || !strings.Contains(err.Error(), "row 2 has 1 cells") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("FromRows maps values outside 0..15 to Invalid", func(t *testing.T) {
		g, err := FromRows([][]int64{{0, 15, 16, -1, 1 << 40}})
		if err != nil {
			t.Fatal(err)
		}
		want := []uint8{0, 15, Invalid, Invalid, Invalid}
		for x, v := range want {
			if g.At(x, 0) != v {
				t.Errorf("cell %d = %d, want %d", x, g.At(x, 0), v)
			}
		}
		if g.InPalette() {
			t.Error("InPalette reported true")
		}
	})
	t.Run("At and Set outside the grid do nothing", func(t *testing.T) {
		g := filled(t, 2, 2, 7)
		if g.At(2, 0) != Invalid || g.At(0, -1) != Invalid || g.Set(5, 5, 1) || g.Row(2) != nil {
			t.Fatal("out-of-range access not refused")
		}
		if !g.Set(1, 1, 3) || g.At(1, 1) != 3 || g.Row(1)[1] != 3 {
			t.Fatal("in-range Set lost")
		}
	})
	t.Run("Clone shares nothing with the original", func(t *testing.T) {
		g := filled(t, 2, 2, 7)
		c := g.Clone()
		c.Set(0, 0, 1)
		if g.At(0, 0) != 7 {
			t.Fatal("Clone aliases the original")
		}
	})
	t.Run("FromCells copies and checks the length", func(t *testing.T) {
		src := []uint8{1, 2, 3, 4, 5, 6}
		g, err := FromCells(3, 2, src)
		if err != nil {
			t.Fatal(err)
		}
		src[0] = 9
		if g.At(0, 0) != 1 || g.At(2, 1) != 6 {
			t.Fatal("FromCells did not copy row-major")
		}
		if _, err := FromCells(4, 2, src); !errors.Is(err, ErrSize) {
			t.Fatalf("got %v, want ErrSize", err)
		}
	})
}
