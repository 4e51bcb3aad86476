package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// judge --db and import store the run, say so, then write its search
// index before they exit (a file store indexes a run after it commits), so
// the run is searchable by index once the command has returned.
func TestJudgeAndImportWriteTheSearchIndexBeforeTheyExit(t *testing.T) {
	for _, args := range [][]string{{"judge", "--demo"}, {"import", "--demo"}} {
		t.Run(args[0], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			out, errOut, err := evident(t, append(args, "--db", path)...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, errOut)
			}
			if !strings.Contains(out+errOut, "search index of run 1 written in ") {
				t.Errorf("output lacks the index line:\n%s%s", out, errOut)
			}
			if ok, err := openDB(t, path).TextIndexed(context.Background(), 1); !ok || err != nil {
				t.Errorf("run 1 after %s: TextIndexed = %v, %v; want indexed", args[0], ok, err)
			}
		})
	}
}
