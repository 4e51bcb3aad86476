package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"evident/store"
)

func TestCrystalScoreDBStoresTheRunAndStillPrintsTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evident.db")
	out, errOut, code := crystalRun(t, "score", "--demo", "--db", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != goldenTable(t, "seed") {
		t.Errorf("stdout differs from table_seed.golden:\n%s", out)
	}
	if !strings.Contains(errOut, "stored CRYSTAL run 1 in "+path) {
		t.Errorf("stderr %q does not name the stored run", errOut)
	}
	out2, errOut, code := crystalRun(t, "score", "--demo", "--profile", "paper", "--db", path, "--name", "second")
	if code != 0 || out2 != goldenTable(t, "paper") || !strings.Contains(errOut, "stored CRYSTAL run 2") {
		t.Fatalf("second run: exit %d, stderr %q", code, errOut)
	}
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.CrystalRuns(context.Background())
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	// Newest first; table_seed.golden: lumen-7b 86.67 %, quill-vl CPR 0.626.
	second, first := runs[0], runs[1]
	if second.Name != "second" || second.Profile != "paper" {
		t.Errorf("second run %+v", second)
	}
	if first.Name != "Demo sample · seed profile" || first.Source != "embedded sample (crystal/demo)" || first.Items != 15 || first.Models != 3 {
		t.Errorf("first run %+v", first)
	}
	m := first.Report.Models
	if len(m) != 3 || math.Abs(m[0].Accuracy-13.0/15) > 1e-12 || m[2].Model != "quill-vl" || math.Abs(m[2].CPR-0.626) > 0.0005 {
		t.Errorf("first run's models %+v", m)
	}
	if _, total, err := db.CrystalEvidence(context.Background(), first.ID, 1, 0); err != nil || total != 45 {
		t.Errorf("evidence rows %d, %v; want 45", total, err)
	}
}

func TestCrystalScoreDBThatCannotBeOpenedIsAnErrorNamingTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing-dir", "evident.db")
	_, errOut, code := crystalRun(t, "score", "--demo", "--db", path)
	if code == 0 || !strings.Contains(errOut, path) {
		t.Fatalf("exit %d, stderr %q; want an error naming %s", code, errOut, path)
	}
}
