package main

// Checks the judge command makes before it reads or writes anything, so that
// a mistake in the flags fails at once instead of hanging, failing late or
// destroying a file.

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v3"
)

// judgeOutputs are the judge flags that name files it writes, and
// judgeInputs those it reads (or, for --db and --cache, keeps) and must not
// overwrite.
var (
	judgeOutputs = []string{"out", "rejects", "summary-log"}
	judgeInputs  = []string{"turns", "cards", "lexicon", "endings", "db", "cache"}
)

// checkJudgeFlags checks the judge's file flags: --tmp is a directory, the
// tables read twice are regular files, and no output names the same file as
// another output or an input.
func checkJudgeFlags(cmd *cli.Command) error {
	if w := cmd.Int("workers"); w < 0 {
		return fmt.Errorf("--workers %d: want 0 (all cores) or more", w)
	}
	if err := checkTempDir(cmd.String("tmp")); err != nil {
		return err
	}
	for _, t := range []struct{ flag, table string }{{"turns", "turn table"}, {"cards", "card table"}} {
		if err := checkRereadable(t.flag, t.table, cmd.String(t.flag)); err != nil {
			return err
		}
	}
	return checkOverlaps(cmd)
}

// checkTempDir checks --tmp up front: the sort library would create a
// missing directory, and only use (and fail on) it once the input outgrows
// one sorted run.
func checkTempDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--tmp: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("--tmp %s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".evident-tmp-check-*")
	if err != nil {
		return fmt.Errorf("--tmp: cannot write there: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// checkRereadable fails when path (the value of --flag) names an existing
// file that is not a regular file: the judge opens the table twice, and a
// named pipe or device gives its data only once (the second open waits for a
// writer forever).
func checkRereadable(flag, table, path string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil // a missing file is reported when it is opened
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("--%s %s is a directory", flag, path)
	default:
		return fmt.Errorf("--%s %s is a %s, not a regular file: the judge reads the %s twice; write it to a file first",
			flag, path, kindOf(m), table)
	}
}

// kindOf names a file mode's type in an error.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// checkOverlaps fails when an output flag names the same file as another
// output (one would overwrite the other: --out X --rejects X kept only the
// rejects) or as an input (--out equal to --turns overwrote the input).
// Outputs that are devices or pipes (/dev/null) may be shared.
func checkOverlaps(cmd *cli.Command) error {
	for i, o := range judgeOutputs {
		path := cmd.String(o)
		if path == "" {
			continue
		}
		if _, fi, err := resolveOutput(path); err == nil && fi != nil && !fi.Mode().IsRegular() {
			continue
		}
		for _, o2 := range judgeOutputs[i+1:] {
			if p2 := cmd.String(o2); p2 != "" && sameFile(path, p2) {
				return fmt.Errorf("--%s and --%s name the same file (%s): one would overwrite the other; give each its own file", o, o2, path)
			}
		}
		for _, in := range judgeInputs {
			if p2 := cmd.String(in); p2 != "" && sameFile(path, p2) {
				return fmt.Errorf("--%s names the same file as --%s (%s): the run would overwrite its input", o, in, path)
			}
		}
	}
	return nil
}
