package store

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"reflect"
	"strings"
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
	wantRuns := runs
	if saved.Paged {
		wantRuns = itemReplies(items, runs) // a paged run keeps the replies to its items
	}
	if !reflect.DeepEqual(gotItems, items) || !reflect.DeepEqual(gotRuns, wantRuns) {
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

// itemReplies is runs with only the replies to items (a paged run keeps
// those; a reply to an id not in the references is only counted in the
// table's Unknown).
func itemReplies(items []crystal.Item, runs []report.Run) []report.Run {
	out := make([]report.Run, len(runs))
	for k, r := range runs {
		out[k] = report.Run{Model: r.Model, Replies: map[string]crystal.Reply{}}
		for _, it := range items {
			if rep, ok := r.Replies[it.ID]; ok {
				out[k].Replies[it.ID] = rep
			}
		}
	}
	return out
}

// needPages checks that a new store keeps CRYSTAL runs page by page
// (migration 0007).
func needPages(t *testing.T, db *DB) {
	t.Helper()
	if ok, err := db.crystalPagesSchema(context.Background()); err != nil || !ok {
		t.Fatalf("schema %d has no crystal pages: %v", LatestSchemaVersion(), err)
	}
}

// demoImages reads the embedded sample's image files, keyed by the items'
// image references.
func demoImages(t *testing.T, items []crystal.Item) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, it := range items {
		if it.Image == "" {
			continue
		}
		b, err := fs.ReadFile(demo.Images(), it.Image)
		if err != nil {
			t.Fatal(err)
		}
		out[it.Image] = b
	}
	return out
}

