package numbered

import (
	"os"
	"path/filepath"
	"testing"
)

func TestClaim(t *testing.T) {
	t.Run("a missing root is made and the first folder is 1", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "mismatch_frames")
		dir, n, err := Claim(root)
		if err != nil || n != 1 || dir != filepath.Join(root, "1") {
			t.Fatalf("%s %d %v", dir, n, err)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("%s not made: %v", dir, err)
		}
	})
	t.Run("the next number follows the highest numbered folder, ignoring files and other names", func(t *testing.T) {
		root := t.TempDir()
		for _, d := range []string{"2", "007", "x9", "1234567890"} {
			os.Mkdir(filepath.Join(root, d), 0o755)
		}
		os.WriteFile(filepath.Join(root, "40"), nil, 0o644) // a file, not a folder
		dir, n, err := Claim(root)
		if err != nil || n != 8 || dir != filepath.Join(root, "8") {
			t.Fatalf("%s %d %v", dir, n, err)
		}
		if _, n2, _ := Claim(root); n2 != 9 {
			t.Fatalf("second claim got %d, want 9", n2)
		}
	})
	t.Run("a root that is a file is an error", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "f")
		os.WriteFile(root, nil, 0o644)
		if _, _, err := Claim(root); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		ok   bool
	}{{"1", 1, true}, {"007", 7, true}, {"999999999", 999999999, true}, {"1234567890", 0, false}, {"", 0, false}, {"-1", 0, false}, {"1e3", 0, false}} {
		if n, ok := Parse(c.name); n != c.n || ok != c.ok {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", c.name, n, ok, c.n, c.ok)
		}
	}
}
