package crystal

// RewardWeights are the CPR weights (spec crystal.md "CPR"): Answer (aw) and
// Step (sw) weigh a correct answer and the step F1; Lambda (λ) scales the step
// credit of a wrong answer.
type RewardWeights struct {
	Answer float64 `json:"answer"`
	Step   float64 `json:"step"`
	Lambda float64 `json:"lambda"`
}

// WeightsFor returns the profile's CPR weights: seed 002's compute_cpr
// defaults aw 0.65, sw 0.35, λ 0.3 for ProfileSeed (and any unknown value);
// the paper's aw 0.6, sw 0.4 for ProfilePaper, with λ 0.3 (the spec gives no
// paper λ, so the seed's is kept).
func WeightsFor(p Profile) RewardWeights {
	if p == ProfilePaper {
		return RewardWeights{Answer: 0.6, Step: 0.4, Lambda: 0.3}
	}
	return RewardWeights{Answer: 0.65, Step: 0.35, Lambda: 0.3}
}

// CPR is the Causal Process Reward of seed 002's compute_cpr: aw·1 + sw·F1
// when the answer is correct, sw·F1·λ when it is wrong. stepF1 is the item's
// Match F1 in [0, 1]; inputs are used as given (not clamped), so a NaN F1
// gives NaN.
func CPR(correct bool, stepF1 float64, w RewardWeights) float64 {
	if correct {
		return w.Answer*1.0 + w.Step*stepF1
	}
	return w.Step * stepF1 * w.Lambda
}
