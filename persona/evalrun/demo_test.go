package evalrun_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/demo"
	"evident/persona/evalrun"
)

// demoRecords judges the embedded demo with the default (seed) profile.
func demoRecords(t *testing.T) []persona.Record {
	t.Helper()
	j, rejects, err := batch.NewJudge(demo.Cards(), demo.Lexicon(), nil)
	if err != nil || len(rejects) > 0 {
		t.Fatalf("NewJudge: %v, rejects %v", err, rejects)
	}
	var buf bytes.Buffer
	if _, err := (&batch.Run{Judge: j, Turns: demo.Turns()}).Do(context.Background(), batch.Outputs{Lines: &buf}); err != nil {
		t.Fatal(err)
	}
	var recs []persona.Record
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r persona.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

func demoGold(t *testing.T) []evalrun.Gold {
	t.Helper()
	f, err := os.Open("../demo/data/gold.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gold, err := evalrun.ReadGold(f)
	if err != nil {
		t.Fatal(err)
	}
	return gold
}

// demoPrompts reads turn_id → prompt_id from the demo's chat_turn table.
func demoPrompts(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../demo/data/turns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var turns []persona.Turn
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var tu persona.Turn
		if err := json.Unmarshal(line, &tu); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, tu)
	}
	return evalrun.PromptsOf(turns)
}

// The expected numbers below were computed from gold.jsonl and the judge's
// records (`evident judge --demo`) by a separate one-off script, not by this
// package:
//
//	confusion (rows gold, cols predicted; 금지 세계관 말투 기억 설정):
//	  금지  10  0  0 0  0
//	  세계관  0 10  0 0  0
//	  말투   1  0 21 0  1
//	  기억   0  1  1 8  2
//	  설정   1  2  3 0 59
//	agreement 108/120 = 0.9
//	rows 10 10 23 12 65, cols 12 13 25 8 62
//	p_e = (10·12 + 10·13 + 23·25 + 12·8 + 65·62)/120² = 4951/14400
//	κ = (12960 − 4951)/(14400 − 4951) = 8009/9449 = 0.8476029209440152
//	Wilson 95 %: [0.833318258891048, 0.9418664079739892]
func TestDemoGold(t *testing.T) {
	recs := demoRecords(t)
	gold := demoGold(t)
	rep := evalrun.Evaluate(gold, recs)

	t.Run("the gold file labels 120 demo turns with all five verdicts and a note each", func(t *testing.T) {
		if len(gold) != 120 {
			t.Fatalf("%d gold turns, want 120", len(gold))
		}
		seen := map[persona.Verdict]int{}
		for _, g := range gold {
			seen[g.Verdict]++
			if g.Note == "" {
				t.Errorf("%s has no note", g.TurnID)
			}
		}
		for _, v := range persona.Verdicts {
			if seen[v] == 0 {
				t.Errorf("no gold turn is labelled %s", v)
			}
		}
	})
	t.Run("gold covers every model of each shared prompt it labels", func(t *testing.T) {
		promptOf := demoPrompts(t)
		models := map[string]map[string]bool{} // prompt → models that answered
		labelled := map[string]map[string]bool{}
		model := map[string]string{}
		for _, r := range recs {
			model[r.TurnID] = r.ModelID
			if p := promptOf[r.TurnID]; p != "" {
				if models[p] == nil {
					models[p] = map[string]bool{}
				}
				models[p][r.ModelID] = true
			}
		}
		for _, g := range gold {
			p := promptOf[g.TurnID]
			if labelled[p] == nil {
				labelled[p] = map[string]bool{}
			}
			labelled[p][model[g.TurnID]] = true
		}
		full := 0
		for p, l := range labelled {
			if len(models[p]) >= 2 && !reflect.DeepEqual(l, models[p]) {
				t.Errorf("prompt %s: gold labels models %v of %v", p, l, models[p])
			}
			if len(models[p]) == 3 {
				full++
			}
		}
		if full != 36 {
			t.Errorf("%d prompts labelled for all three models, want 36", full)
		}
	})
	t.Run("agreement is 108 of 120 with the hand-computed interval", func(t *testing.T) {
		if rep.N != 120 || rep.Agreed != 108 || len(rep.Missing) != 0 || len(rep.Invalid) != 0 {
			t.Fatalf("N=%d Agreed=%d Missing=%v Invalid=%v", rep.N, rep.Agreed, rep.Missing, rep.Invalid)
		}
		if *rep.Agreement != 0.9 {
			t.Errorf("Agreement = %v", *rep.Agreement)
		}
		if math.Abs(rep.Interval.Lo-0.833318258891048) > 1e-9 || math.Abs(rep.Interval.Hi-0.9418664079739892) > 1e-9 {
			t.Errorf("Interval = %+v", *rep.Interval)
		}
	})
	t.Run("kappa is 8009/9449", func(t *testing.T) {
		if rep.Kappa == nil || math.Abs(*rep.Kappa-8009.0/9449.0) > 1e-12 {
			t.Errorf("Kappa = %v, want %v", rep.Kappa, 8009.0/9449.0)
		}
	})
	t.Run("the confusion matrix matches the hand count", func(t *testing.T) {
		want := [][]int{
			{10, 0, 0, 0, 0},
			{0, 10, 0, 0, 0},
			{1, 0, 21, 0, 1},
			{0, 1, 1, 8, 2},
			{1, 2, 3, 0, 59},
		}
		if !reflect.DeepEqual(rep.Confusion, want) {
			t.Errorf("Confusion = %v", rep.Confusion)
		}
	})
	t.Run("the twelve disagreements fall into eleven reasons", func(t *testing.T) {
		type row struct {
			gold, pred persona.Verdict
			detail     string
			ids        []string
		}
		K, S, O, F, R := persona.Kept, persona.SpeechOff, persona.OffCanon, persona.ForbiddenTopic, persona.RecallFailed
		want := []row{
			{R, K, "", []string{"T-010220", "T-010248"}},
			{S, F, "touched 「스마트폰」 · 현대 기술", []string{"T-010131"}},
			{S, K, "", []string{"T-020103"}},
			{R, O, "off-canon 「나비」", []string{"T-010244"}},
			{R, S, "존댓말 ≠ 반말 · 나; endings 「나네요」", []string{"T-010138"}},
			{K, F, "touched 「투표」 · 현실 정치", []string{"T-010116"}},
			{K, O, "off-canon 「금성호」", []string{"T-010037"}},
			{K, O, "off-canon 「나비」", []string{"T-010206"}},
			{K, S, "반말 ≠ 존댓말 · 저", []string{"T-020203"}},
			{K, S, "존댓말 ≠ 반말 · 나; endings 「중요」", []string{"T-020006"}},
			{K, S, "존댓말 ≠ 반말 · 나; endings 「필요」", []string{"T-010041"}},
		}
		var got []row
		for _, g := range rep.Disagreements {
			got = append(got, row{g.Gold, g.Predicted, g.Detail, g.TurnIDs})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Disagreements:\n got %v\nwant %v", got, want)
		}
	})
}

