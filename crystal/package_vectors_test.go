package crystal

import (
	"context"
	"math"
	"testing"
)

// The reference package's own vectors (issue 16): crystal-metrics 0.2.0,
// repository waybarrios/crystal at f8d9739. "tests/…::name" vectors are the
// inputs and expected values of that test; "run:" vectors are inputs chosen
// here for a quirk the package's tests do not cover, their expected values
// taken from running the package's accuracy.py / rewards.py (Python 3, no
// model) on them. The package's match_type "exact" covers our RuleExact and
// RuleSubstring (its substring fallback reports "exact").
const pkgRepo = "waybarrios/crystal@f8d9739 "

func TestPaperJudgeAgreesWithTheReferencePackage(t *testing.T) {
	const capital = "Capital of France?\nA) London\nB) Paris\nC) Rome"
	const colours = "Which colour?\nA) red\nB) blue\nC) green"
	tests := []struct {
		source, question, pred, gold string
		correct                      bool
		rule                         Rule
		quirk                        Quirk
	}{
		{"tests/test_accuracy.py::test_numeric_exact", "How many?", "5", "5.0", true, RuleNumeric, ""},
		{"tests/test_accuracy.py::test_numeric_within_tolerance", "Value?", "0.67", "0.67234572345763", true, RuleNumeric, ""},
		{"tests/test_accuracy.py::test_numeric_mismatch", "How many?", "5", "42", false, RuleNumeric, ""},
		{"tests/test_accuracy.py::test_yes_no_correct", "Is it green?", "Yes", "yes", true, RuleYesNo, ""},
		{"tests/test_accuracy.py::test_yes_no_incorrect", "Is it green?", "Yes", "No", false, RuleYesNo, ""},
		{"tests/test_accuracy.py::test_choice_variants[A]", "What color?", "A", "A", true, RuleChoice, ""},
		{"tests/test_accuracy.py::test_choice_variants[(A)]", "What color?", "(A)", "A", true, RuleChoice, ""},
		{"tests/test_accuracy.py::test_choice_variants[a)]", "What color?", "a)", "A", true, RuleChoice, ""},
		{"tests/test_accuracy.py::test_choice_variants[The answer is A]", "What color?", "The answer is A", "A", true, RuleChoice, ""},
		{"tests/test_accuracy.py::test_choice_wrong", "What color?", "B", "A", false, RuleChoice, ""},
		// "b paris" is not 80 % of an option: it passes by the substring
		// fallback ("b" in "b paris").
		{"tests/test_accuracy.py::test_choice_from_option_text", capital, "b) Paris", "B", true, RuleSubstring, QuirkSubstring},
		{"tests/test_accuracy.py::test_exact_text", "Q", "Paris", "paris", true, RuleExact, ""},
		{"tests/test_accuracy.py::test_single_word_mismatch_no_judge", "Q", "London", "Paris", false, RuleExact, ""},
		{"tests/test_accuracy.py::test_substring_fallback_long_text", "Q", "the capital of france is paris", "capital of france is paris", true, RuleSubstring, QuirkSubstring},
		{"tests/test_accuracy.py::test_evaluate_dataset[0]", "Is it green?", "Yes", "Yes", true, RuleYesNo, ""},
		{"tests/test_accuracy.py::test_evaluate_dataset[1]", "How many?", "5", "5", true, RuleNumeric, ""},
		{"tests/test_accuracy.py::test_evaluate_dataset[2]", "Color?", "A", "B", false, RuleChoice, ""},
		{"tests/test_parity.py::ACCURACY_CASES[7]", "Capital?\nA) London\nB) Paris", "b) Paris", "B", true, RuleSubstring, QuirkSubstring},
		// quirks, each run through the package
		{"run: 15 % off exactly is not under 15 % (strict <)", "", "115", "100", false, RuleNumeric, ""},
		{"run: 14.99 % off passes with 2 decimals", "", "114.99", "100", true, RuleNumeric, QuirkNumeric15Pct},
		{"run: 2.500 has 1 decimal as a float, 13.6 % off passes", "", "2.500", "2.2", true, RuleNumeric, QuirkNumeric15Pct},
		{"run: three decimals get no 15 % grace", "", "114.125", "100", false, RuleNumeric, ""},
		{"run: 1 is the gold 1.4 rounded", "", "1", "1.4", true, RuleNumeric, QuirkNumericRoundedGold},
		{"run: halves round to even, 2 is 2.5 rounded", "", "2", "2.5", true, RuleNumeric, QuirkNumericRoundedGold},
		{"run: 3 is not 2.5 rounded", "", "3", "2.5", false, RuleNumeric, ""},
		{"run: 1,200 reads as 1, not 1200", "", "1,200", "1200", false, RuleNumeric, QuirkThousandsFirstDigits},
		{"run: 1,200 reads as 1 and equals 1", "", "1,200", "1", true, RuleNumeric, QuirkThousandsFirstDigits},
		{"run: COVID-19 reads as -19", "", "COVID-19", "19", false, RuleNumeric, ""},
		{"run: about is dropped before the number", "", "about 5", "5", true, RuleNumeric, ""},
		{"run: incorrect counts as yes", "", "incorrect", "yes", true, RuleYesNo, QuirkYesNoSubstring},
		{"run: not counts as no", "", "not sure", "no", true, RuleYesNo, QuirkYesNoSubstring},
		{"run: maybe is neither and wrong against no", "", "maybe", "no", false, RuleYesNo, ""},
		{"run: an empty answer is wrong against a yes/no gold", "", "", "no", false, RuleYesNo, ""},
		{"run: the answer is blue reads as option B", "", "The answer is blue", "B", true, RuleChoice, QuirkAnswerIsNoBoundary},
		{"run: choice of red reads as option O", "", "choice of red", "O", true, RuleChoice, QuirkOptionWordNoBoundary},
		{"run: option text is matched", colours, "green", "C", true, RuleChoice, ""},
		{"run: gold C is a substring of a bright color", "", "a bright color", "C", true, RuleSubstring, QuirkSubstring},
		{"run: an empty answer matches a letter gold", colours, "", "B", true, RuleSubstring, QuirkEmptyAnswer},
		{"run: an empty answer matches a word gold", "", "", "cat", true, RuleSubstring, QuirkEmptyAnswer},
		{"run: turn left contains left", "", "turn left", "left", true, RuleSubstring, QuirkSubstring},
		{"run: an exclamation mark is kept, Paris! is not paris", "", "Paris!", "paris", false, RuleExact, ""},
		{"run: two different single words are wrong", "", "dog", "cat", false, RuleExact, ""},
		{"run: the period of B. is dropped", "", "B.", "B", true, RuleChoice, ""},
		{"run: b ) keeps a space and is no letter", "", "b )", "B", false, RuleExact, ""},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			v, err := Judge(AnswerCase{Prediction: tt.pred, Gold: tt.gold, Question: tt.question}, ProfilePaper)
			if err != nil {
				t.Fatal(err)
			}
			if v.Correct != tt.correct || v.Rule != tt.rule || v.Quirk != tt.quirk {
				t.Errorf("%s: Judge(%q, %q) = correct %v rule %s quirk %q (%s), want %v %s %q",
					pkgRepo+tt.source, tt.pred, tt.gold, v.Correct, v.Rule, v.Quirk, v.Detail, tt.correct, tt.rule, tt.quirk)
			}
		})
	}
}

