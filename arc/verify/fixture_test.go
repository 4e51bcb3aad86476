package verify

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/arc/internal/dotgame"
)

var update = flag.Bool("update", false, "rewrite testdata/dotgame from the dot game and its reference model")

// fixtureDir is a complete workspace: the reference model's three files and
// the session of fixtureScript (see testdata/dotgame/README.md).
const fixtureDir = "testdata/dotgame"

// files lists the regular files under dir (slash paths), README.md and
// mismatch_frames/ left out.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == MismatchDir {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "README.md" {
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFixtureIsCurrent checks that the committed fixture is what the dot
// game and the reference model produce today (go test -update rewrites it),
// and that it verifies.
func TestFixtureIsCurrent(t *testing.T) {
	fresh := files(t, workspace(t, fixtureScript, nil))
	if *update {
		readme, _ := os.ReadFile(filepath.Join(fixtureDir, "README.md"))
		if err := os.RemoveAll(fixtureDir); err != nil {
			t.Fatal(err)
		}
		for rel, b := range fresh {
			p := filepath.Join(fixtureDir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if readme != nil {
			if err := os.WriteFile(filepath.Join(fixtureDir, "README.md"), readme, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	committed := files(t, fixtureDir)
	for rel, b := range fresh {
		if c, ok := committed[rel]; !ok {
			t.Errorf("%s/%s missing (go test ./arc/verify -run TestFixtureIsCurrent -update)", fixtureDir, rel)
		} else if !bytes.Equal(c, b) {
			t.Errorf("%s/%s differs from what the dot game writes now (-update rewrites it)", fixtureDir, rel)
		}
	}
	for rel := range committed {
		if _, ok := fresh[rel]; !ok {
			t.Errorf("%s/%s is not produced by the dot game (-update removes it)", fixtureDir, rel)
		}
	}
	for _, n := range dotgame.ModelFiles {
		if _, ok := committed[n]; !ok {
			t.Errorf("fixture lacks %s", n)
		}
	}

	var out bytes.Buffer
	if err := Verify(context.Background(), loadModel(t, fixtureDir), Options{Workspace: fixtureDir, Out: &out}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.HasSuffix(out.String(), "levels 1..2 verification passed\n") {
		t.Errorf("report:\n%s", out.String())
	}
}
