package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"evident/crystal"
	"evident/crystal/report"
)

// Table renders the demo table for a profile with the lexical similarity.
func table(t *testing.T, p crystal.Profile) (report.Table, []crystal.Item, []report.Run) {
	t.Helper()
	items, err := Items()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Predictions()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.Score(context.Background(), items, runs, crystal.Config{Profile: p, Similarity: crystal.LexicalFor(p)})
	if err != nil {
		t.Fatal(err)
	}
	return tab, items, runs
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./crystal/demo -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./crystal/demo -update rewrites it):\n--- got\n%s--- want\n%s", name, got, want)
	}
}

func TestDemoTable(t *testing.T) {
	for _, p := range []crystal.Profile{crystal.ProfileSeed, crystal.ProfilePaper} {
		t.Run("the "+string(p)+" profile's demo table matches its golden file", func(t *testing.T) {
			tab, _, _ := table(t, p)
			var buf bytes.Buffer
			if err := tab.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, "table_"+string(p)+".golden", buf.Bytes())
		})
	}
}

func TestDemoSet(t *testing.T) {
	items, err := Items()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Predictions()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the sample has at least twelve items with two to six reference steps each", func(t *testing.T) {
		if len(items) < 12 {
			t.Errorf("%d items", len(items))
		}
		for _, it := range items {
			if n := len(it.ReferenceSteps); n < 2 || n > 6 {
				t.Errorf("%s has %d reference steps", it.ID, n)
			}
		}
	})
	t.Run("three fictional models answer in file order", func(t *testing.T) {
		var names []string
		for _, r := range runs {
			names = append(names, r.Model)
		}
		if len(names) != 3 || names[0] != "lumen-7b" || names[1] != "paraglide-mini" || names[2] != "quill-vl" {
			t.Errorf("models %q", names)
		}
	})
	t.Run("the three models score differently", func(t *testing.T) {
		tab, _, _ := table(t, crystal.ProfileSeed)
		seen := map[[2]float64]string{}
		for _, r := range tab.Rows {
			k := [2]float64{r.Report.Accuracy, r.Report.MatchF1}
			if other, dup := seen[k]; dup {
				t.Errorf("%s and %s have the same accuracy and F1", r.Model, other)
			}
			seen[k] = r.Model
		}
	})
	t.Run("quill-vl's raw replies are repaired, flagged or missing as written", func(t *testing.T) {
		q := runs[2].Replies
		if !q["crys-002"].Repaired || !q["crys-003"].Repaired || !q["crys-006"].Unparseable {
			t.Errorf("002 repaired %v, 003 repaired %v, 006 unparseable %v", q["crys-002"].Repaired, q["crys-003"].Repaired, q["crys-006"].Unparseable)
		}
		if _, ok := q["crys-007"]; ok {
			t.Error("crys-007 should have no prediction")
		}
		if s := q["crys-008"].Steps; len(s) != 3 || s[2] != "11" || q["crys-008"].Answer != "11" {
			t.Errorf("crys-008 numbers not coerced: %q %q", s, q["crys-008"].Answer)
		}
	})
	t.Run("the profiles disagree where the reference package's quirks decide", func(t *testing.T) {
		seed, _, _ := table(t, crystal.ProfileSeed)
		paper, _, _ := table(t, crystal.ProfilePaper)
		verdict := func(tab report.Table, model, id string) crystal.Verdict {
			for _, r := range tab.Rows {
				if r.Model != model {
					continue
				}
				for _, s := range r.Report.PerItem {
					if s.ID == id {
						return s.Verdict
					}
				}
			}
			t.Fatalf("no verdict for %s %s", model, id)
			return crystal.Verdict{}
		}
		for _, c := range []struct {
			model, id string
			quirk     crystal.Quirk
		}{
			{"lumen-7b", "crys-003", crystal.QuirkNumeric15Pct},             // 15 for 17: 11.8 % off
			{"paraglide-mini", "crys-001", crystal.QuirkAnswerIsNoBoundary}, // "The answer is blue" → B
			{"quill-vl", "crys-005", crystal.QuirkNumeric15Pct},             // 6 for 7: 14.3 % off
			{"quill-vl", "crys-011", crystal.QuirkYesNoSubstring},           // "incorrect" → yes
		} {
			s, p := verdict(seed, c.model, c.id), verdict(paper, c.model, c.id)
			if s.Correct || !p.Correct || p.Quirk != c.quirk {
				t.Errorf("%s %s: seed correct %v; paper correct %v by quirk %q, want wrong then right by %q", c.model, c.id, s.Correct, p.Correct, p.Quirk, c.quirk)
			}
		}
	})
}
