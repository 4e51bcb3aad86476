package crystal

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// pairSim is a test Similarity: a fixed score per (pred, ref) text pair, 0
// for pairs not listed.
type pairSim map[[2]string]float64

func (pairSim) Name() string { return "pairs" }
func (s pairSim) Similarities(_ context.Context, pred, ref []string) ([][]float64, error) {
	m := make([][]float64, len(pred))
	for i, p := range pred {
		m[i] = make([]float64, len(ref))
		for j, r := range ref {
			m[i][j] = s[[2]string{p, r}]
		}
	}
	return m, nil
}

var evalSim = pairSim{
	{"p1a", "r1a"}: 0.9, {"p1b", "r1b"}: 0.8,
	{"p2a", "r2c"}: 0.9, {"p2b", "r2a"}: 0.7,
}

var evalItems = []Item{
	// q1: option text "blue" → B, correct; steps in order, F1 1, Ord 1.
	{ID: "q1", Question: colourQ, Answer: "B", ReferenceSteps: []string{"r1a", "r1b"}},
	// q2: 13 vs 12 is 8.3 % off, correct; 2 of 3 references matched out of
	// order: P 1, R 2/3, F1 0.8, LIS of [1 0] = 1/2, Ord 0.8 × 0.85 = 0.68.
	{ID: "q2", Question: "How many?", Answer: "12", ReferenceSteps: []string{"r2a", "r2b", "r2c"}},
	// q3: no prediction: all 0 and wrong, but the order score is 1 (no
	// pairs: fewer than 2 matches, spec "Ordered Match F1"; issue 16).
	{ID: "q3", Question: "Is it red?", Answer: "yes", ReferenceSteps: []string{"r3a"}},
}

var evalPreds = map[string]Reply{
	"q1": {Steps: []string{"p1a", "p1b"}, Answer: "blue"},
	"q2": {Steps: []string{"p2a", "p2b"}, Answer: "13"},
	"zz": {Steps: []string{"x"}, Answer: "x"},
}