func TestPackageAnswerMatchAgreesWithTheReferencePackage(t *testing.T) {
	tests := []struct {
		source, pred, gold string
		want               bool
	}{
		{"tests/test_rewards.py::test_check_answer_match[B-B-True]", "B", "B", true},
		{"tests/test_rewards.py::test_check_answer_match[b-B-True]", "b", "B", true},
		{"tests/test_rewards.py::test_check_answer_match[B) the answer-B-True]", "B) the answer", "B", true},
		{"tests/test_rewards.py::test_check_answer_match[C-B-False]", "C", "B", false},
		{"tests/test_rewards.py::test_check_answer_match[yes-true-True]", "yes", "true", true},
		{"tests/test_rewards.py::test_check_answer_match[no-yes-False]", "no", "yes", false},
		{"tests/test_rewards.py::test_check_answer_match[5-5.0-True]", "5", "5.0", true},
		{"tests/test_rewards.py::test_check_answer_match[5-42-False]", "5", "42", false},
		{"run: 1 reads as yes", "1", "true", true},
		{"run: 1.005 is under 0.01 from 1", "1.005", "1", true},
		{"run: 101 is 1 % off 100, not under", "101", "100", false},
		{"run: a gold over 10 characters inside the answer", "the capital is paris", "capital is paris", true},
		{"run: a short gold is never a substring", "a bright color", "C", false},
		{"run: an empty answer is wrong", "", "B", false},
		{"run: e is not among a-d", "e) x", "E", false},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			if got := PackageAnswerMatch(tt.pred, tt.gold); got != tt.want {
				t.Errorf("%s: PackageAnswerMatch(%q, %q) = %v, want %v", pkgRepo+tt.source, tt.pred, tt.gold, got, tt.want)
			}
		})
	}
}