func TestAPagedCrystalRunIsReadOnePageOfItemsAtATime(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	needPages(t, db)
	items, runs, tab := demoTable(t)
	saved, err := db.SaveCrystalRun(ctx, CrystalRunMeta{Name: "demo"}, items, runs, tab)
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Paged {
		t.Fatal("a run saved under schema 0007 is not paged")
	}
	ids := func(p CrystalItemsPage) (out []string) {
		for _, r := range p.Rows {
			out = append(out, r.Item.ID)
		}
		return out
	}
	idsAt := func(pos ...int) (out []string) {
		for _, p := range pos {
			out = append(out, items[p].ID)
		}
		return out
	}
	all := CrystalItemQuery{Model: -1, After: -1, Before: -1, Limit: 4}
	t.Run("the first page holds the first 4 of 15 items, more after", func(t *testing.T) {
		p, err := db.CrystalItems(ctx, saved.ID, all)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(p), idsAt(0, 1, 2, 3)) || p.Matching != 15 || p.Before != 0 || p.HasPrev || !p.HasNext {
			t.Fatalf("page %v matching %d before %d prev %v next %v", ids(p), p.Matching, p.Before, p.HasPrev, p.HasNext)
		}
		// Cells are the table's per-item scores.
		for k, row := range tab.Rows {
			s := row.Report.PerItem[2]
			c := p.Rows[2].Cells[k]
			if c.Missing != s.Missing || c.Correct != s.Verdict.Correct || c.F1 != s.Match.F1 || c.Rule != s.Verdict.Rule || c.Unparseable != s.Unparseable {
				t.Errorf("model %s item %s: cell %+v, score %+v", row.Model, s.ID, c, s)
			}
		}
	})
	t.Run("after the fourth item come items 5 to 8; before the fifth, the first page again", func(t *testing.T) {
		q := all
		q.After = 3
		p, err := db.CrystalItems(ctx, saved.ID, q)
		if err != nil || !reflect.DeepEqual(ids(p), idsAt(4, 5, 6, 7)) || p.Before != 4 || !p.HasPrev || !p.HasNext {
			t.Fatalf("page %v before %d, %v", ids(p), p.Before, err)
		}
		q.After, q.Before = -1, 4
		p, err = db.CrystalItems(ctx, saved.ID, q)
		if err != nil || !reflect.DeepEqual(ids(p), idsAt(0, 1, 2, 3)) || p.HasPrev || !p.HasNext {
			t.Fatalf("page %v, %v", ids(p), err)
		}
		q.Before, q.After = -1, 11
		p, err = db.CrystalItems(ctx, saved.ID, q)
		if err != nil || !reflect.DeepEqual(ids(p), idsAt(12, 13, 14)) || p.HasNext || p.Before != 12 {
			t.Fatalf("last page %v before %d next %v, %v", ids(p), p.Before, p.HasNext, err)
		}
	})
	t.Run("filters: one model's missing items, any model's wrong answers, a text", func(t *testing.T) {
		want := func(keep func(pos int) bool) (out []string) {
			for pos := range items {
				if keep(pos) {
					out = append(out, items[pos].ID)
				}
			}
			return out
		}
		q := all
		q.Limit, q.Model, q.Outcome = 100, 2, "missing"
		p, err := db.CrystalItems(ctx, saved.ID, q)
		wantMissing := want(func(pos int) bool { return tab.Rows[2].Report.PerItem[pos].Missing })
		if err != nil || len(wantMissing) != 1 || !reflect.DeepEqual(ids(p), wantMissing) || p.Matching != 1 {
			t.Fatalf("quill-vl missing: %v (want %v), %v", ids(p), wantMissing, err)
		}
		q.Model, q.Outcome = -1, "wrong"
		p, err = db.CrystalItems(ctx, saved.ID, q)
		wantWrong := want(func(pos int) bool {
			for _, r := range tab.Rows {
				if s := r.Report.PerItem[pos]; !s.Missing && !s.Verdict.Correct {
					return true
				}
			}
			return false
		})
		if err != nil || !reflect.DeepEqual(ids(p), wantWrong) || len(wantWrong) == 0 {
			t.Fatalf("wrong anywhere: %v (want %v), %v", ids(p), wantWrong, err)
		}
		q.Outcome, q.Q = "", strings.ToUpper(items[6].ID)
		p, err = db.CrystalItems(ctx, saved.ID, q)
		if err != nil || !reflect.DeepEqual(ids(p), idsAt(6)) {
			t.Fatalf("q %s: %v, %v", q.Q, ids(p), err)
		}
	})
	t.Run("one item comes back with every model's score and reply and its neighbours", func(t *testing.T) {
		d, err := db.CrystalItem(ctx, saved.ID, items[5].ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Pos != 5 || d.PrevID != items[4].ID || d.NextID != items[6].ID || !reflect.DeepEqual(d.Item, items[5]) {
			t.Fatalf("item %d prev %s next %s", d.Pos, d.PrevID, d.NextID)
		}
		for k, row := range tab.Rows {
			if !reflect.DeepEqual(d.Scores[k], row.Report.PerItem[5]) {
				t.Errorf("model %s: score differs", row.Model)
			}
			rep, ok := runs[k].Replies[items[5].ID]
			if ok != (d.Replies[k] != nil) || (ok && !reflect.DeepEqual(*d.Replies[k], rep)) {
				t.Errorf("model %s: reply %v, want %v (%v)", row.Model, d.Replies[k], rep, ok)
			}
		}
		first, _ := db.CrystalItem(ctx, saved.ID, items[0].ID)
		if first.PrevID != "" || first.NextID != items[1].ID {
			t.Errorf("first item: prev %q next %q", first.PrevID, first.NextID)
		}
	})
	t.Run("errors name the run and the bad query", func(t *testing.T) {
		if _, err := db.CrystalItem(ctx, saved.ID, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown item: %v", err)
		}
		if _, err := db.CrystalItems(ctx, saved.ID+1, all); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown run: %v", err)
		}
		for _, q := range []CrystalItemQuery{{Model: -1, After: -1, Before: -1}, {Model: 3, After: -1, Before: -1, Limit: 1},
			{Model: -1, Outcome: "odd", After: -1, Before: -1, Limit: 1}} {
			if _, err := db.CrystalItems(ctx, saved.ID, q); !errors.Is(err, ErrInvalid) {
				t.Errorf("%+v: %v, want ErrInvalid", q, err)
			}
		}
	})
}