func TestEvaluate(t *testing.T) {
	ctx := context.Background()
	t.Run("seed averages per item and a missing prediction scores 0 and wrong", func(t *testing.T) {
		rep, err := Evaluate(ctx, evalItems, evalPreds, Config{Similarity: evalSim})
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, rep, reportWant{
			items: 3, stepItems: 3, missing: 1,
			acc: 2.0 / 3, f1: 0.6, p: 2.0 / 3, r: 5.0 / 9, lis: 2.5 / 3, ord: 1.68 / 3,
			cpr: (1 + 0.93) / 3, steps: 4.0 / 3,
		})
		if rep.Profile != ProfileSeed || rep.Similarity != "pairs" || rep.Threshold != 0.35 || rep.Alpha != 0.3 || rep.Order != OrderLIS {
			t.Errorf("report header %+v", rep)
		}
		if !reflect.DeepEqual(rep.Unknown, []string{"zz"}) {
			t.Errorf("unknown = %v, want [zz]", rep.Unknown)
		}
		q3 := rep.PerItem[2]
		if !q3.Missing || q3.Verdict.Correct || q3.Verdict.Rule != RuleMissing || q3.CPR != 0 || q3.Match.F1 != 0 ||
			!reflect.DeepEqual(q3.Match.UnmatchedRef, []int{0}) {
			t.Errorf("missing item = %+v", q3)
		}
		q2 := rep.PerItem[1]
		if q2.Verdict.Rule != RuleNumeric || !near(q2.Order.OrderedF1, 0.68) || !near(q2.CPR, 0.93) {
			t.Errorf("q2 = %+v", q2)
		}
	})

	withEmptyRef := append(append([]Item{}, evalItems...),
		Item{ID: "q4", Question: "Is it blue?", Answer: "no", ReferenceSteps: nil})
	preds := map[string]Reply{"q4": {Steps: []string{"x"}, Answer: "No"}}
	for k, v := range evalPreds {
		preds[k] = v
	}
	t.Run("paper drops an item without reference steps from the step means only", func(t *testing.T) {
		rep, err := Evaluate(ctx, withEmptyRef, preds, Config{Profile: ProfilePaper, Similarity: evalSim})
		if err != nil {
			t.Fatal(err)
		}
		// CPR with 0.6/0.4: q1 1.0, q2 0.6 + 0.4 × 0.8 = 0.92, q3 0. Average
		// steps leaves q4 out too, as the package does (issue 16).
		checkReport(t, rep, reportWant{
			items: 4, stepItems: 3, missing: 1,
			acc: 3.0 / 4, f1: 0.6, p: 2.0 / 3, r: 5.0 / 9, lis: 2.5 / 3, ord: 1.68 / 3,
			cpr: 1.92 / 3, steps: 4.0 / 3,
		})
		if q4 := rep.PerItem[3]; !q4.Skipped || !q4.StepsDropped || !q4.Verdict.Correct || rep.Skipped != 1 {
			t.Errorf("q4 = %+v", q4)
		}
	})
	t.Run("seed scores an item without reference steps as 0 instead", func(t *testing.T) {
		rep, err := Evaluate(ctx, withEmptyRef, preds, Config{Similarity: evalSim})
		if err != nil {
			t.Fatal(err)
		}
		// q4 is correct (yes/no) with F1 0: CPR 0.65.
		checkReport(t, rep, reportWant{
			items: 4, stepItems: 4, missing: 1,
			acc: 3.0 / 4, f1: 1.8 / 4, p: 2.0 / 4, r: (5.0 / 3) / 4, lis: 3.5 / 4, ord: 1.68 / 4,
			cpr: (1 + 0.93 + 0.65) / 4, steps: 5.0 / 4,
		})
	})
	t.Run("an unparseable reply is scored, counted and wrong", func(t *testing.T) {
		items := []Item{{ID: "u", Answer: "B", Question: colourQ, ReferenceSteps: []string{"r"}}}
		rep, err := Evaluate(ctx, items, map[string]Reply{"u": ParseReply("sorry")}, Config{Similarity: evalSim})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Unparseable != 1 || rep.Accuracy != 0 || rep.MatchF1 != 0 || rep.PerItem[0].Verdict.Rule != RuleExact {
			t.Errorf("report = %+v", rep)
		}
	})
	t.Run("Kendall and a custom alpha are used and reported", func(t *testing.T) {
		rep, err := Evaluate(ctx, evalItems, evalPreds, Config{Similarity: evalSim, Order: OrderKendall, Alpha: 1})
		if err != nil {
			t.Fatal(err)
		}
		// q2: τ of [1 0] = −1 → score 0 → Ord 0; q1 Ord 1; q3 missing: τ 1,
		// score 1 (no pairs), Ord 0.
		if rep.Order != OrderKendall || rep.Alpha != 1 || !near(rep.LIS, 2.0/3) || !near(rep.OrderedF1, 1.0/3) ||
			rep.PerItem[2].Order.Tau != 1 {
			t.Errorf("report = %+v", rep)
		}
	})
	t.Run("no items give an empty report", func(t *testing.T) {
		rep, err := Evaluate(ctx, nil, nil, Config{Similarity: evalSim})
		if err != nil || rep.Items != 0 || rep.Accuracy != 0 || rep.MatchF1 != 0 {
			t.Errorf("report = %+v, %v", rep, err)
		}
	})
	for _, bad := range []struct {
		name  string
		items []Item
		cfg   Config
		want  error
	}{
		{"a nil similarity is refused", evalItems, Config{}, ErrBadParameter},
		{"an unknown profile is refused", evalItems, Config{Profile: "x", Similarity: evalSim}, ErrUnknownProfile},
		{"an alpha above 1 is refused", evalItems, Config{Alpha: 2, Similarity: evalSim}, ErrBadParameter},
		{"an unknown order method is refused", evalItems, Config{Order: "rank", Similarity: evalSim}, ErrBadParameter},
		{"a duplicate item id is refused", []Item{{ID: "a"}, {ID: "a"}}, Config{Similarity: evalSim}, ErrItems},
		{"an item without id is refused", []Item{{}}, Config{Similarity: evalSim}, ErrItems},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if _, err := Evaluate(ctx, bad.items, evalPreds, bad.cfg); !errors.Is(err, bad.want) {
				t.Errorf("err = %v, want %v", err, bad.want)
			}
		})
	}
	t.Run("a cancelled context stops the run", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := Evaluate(c, evalItems, evalPreds, Config{Similarity: evalSim}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}

type reportWant struct {
	items, stepItems, missing           int
	acc, f1, p, r, lis, ord, cpr, steps float64
}

func checkReport(t *testing.T, rep Report, w reportWant) {
	t.Helper()
	if rep.Items != w.items || rep.StepItems != w.stepItems || rep.Missing != w.missing {
		t.Errorf("counts items %d step items %d missing %d, want %d %d %d", rep.Items, rep.StepItems, rep.Missing, w.items, w.stepItems, w.missing)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"accuracy", rep.Accuracy, w.acc}, {"match F1", rep.MatchF1, w.f1}, {"precision", rep.Precision, w.p},
		{"recall", rep.Recall, w.r}, {"LIS", rep.LIS, w.lis}, {"ordered F1", rep.OrderedF1, w.ord},
		{"CPR", rep.CPR, w.cpr}, {"average steps", rep.AvgSteps, w.steps},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