func TestTrainRewardAgreesWithTheReferencePackage(t *testing.T) {
	light := []string{"Observe the traffic light", "The light is green", "Green means go"}
	tests := []struct {
		source string
		steps  []string
		answer string
		ref    []string
		gold   string
		want   float64
	}{
		{"tests/test_rewards_parity.py::COMPLETIONS[0] (run)", []string{"The traffic light is green", "Green means go"}, "B", light, "B", 0.92},
		{"tests/test_rewards_parity.py::COMPLETIONS[1] (run)", []string{"Something unrelated entirely"}, "B", light, "B", 0.6},
		{"tests/test_rewards_parity.py::COMPLETIONS[2] (run)", []string{"The traffic light is green", "Green means go"}, "C", light, "B", 0.09600000000000002},
		{"tests/test_rewards_parity.py::COMPLETIONS[3] (run)", []string{"Random words here"}, "C", light, "B", 0},
		{"tests/test_rewards_parity.py::COMPLETIONS[5] (run)", nil, "no structure at all", light, "B", 0},
		{"tests/test_rewards.py::test_cpr_correct_beats_wrong, correct (run)", []string{"The light is green", "Green means go"}, "B", []string{"The light is green", "Green means go"}, "B", 1.0},
		{"tests/test_rewards.py::test_cpr_correct_beats_wrong, wrong (run)", []string{"The light is green", "Green means go"}, "B", []string{"The light is green", "Green means go"}, "C", 0.12},
		{"tests/test_rewards.py::test_reasoning_reward_zero_when_no_reference", []string{"The light is green"}, "B", nil, "C", 0},
		{"run: two steps without word tokens match (similarity.best_match_f1)", []string{"!!", "a b"}, "x", []string{"??", "a c"}, "y", 0.4 * 1 * 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			got := TrainReward(tt.steps, tt.answer, tt.ref, tt.gold)
			if math.Abs(got.Reward-tt.want) > 1e-12 {
				t.Errorf("%s: reward = %v (%+v), want %v", pkgRepo+tt.source, got.Reward, got, tt.want)
			}
		})
	}
}

