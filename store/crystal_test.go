package store

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"evident/crystal"
	"evident/crystal/demo"
	"evident/crystal/report"
)

// demoTable scores the embedded CRYSTAL sample (crystal/demo) under the
// seed profile with the lexical similarity, as `crystal score --demo` does.
func demoTable(t *testing.T) ([]crystal.Item, []report.Run, report.Table) {
	t.Helper()
	items, err := demo.Items()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := demo.Predictions()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.Score(context.Background(), items, runs,
		crystal.Config{Profile: crystal.ProfileSeed, Similarity: crystal.LexicalFor(crystal.ProfileSeed)})
	if err != nil {
		t.Fatal(err)
	}
	return items, runs, tab
}

func TestACrystalRunSavedIsReadBackAfterReopeningTheFile(t *testing.T) {
	ctx := context.Background()
	db, path := openFile(t)
	fixedClock(db, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	items, runs, tab := demoTable(t)
	saved, err := db.SaveCrystalRun(ctx, CrystalRunMeta{Name: "demo seed", Source: "embedded sample"}, items, runs, tab)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	list, err := db2.CrystalRuns(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("runs %v, %v; want one", list, err)
	}
	r := list[0]
	if r.ID != saved.ID || r.Name != "demo seed" || r.Source != "embedded sample" || r.Profile != crystal.ProfileSeed ||
		r.Similarity != "lexical" || r.Items != 15 || r.Models != 3 || !r.Created.Equal(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("summary %+v", r)
	}
	// crystal/demo/testdata/table_seed.golden: lumen-7b 86.67 % (13 of 15),
	// Match F1 0.882, CPR 0.842; quill-vl one missing, one unparseable, crys-099 unknown.
	m := r.Report.Models
	if len(m) != 3 || m[0].Model != "lumen-7b" || math.Abs(m[0].Accuracy-13.0/15) > 1e-12 ||
		math.Abs(m[0].MatchF1-0.882) > 0.0005 || math.Abs(m[0].CPR-0.842) > 0.0005 {
		t.Fatalf("models %+v", m)
	}
	if m[2].Model != "quill-vl" || m[2].Missing != 1 || m[2].Unparseable != 1 || !reflect.DeepEqual(m[2].Unknown, []string{"crys-099"}) {
		t.Fatalf("quill-vl %+v", m[2])
	}

	// The table and inputs come back whole: rescoring them gives the same summary.
	gotItems, gotRuns, gotTab, err := db2.CrystalTable(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotItems, items) || !reflect.DeepEqual(gotRuns, runs) {
		t.Fatal("inputs differ after the round trip")
	}
	if !reflect.DeepEqual(gotTab.Summary(), tab.Summary()) || len(gotTab.Rows[1].Report.PerItem) != 15 ||
		!reflect.DeepEqual(gotTab.Rows[1].Report.PerItem, tab.Rows[1].Report.PerItem) {
		t.Fatal("table differs after the round trip")
	}
}

func TestCrystalEvidenceIsPagedOneRowPerModelAndItem(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	items, runs, tab := demoTable(t)
	saved, err := db.SaveCrystalRun(ctx, CrystalRunMeta{Name: "demo"}, items, runs, tab)
	if err != nil {
		t.Fatal(err)
	}
	all := tab.Evidence(items, runs)
	for _, c := range []struct {
		name          string
		limit, offset int
		want          []report.Evidence
	}{
		{"the first page starts with the first model's first item", 10, 0, all[:10]},
		{"a middle page crosses from one model to the next", 10, 10, all[10:20]},
		{"the last page holds the 5 rows left of 45", 10, 40, all[40:]},
		{"a page past the end is empty", 10, 45, []report.Evidence{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, total, err := db.CrystalEvidence(ctx, saved.ID, c.limit, c.offset)
			if err != nil || total != 45 {
				t.Fatalf("total %d, %v; want 45 (3 models × 15 items)", total, err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("page differs: got %d rows, want %d", len(got), len(c.want))
			}
		})
	}
	page, _, _ := db.CrystalEvidence(ctx, saved.ID, 15, 30)
	if page[0].Model != "quill-vl" || page[0].ID != items[0].ID {
		t.Fatalf("row 30 is %s/%s, want quill-vl/%s", page[0].Model, page[0].ID, items[0].ID)
	}
	missing := 0
	for _, e := range page {
		if e.Missing {
			missing++
		}
	}
	if missing != 1 {
		t.Fatalf("quill-vl has %d missing rows, want 1 (table_seed.golden)", missing)
	}
}

func TestCrystalRunErrors(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	items, runs, tab := demoTable(t)
	if _, err := db.SaveCrystalRun(ctx, CrystalRunMeta{Name: "  "}, items, runs, tab); !errors.Is(err, ErrInvalid) {
		t.Fatalf("blank name: %v, want ErrInvalid", err)
	}
	if list, _ := db.CrystalRuns(ctx); len(list) != 0 {
		t.Fatalf("a refused run was saved: %v", list)
	}
	if _, err := db.CrystalRun(ctx, 7); !errors.Is(err, ErrNotFound) {
		t.Fatalf("run 7: %v, want ErrNotFound", err)
	}
	if _, _, err := db.CrystalEvidence(ctx, 7, 10, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("evidence of run 7: %v, want ErrNotFound", err)
	}
	if _, _, _, err := db.CrystalTable(ctx, 7); !errors.Is(err, ErrNotFound) {
		t.Fatalf("table of run 7: %v, want ErrNotFound", err)
	}
	if _, _, err := db.CrystalEvidence(ctx, 1, 0, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("limit 0: %v, want ErrInvalid", err)
	}
}