// Computed by the same one-off script from the judge's records and the
// prompt_id column: 52 prompts answered by all three models.
//
//	claude-sonnet  3/52   gpt-4o-mini 33/52   whif-solar-ft 24/52
//	claude–gpt:  b=2,  c=32 → p = 2·(1 + 34 + 561)/2³⁴ = 1192/2³⁴
//	claude–whif: b=2,  c=23 → p = 2·(1 + 25 + 300)/2²⁵ = 652/2²⁵
//	gpt–whif:    b=17, c=8  → p = 2·Σ_{i≤8} C(25,i)/2²⁵ = 2·1807781/2²⁵
func TestDemoModels(t *testing.T) {
	rep := evalrun.CompareModels(demoRecords(t), demoPrompts(t))
	t.Run("the three models share 52 prompts", func(t *testing.T) {
		if rep.Prompts != 52 {
			t.Errorf("Prompts = %d", rep.Prompts)
		}
	})
	t.Run("mismatch counts per model match the hand count", func(t *testing.T) {
		want := map[string]int{"claude-sonnet": 3, "gpt-4o-mini": 33, "whif-solar-ft": 24}
		if len(rep.Models) != 3 {
			t.Fatalf("Models = %+v", rep.Models)
		}
		for _, m := range rep.Models {
			if m.N != 52 || m.Mismatches != want[m.Model] {
				t.Errorf("%s: %d/%d, want %d/52", m.Model, m.Mismatches, m.N, want[m.Model])
			}
		}
	})
	t.Run("pairs carry the hand-computed discordant counts and p-values", func(t *testing.T) {
		want := []evalrun.ModelPair{
			{ModelA: "claude-sonnet", ModelB: "gpt-4o-mini", N: 52, Both: 1, Neither: 17, B: 2, C: 32, P: 1192 / math.Exp2(34)},
			{ModelA: "claude-sonnet", ModelB: "whif-solar-ft", N: 52, Both: 1, Neither: 26, B: 2, C: 23, P: 652 / math.Exp2(25)},
			{ModelA: "gpt-4o-mini", ModelB: "whif-solar-ft", N: 52, Both: 16, Neither: 11, B: 17, C: 8, P: 2 * 1807781 / math.Exp2(25)},
		}
		if len(rep.Pairs) != len(want) {
			t.Fatalf("Pairs = %+v", rep.Pairs)
		}
		for i, w := range want {
			g := rep.Pairs[i]
			if g.ModelA != w.ModelA || g.ModelB != w.ModelB || g.N != w.N || g.Both != w.Both || g.Neither != w.Neither || g.B != w.B || g.C != w.C || math.Abs(g.P-w.P) > 1e-12*w.P {
				t.Errorf("pair %d = %+v, want %+v", i, g, w)
			}
		}
	})
}