func TestMatchAndOrderAgreeWithTheReferencePackage(t *testing.T) {
	// tests/test_reasoning.py embeds each label as a one-hot axis: equal
	// labels have cosine 1, different ones 0.
	onehot := func(pred, ref []string) [][]float64 {
		m := make([][]float64, len(pred))
		for i, p := range pred {
			m[i] = make([]float64, len(ref))
			for j, r := range ref {
				if p == r {
					m[i][j] = 1
				}
			}
		}
		return m
	}
	tests := []struct {
		source    string
		pred, ref []string
		order     OrderMethod
		p, r, f1  float64
		score     float64
		ordF1     float64 // α = 0.3
	}{
		{"tests/test_reasoning.py::test_perfect_match", []string{"a", "b", "c"}, []string{"a", "b", "c"}, OrderLIS, 1, 1, 1, 1, 1},
		{"tests/test_reasoning.py::test_partial_match_precision_recall", []string{"a", "b", "x"}, []string{"a", "b", "c", "d"}, OrderLIS,
			2.0 / 3, 0.5, 2 * (2.0 / 3 * 0.5) / (2.0/3 + 0.5), 1, 2 * (2.0 / 3 * 0.5) / (2.0/3 + 0.5)},
		{"tests/test_reasoning.py::test_no_overlap_zero_f1", []string{"a", "b"}, []string{"x", "y"}, OrderLIS, 0, 0, 0, 1, 0},
		{"tests/test_reasoning.py::test_empty_predicted_returns_zeros", nil, []string{"a", "b"}, OrderLIS, 0, 0, 0, 1, 0},
		{"tests/test_reasoning.py::test_lis_order_metric_selected", []string{"c", "b", "a"}, []string{"a", "b", "c"}, OrderLIS, 1, 1, 1, 1.0 / 3, 0.7 + 0.3/3},
		{"tests/test_reasoning.py::test_disordered_chain_penalized (kendall)", []string{"c", "b", "a"}, []string{"a", "b", "c"}, OrderKendall, 1, 1, 1, 0, 0.7},
		{"tests/test_reasoning.py::test_disordered_chain_penalized (ordered)", []string{"a", "b", "c"}, []string{"a", "b", "c"}, OrderKendall, 1, 1, 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			m, err := MatchMatrix(onehot(tt.pred, tt.ref), len(tt.pred), len(tt.ref), MatchConfig{Profile: ProfilePaper, Threshold: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			o, err := OrderedF1(m, tt.order, 0.3)
			if err != nil {
				t.Fatal(err)
			}
			if !near(m.Precision, tt.p) || !near(m.Recall, tt.r) || !near(m.F1, tt.f1) || !near(o.Score, tt.score) || !near(o.OrderedF1, tt.ordF1) {
				t.Errorf("%s: P %v R %v F1 %v order %v Ord.F1 %v, want %v %v %v %v %v", pkgRepo+tt.source,
					m.Precision, m.Recall, m.F1, o.Score, o.OrderedF1, tt.p, tt.r, tt.f1, tt.score, tt.ordF1)
			}
		})
	}
	t.Run("tests/test_reasoning.py::test_kendall_tau_perfect_and_reversed and test_lis_ratio", func(t *testing.T) {
		if KendallTau([]int{0, 1, 2}) != 1 || KendallTau([]int{2, 1, 0}) != -1 || LISRatio([]int{0, 1, 2}) != 1 || !near(LISRatio([]int{2, 1, 0}), 1.0/3) {
			t.Errorf("%s: τ/LIS of perfect and reversed chains wrong", pkgRepo)
		}
	})
	t.Run("tests/test_reasoning.py::test_fewer_than_two_matches_order_undefined", func(t *testing.T) {
		if KendallTau([]int{0}) != 1 || LISRatio(nil) != 1 {
			t.Errorf("%s: fewer than 2 matches must score 1", pkgRepo)
		}
	})
	t.Run("run: similarity.best_match_f1 of an empty reference is 0.0, not an error", func(t *testing.T) {
		m, err := MatchMatrix(nil, 2, 0, MatchConfig{Profile: ProfilePaper})
		if err != nil || m.F1 != 0 || m.EdgeCase != "empty reference" {
			t.Errorf("%s: got %+v, %v", pkgRepo, m, err)
		}
	})
}

// Issue 16 items that are not package vectors but the spec's rules.
func TestIssue16Scores(t *testing.T) {
	ctx := context.Background()
	items := []Item{
		{ID: "a", Answer: "yes", ReferenceSteps: []string{"r1", "r2"}},
		{ID: "b", Answer: "no", ReferenceSteps: []string{"r1"}},
		{ID: "c", Answer: "3", ReferenceSteps: nil},
	}
	preds := map[string]Reply{
		"a": {Steps: []string{"r1", "r2"}, Answer: "yes"},
		"c": {Steps: []string{"s1", "s2", "s3", "s4"}, Answer: "3"},
	}
	sim := pairSim{{"r1", "r1"}: 1, {"r2", "r2"}: 1}
	for _, order := range []OrderMethod{OrderLIS, OrderKendall} {
		t.Run("a missing prediction has order score 1 under "+string(order)+", so the mean order score counts it as 1", func(t *testing.T) {
			rep, err := Evaluate(ctx, items, preds, Config{Profile: ProfilePaper, Similarity: sim, Order: order})
			if err != nil {
				t.Fatal(err)
			}
			if b := rep.PerItem[1]; !b.Missing || b.Order.Score != 1 || b.Order.OrderedF1 != 0 {
				t.Errorf("missing item order = %+v", b.Order)
			}
			// a: 1, b: 1 (missing), c skipped → mean 1; Ord.F1 (1 + 0) / 2.
			if rep.LIS != 1 || rep.OrderedF1 != 0.5 {
				t.Errorf("LIS %v Ord.F1 %v, want 1 and 0.5", rep.LIS, rep.OrderedF1)
			}
		})
	}
	t.Run("paper: a skipped item is flagged and left out of average steps; accuracy and the training reward count it", func(t *testing.T) {
		rep, err := Evaluate(ctx, items, preds, Config{Profile: ProfilePaper, Similarity: sim})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.PerItem[2]
		if !c.Skipped || rep.Skipped != 1 || rep.StepItems != 2 {
			t.Errorf("skipped flag %v, report skipped %d step items %d", c.Skipped, rep.Skipped, rep.StepItems)
		}
		// steps: a 2, b 0 (missing); c (4 steps) left out.
		if rep.AvgSteps != 1 || !near(rep.Accuracy, 2.0/3) {
			t.Errorf("avg steps %v accuracy %v, want 1 and 2/3", rep.AvgSteps, rep.Accuracy)
		}
		// train: a correct with step F1 1 (lexical r1/r2 equal) → 1.0; c
		// correct with no reference → 0.6; b missing → 0.
		if !near(rep.TrainReward, 1.6/3) || !near(c.Train.Reward, 0.6) {
			t.Errorf("train reward %v, item c %+v", rep.TrainReward, c.Train)
		}
	})
	t.Run("seed: average steps counts every item", func(t *testing.T) {
		rep, err := Evaluate(ctx, items, preds, Config{Similarity: sim})
		if err != nil {
			t.Fatal(err)
		}
		if rep.AvgSteps != 2 || rep.Skipped != 0 {
			t.Errorf("avg steps %v skipped %d, want 2 and 0", rep.AvgSteps, rep.Skipped)
		}
	})
	t.Run("the thousands separator: seed reads 1,200 as 1200, paper as 1", func(t *testing.T) {
		s, _ := Judge(AnswerCase{Prediction: "1,200", Gold: "1200"}, ProfileSeed)
		p, _ := Judge(AnswerCase{Prediction: "1,200", Gold: "1200"}, ProfilePaper)
		if !s.Correct || p.Correct || p.Quirk != QuirkThousandsFirstDigits {
			t.Errorf("seed %+v, paper %+v", s, p)
		}
	})
}
