package runstore_test

import (
	"bufio"
	"context"
	"os"
	"testing"

	"evident/persona/runstore"
)

// TestSpoolLeavesNoNamedFile: the spooled tables of a stored dataset are
// readable (twice, as the judge's two passes read them) while the temporary
// folder holds no file at all, so a kill -9 cannot leave a plaintext copy
// of the chat log behind (issue 15 item 6).
func TestSpoolLeavesNoNamedFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	db := openMem(t)
	res, err := runstore.Import(ctx, db, demoTables(), runstore.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	tabs, fps, cleanup, err := runstore.Spool(ctx, db, res.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("the temporary folder holds %d entries (first %q) while the spool is open", len(ents), ents[0].Name())
	}
	if len(fps["chat_turn"]) != 64 {
		t.Fatalf("fingerprint %q", fps["chat_turn"])
	}
	for pass := 1; pass <= 2; pass++ {
		rc, err := tabs.Turns.Open()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(rc)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			n++
		}
		rc.Close()
		if sc.Err() != nil || n != 195 {
			t.Fatalf("pass %d read %d lines (%v), want the demo's 195 turns", pass, n, sc.Err())
		}
	}
}
