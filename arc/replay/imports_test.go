package replay

import (
	"go/build"
	"slices"
	"testing"
)

// The package docs' "must not import" rules of the replay users, checked on
// their import lists (go/build reads the files' import blocks).
func TestImportRules(t *testing.T) {
	for _, c := range []struct {
		dir       string
		forbidden []string
	}{
		{".", []string{"evident/arc/client", "evident/arc/verify", "evident/arc/planexec", "evident/arc/agent", "evident/arc/games", "net/http"}},
		{"../verify", []string{"evident/arc/client", "evident/arc/planexec", "net/http"}},
		{"../planexec", []string{"evident/arc/verify", "net/http"}},
	} {
		pkg, err := build.ImportDir(c.dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		for _, f := range c.forbidden {
			if slices.Contains(pkg.Imports, f) {
				t.Errorf("%s imports %s, which its package doc rules out", c.dir, f)
			}
		}
		if c.dir != "." && !slices.Contains(pkg.Imports, "evident/arc/replay") {
			t.Errorf("%s does not use evident/arc/replay: its replay and mismatch code is a copy again", c.dir)
		}
	}
}
