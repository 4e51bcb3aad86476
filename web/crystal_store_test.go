package web_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"evident/crystal"
	"evident/crystal/demo"
	"evident/crystal/report"
	"evident/store"
	"evident/web"
)

func TestACrystalRunSavedInTheStoreIsReopenedByANewServer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "evident.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	items, err := demo.Items()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := demo.Predictions()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.Score(ctx, items, runs, crystal.Config{Profile: crystal.ProfileSeed, Similarity: crystal.LexicalFor(crystal.ProfileSeed)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveCrystalRun(ctx, store.CrystalRunMeta{Name: "kept run", Source: "embedded sample"}, items, runs, tab); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// A restart: a new store handle and a new server on the same file.
	db2, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	c := serve(t, db2, web.Options{})

	mustContain(t, c.ok("/crystal"), `<a href="/crystal/db-1">kept run</a>`, `<a href="/crystal/demo">Demo sample · seed profile</a>`)
	// Listed with the judge's runs too (issue 16 item 3), with its item and
	// model counts.
	runsBody := c.ok("/runs")
	mustContain(t, runsBody, "CRYSTAL 실행", `<a href="/crystal/db-1">/crystal/db-1</a></td><td>kept run</td>`,
		fmt.Sprintf(`<td class="num">%d</td><td class="num">%d</td>`, len(items), len(runs)))
	body := c.ok("/crystal/db-1")
	for model, want := range goldenRows(t, "table_seed.golden") {
		if got := tableRow(t, body, model); strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("%s: %q, want %q", model, got, want)
		}
	}
	mustContain(t, c.ok("/crystal/db-1/items/"+items[0].ID+"?model=quill-vl"), items[0].ReferenceSteps[0])
	for _, p := range []string{"/crystal/db-2", "/crystal/db-x"} {
		if got := c.get(p); got.status != 404 {
			t.Errorf("%s: status %d, want 404", p, got.status)
		}
	}
}
