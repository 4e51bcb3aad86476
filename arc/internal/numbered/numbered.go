// Package numbered claims numbered folders: root/1, root/2, … — the layout
// of <workspace>/mismatch_frames (frame.WriteMismatchArtifacts) and
// <workspace>/aux_planner_frames (verify.RunAuxPlanner), both baseline1's
// mismatch_artifacts.py layout (spec arc.md "Verification"). It owns the
// numbering rule only and imports nothing of the module.
//
// Decisions where the spec is silent: numbering starts at 1 (levels,
// attempts and steps all count from 1); only names of 1 to 9 decimal digits
// count as numbers (so "007" is 7 and "1e3" or a 10-digit name is ignored);
// a folder is claimed with an exclusive mkdir, so two runs never share one.
package numbered

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// MaxTries bounds how many numbers Claim tries past the highest one before
// it gives up.
const MaxTries = 1 << 20

// Claim creates root if needed and then the folder root/<N>, N the highest
// numbered folder there plus one (1 when there is none); a number taken
// meanwhile by another run moves N on. It returns the absolute path of the
// new folder and N. Errors are the os errors as they are (callers add their
// prefix), or "no free folder in <root> after MaxTries tries".
func Claim(root string) (string, int, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", 0, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", 0, err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return "", 0, err
	}
	highest := 0
	for _, e := range entries {
		if n, ok := Parse(e.Name()); ok && e.IsDir() && n > highest {
			highest = n
		}
	}
	for n := highest + 1; n <= highest+MaxTries; n++ {
		dir := filepath.Join(abs, strconv.Itoa(n))
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		return dir, n, nil
	}
	return "", 0, fmt.Errorf("no free folder in %s after %d tries", abs, MaxTries)
}

// Parse reads a folder name of 1 to 9 decimal digits as its number.
func Parse(name string) (int, bool) {
	if name == "" || len(name) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
