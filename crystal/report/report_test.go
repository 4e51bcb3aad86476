package report

import (
	"context"
	"strings"
	"testing"

	"evident/crystal"
	"evident/crystal/embedder"
)

var (
	testItems = []crystal.Item{
		{ID: "q1", Question: "How many?", Answer: "3", ReferenceSteps: []string{"there are three red dots", "the answer is three"}},
		{ID: "q2", Question: "Is it red?", Answer: "yes", ReferenceSteps: []string{"the square is red"}},
	}
	testRuns = []Run{
		{Model: "good", Replies: map[string]crystal.Reply{
			"q1": {Steps: []string{"the answer is three", "there are three red dots"}, Answer: "3"},
			"q2": {Steps: []string{"the square is red"}, Answer: "yes"},
		}},
		{Model: "partial", Replies: map[string]crystal.Reply{
			"q1": crystal.ParseReply("no json here"),
			"zz": {Steps: []string{"x"}, Answer: "x"},
		}},
	}
)

func score(t *testing.T, p crystal.Profile, sim embedder.Similarity) Table {
	t.Helper()
	tab, err := Score(context.Background(), testItems, testRuns, crystal.Config{Profile: p, Similarity: sim})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestTable(t *testing.T) {
	tab := score(t, crystal.ProfileSeed, crystal.LexicalFor(crystal.ProfileSeed))
	var b strings.Builder
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, c := range []struct{ name, want string }{
		{"the header names the items, profile, similarity and threshold",
			"2 items, profile seed, similarity lexical (word overlap, no model), match at similarity ≥ 0.30"},
		{"the columns are the paper's plus CPR", "Model         Acc  Match F1      P      R    LIS  Ord.F1  Steps    CPR"},
		{"a row gives accuracy in percent and the step scores to three decimals",
			"good     100.00 %     1.000  1.000  1.000  0.750   0.925   1.50  1.000"},
		{"a note says lexical scores are not the paper's", "- lexical is the reference package's word-overlap step similarity"},
		{"a note counts missing, unparseable and unknown predictions",
			`- partial: 1 item without a prediction (scored 0, wrong); 1 unparseable reply (no steps, answer "insufficient information"); 1 id not in the references ignored ("zz")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(out, c.want) {
				t.Errorf("missing %q in\n%s", c.want, out)
			}
		})
	}
	t.Run("an embedding similarity is named and not called lexical", func(t *testing.T) {
		tab := score(t, crystal.ProfilePaper, embedder.Cosine{Embedder: fakeEmbedder{dim: 8}})
		var b strings.Builder
		if err := tab.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "similarity fake-8 (embedding cosine), match at similarity > 0.35") || strings.Contains(b.String(), "lexical") {
			t.Errorf("header:\n%s", b.String())
		}
	})
	t.Run("the Kendall order names its column", func(t *testing.T) {
		tab, err := Score(context.Background(), testItems, testRuns, crystal.Config{Similarity: embedder.Lexical{}, Order: crystal.OrderKendall})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_ = tab.WriteText(&b)
		if !strings.Contains(b.String(), "Kendall") {
			t.Errorf("table:\n%s", b.String())
		}
	})
}

func TestEvidence(t *testing.T) {
	tab := score(t, crystal.ProfileSeed, crystal.LexicalFor(crystal.ProfileSeed))
	ev := tab.Evidence(testItems, testRuns)
	t.Run("there is one record per model and item", func(t *testing.T) {
		if len(ev) != 4 {
			t.Fatalf("%d records", len(ev))
		}
	})
	t.Run("matched pairs carry both step texts and their similarity", func(t *testing.T) {
		e := ev[0]
		if e.Model != "good" || e.ID != "q1" || len(e.Pairs) != 2 {
			t.Fatalf("%+v", e)
		}
		for _, p := range e.Pairs {
			if p.PredText != p.RefText || p.Similarity != 1 {
				t.Errorf("pair %+v", p)
			}
		}
		if e.Rule != crystal.RuleNumeric || !e.Correct || e.Similarity != "lexical" {
			t.Errorf("verdict %+v", e)
		}
	})
	t.Run("a missing prediction lists every reference step as unmatched", func(t *testing.T) {
		e := ev[3]
		if !e.Missing || e.Rule != crystal.RuleMissing || len(e.UnmatchedRef) != 1 || e.UnmatchedRef[0].Text != "the square is red" {
			t.Errorf("%+v", e)
		}
	})
	t.Run("an unparseable reply says so and keeps the parser's answer", func(t *testing.T) {
		e := ev[2]
		if !e.Unparseable || e.Answer != crystal.InsufficientInformation || len(e.Notes) == 0 {
			t.Errorf("%+v", e)
		}
	})
}

func TestSummary(t *testing.T) {
	t.Run("the summary has the settings and one entry per model", func(t *testing.T) {
		s := score(t, crystal.ProfilePaper, crystal.LexicalFor(crystal.ProfilePaper)).Summary()
		if s.Profile != crystal.ProfilePaper || !s.Lexical || s.Inclusive || s.Items != 2 || len(s.Models) != 2 ||
			s.Models[1].Missing != 1 || s.Models[1].Unknown[0] != "zz" || s.Weights.Answer != 0.6 {
			t.Errorf("%+v", s)
		}
	})
	t.Run("no runs still describe the settings", func(t *testing.T) {
		tab, err := Score(context.Background(), testItems, nil, crystal.Config{Similarity: embedder.Lexical{}})
		if err != nil || tab.Items != 2 || tab.Similarity != "lexical" || len(tab.Rows) != 0 {
			t.Errorf("%+v, %v", tab, err)
		}
	})
}
