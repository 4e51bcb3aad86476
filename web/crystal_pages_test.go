package web_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"evident/bench/crystalset"
	"evident/crystal"
	"evident/crystal/report"
	"evident/store"
	"evident/web"
)

// pagedStore opens a store file, which keeps CRYSTAL runs page by page
// (schema 0007).
func pagedStore(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if ok, err := db.CrystalPaged(context.Background()); err != nil || !ok {
		t.Fatalf("schema %d keeps no crystal pages: %v", store.LatestSchemaVersion(), err)
	}
	return db
}

var indexRowID = regexp.MustCompile(`<tr><td><a href="[^"]*"><code>([^<]+)</code></a></td>`)

func indexIDs(body string) []string {
	var out []string
	for _, m := range indexRowID.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestAStoredCrystalRunIsShownOnePageOfItemsAtATime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "evident.db")
	db := pagedStore(t, path)
	set := crystalset.Generate(crystalset.Config{Items: 250, Models: 3, Seed: 5})
	tab, err := report.Score(ctx, set.Items, set.Runs, crystal.Config{Profile: crystal.ProfilePaper, Similarity: crystal.LexicalFor(crystal.ProfilePaper)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveCrystalRun(ctx, store.CrystalRunMeta{Name: "paper-size shape"}, set.Items, set.Runs, tab); err != nil {
		t.Fatal(err)
	}
	c := serve(t, db, web.Options{})
	ids := func(from, to int) (out []string) {
		for _, it := range set.Items[from:to] {
			out = append(out, it.ID)
		}
		return out
	}

	body := c.ok("/crystal/db-1")
	t.Run("the first page lists items 1 to 100 of 250 and links the next by cursor", func(t *testing.T) {
		if got := indexIDs(body); strings.Join(got, " ") != strings.Join(ids(0, 100), " ") {
			t.Fatalf("page 1 lists %d items from %v", len(got), got[:min(3, len(got))])
		}
		mustContain(t, body, "<strong>250</strong> items", "page 1 of 3", `href="/crystal/db-1?after=99#items"`)
	})
	t.Run("the table rows are the saved summary's", func(t *testing.T) {
		for _, row := range tab.Rows {
			got := tableRow(t, body, row.Model)
			if got[0] != fmt.Sprintf("%.2f %%", 100*row.Report.Accuracy) || got[len(got)-1] != fmt.Sprintf("%.3f", row.Report.CPR) {
				t.Errorf("%s: %q", row.Model, got)
			}
		}
	})
	t.Run("next and previous follow the cursor", func(t *testing.T) {
		p2 := c.ok("/crystal/db-1?after=99")
		if got := indexIDs(p2); strings.Join(got, " ") != strings.Join(ids(100, 200), " ") {
			t.Fatalf("page 2 lists %v…", got[:min(3, len(got))])
		}
		mustContain(t, p2, "page 2 of 3", `href="/crystal/db-1?before=100#items"`, `href="/crystal/db-1?after=199#items"`)
		p3 := c.ok("/crystal/db-1?after=199")
		if got := indexIDs(p3); strings.Join(got, " ") != strings.Join(ids(200, 250), " ") || strings.Contains(p3, "next →") {
			t.Fatalf("page 3 lists %d items", len(got))
		}
		back := c.ok("/crystal/db-1?before=100")
		if got := indexIDs(back); strings.Join(got, " ") != strings.Join(ids(0, 100), " ") || strings.Contains(back, "← previous") {
			t.Fatalf("back to page 1: %d items", len(got))
		}
	})
	t.Run("a model's missing predictions are filtered in the store", func(t *testing.T) {
		var want []string
		for i, s := range tab.Rows[1].Report.PerItem {
			if s.Missing {
				want = append(want, set.Items[i].ID)
			}
		}
		p := c.ok("/crystal/db-1?model=model-01&outcome=missing")
		if got := indexIDs(p); len(want) == 0 || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("missing for model-01: %v, want %v", got, want)
		}
		mustContain(t, p, fmt.Sprintf("<strong>%d</strong> of 250 items match", len(want)))
	})
	t.Run("an item page shows the saved steps, scores and neighbours", func(t *testing.T) {
		it := set.Items[120]
		p := c.ok("/crystal/db-1/items/" + it.ID + "?model=model-02")
		mustContain(t, p, html.EscapeString(it.ReferenceSteps[0]), `href="/crystal/db-1/items/`+set.Items[119].ID+`?model=model-02"`,
			`href="/crystal/db-1/items/`+set.Items[121].ID+`?model=model-02"`)
		if c.get("/crystal/db-1/items/nope").status != http.StatusNotFound {
			t.Error("an unknown item is not 404")
		}
	})
	t.Run("the downloads are the table's own files", func(t *testing.T) {
		var text, items bytes.Buffer
		if err := tab.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := tab.WriteItems(&items, set.Items, set.Runs); err != nil {
			t.Fatal(err)
		}
		if got := c.ok("/crystal/db-1/table.txt"); got != text.String() {
			t.Errorf("table.txt differs:\n%s\nwant\n%s", got, text.String())
		}
		if got := c.ok("/crystal/db-1/items.jsonl"); got != items.String() {
			t.Errorf("items.jsonl differs (%d bytes, want %d)", len(got), items.Len())
		}
	})
}

func TestAnUploadWithAStoreIsKeptWithItsImageAfterARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evident.db")
	db := pagedStore(t, path)
	c := serve(t, db, web.Options{MaxUpload: 1 << 20})
	pic := tinyPNG(t)
	p := c.upload("/crystal/score", map[string]string{"csrf": c.csrf(), "name": "fruit check"}, map[string][2]string{
		"refs": {"fruit.jsonl", crystalRefs}, "preds": {"preds.jsonl", crystalPreds}, "images": {"fruit.png", pic}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/crystal/db-1" {
		t.Fatalf("upload = %d → %q", p.status, p.header.Get("Location"))
	}
	db.Close()

	c2 := serve(t, pagedStore(t, path), web.Options{})
	mustContain(t, c2.ok("/crystal"), `<a href="/crystal/db-1">fruit check</a>`)
	if got := strings.Join(tableRow(t, c2.ok("/crystal/db-1"), "careful"), " "); got != "100.00 % 0.800 1.000 0.667 1.000 0.800 2.00 0.930" {
		t.Errorf("careful row %q", got)
	}
	mustContain(t, c2.ok("/crystal/db-1/items/fruit-1?model=hasty"), `<img src="/crystal/db-1/items/fruit-1/image"`)
	img := c2.get("/crystal/db-1/items/fruit-1/image")
	if img.status != http.StatusOK || img.header.Get("Content-Type") != "image/png" || img.body != pic {
		t.Errorf("image after the restart: %d %s", img.status, img.header.Get("Content-Type"))
	}
}