func TestACrystalRunKeepsItsImagesByReference(t *testing.T) {
	ctx := context.Background()
	db, path := openFile(t)
	needPages(t, db)
	items, runs, tab := demoTable(t)
	imgs := demoImages(t, items)
	if len(imgs) != 11 {
		t.Fatalf("%d demo images, want 11", len(imgs))
	}
	saved, err := db.SaveCrystalRun(ctx, CrystalRunMeta{Name: "demo", Images: imgs}, items, runs, tab)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for ref, want := range imgs {
		b, ct, err := db.CrystalImage(ctx, saved.ID, " "+ref+" ")
		if err != nil || !reflect.DeepEqual(b, want) || !strings.HasPrefix(ct, "image/") {
			t.Fatalf("%s: %d bytes %s, %v", ref, len(b), ct, err)
		}
	}
	if _, _, err := db.CrystalImage(ctx, saved.ID, "other.png"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an image not saved: %v, want ErrNotFound", err)
	}
	t.Run("a file that is not an image is refused and nothing is saved", func(t *testing.T) {
		_, err := db.SaveCrystalRun(ctx, CrystalRunMeta{Name: "bad", Images: map[string][]byte{"x.png": []byte("<svg></svg>")}}, items, runs, tab)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"x.png"`) {
			t.Fatalf("err = %v", err)
		}
		if list, _ := db.CrystalRuns(ctx); len(list) != 1 {
			t.Fatalf("%d runs, want 1", len(list))
		}
	})
}

func TestACrystalRunSavedBeforeMigration0007IsStillReadWhole(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	items, runs, tab := demoTable(t)
	saved, err := db.SaveCrystalRun(ctx, CrystalRunMeta{Name: "old"}, items, runs, tab)
	if err != nil {
		t.Fatal(err)
	}
	// What migration 0003's SaveCrystalRun wrote: the whole table and the
	// inputs, one evidence row per model × item, no item or score rows.
	whole, _ := json.Marshal(tab)
	in, _ := json.Marshal(crystalInputs{Items: items, Runs: runs})
	if _, err := db.sql.Exec("DELETE FROM crystal_score; DELETE FROM crystal_item"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec("UPDATE crystal_run SET paged = 0, tables = ?, inputs = ? WHERE id = ?", string(whole), string(in), saved.ID); err != nil {
		t.Fatal(err)
	}
	st, _ := db.sql.Prepare("INSERT INTO crystal_evidence (run_id, seq, model, item_id, evidence) VALUES (?, ?, ?, ?, ?)")
	defer st.Close()
	for seq, e := range tab.Evidence(items, runs) {
		b, _ := json.Marshal(e)
		if _, err := st.Exec(saved.ID, seq, e.Model, e.ID, string(b)); err != nil {
			t.Fatal(err)
		}
	}
	info, err := db.CrystalRun(ctx, saved.ID)
	if err != nil || info.Paged {
		t.Fatalf("info %+v, %v; want not paged", info, err)
	}
	gotItems, gotRuns, gotTab, err := db.CrystalTable(ctx, saved.ID)
	if err != nil || !reflect.DeepEqual(gotItems, items) || !reflect.DeepEqual(gotRuns, runs) ||
		!reflect.DeepEqual(gotTab.Rows[2].Report.PerItem, tab.Rows[2].Report.PerItem) {
		t.Fatalf("the old run does not read back whole: %v", err)
	}
	page, total, err := db.CrystalEvidence(ctx, saved.ID, 10, 40)
	if err != nil || total != 45 || !reflect.DeepEqual(page, tab.Evidence(items, runs)[40:]) {
		t.Fatalf("old evidence rows: %d of %d, %v", len(page), total, err)
	}
	if _, err := db.CrystalItems(ctx, saved.ID, CrystalItemQuery{Model: -1, After: -1, Before: -1, Limit: 10}); !errors.Is(err, ErrInvalid) {
		t.Errorf("CrystalItems of an old run: %v, want ErrInvalid", err)
	}
	if _, err := db.CrystalItem(ctx, saved.ID, items[0].ID); !errors.Is(err, ErrInvalid) {
		t.Errorf("CrystalItem of an old run: %v, want ErrInvalid", err)
	}
}
