package crystal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"evident/crystal/embedder"
)

// DefaultThreshold is the similarity a predicted/reference step pair needs to
// be matchable (seed 002 THRESHOLD = 0.35; the paper uses the same value with
// a strict comparison).
const DefaultThreshold = 0.35

// Errors of the step matcher.
var (
	// ErrEmptyReference named the `paper` profile's refusal of an item
	// without reference steps. MatchMatrix no longer returns it (issue 16):
	// the package's step F1 (similarity.best_match_f1, the one its reward
	// uses) returns 0.0 for an empty list, and Evaluate skips such an item
	// under paper (ItemScore.Skipped), as evaluate_single's ValueError does.
	// Kept for callers that test for it.
	ErrEmptyReference = errors.New("crystal: empty reference steps")
	// ErrMatrixShape: a similarity matrix is not len(pred) × len(ref).
	ErrMatrixShape = errors.New("crystal: similarity matrix has the wrong shape")
	// ErrBadParameter: a threshold, α or order method is NaN, out of range or
	// unknown.
	ErrBadParameter = errors.New("crystal: bad parameter")
)

// MatchConfig parameterises Match F1.
type MatchConfig struct {
	// Profile chooses the comparison (seed: sim ≥ threshold, paper: sim >
	// threshold) and the empty-list rules. "" means ProfileSeed.
	Profile Profile
	// Threshold is the similarity cut-off. 0 means the default: the
	// similarity's DefaultThreshold when it has one (Lexical: 0.3), else
	// DefaultThreshold (0.35). NaN or ±Inf is ErrBadParameter.
	Threshold float64
}

// Pair is one accepted 1:1 match: predicted step Pred (0-based index into the
// prediction) with reference step Ref (0-based), at similarity Similarity.
type Pair struct {
	Pred       int     `json:"pred"`
	Ref        int     `json:"ref"`
	Similarity float64 `json:"similarity"`
}

// Match is the Match F1 of one item with its evidence (spec crystal.md "Match
// F1 (seed)").
type Match struct {
	Profile Profile `json:"profile"`
	// Threshold actually used, and whether a pair exactly at it counts
	// (true under seed's ≥, false under paper's >).
	Threshold float64 `json:"threshold"`
	Inclusive bool    `json:"inclusive"`
	// NPred and NRef are the step counts of prediction and reference.
	NPred int `json:"n_pred"`
	NRef  int `json:"n_ref"`
	// Pairs in acceptance order: similarity descending, ties by higher
	// predicted index, then higher reference index.
	Pairs []Pair `json:"pairs"`
	// UnmatchedPred and UnmatchedRef are the indices left over, ascending.
	UnmatchedPred []int `json:"unmatched_pred"`
	UnmatchedRef  []int `json:"unmatched_ref"`
	// Precision = matched/NPred, Recall = matched/NRef, F1 = 2PR/(P+R), 0 when
	// P+R = 0; all in [0, 1]. Edge rules override them (EdgeCase).
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// EdgeCase names the empty-list rule that decided, "" when none:
	// "both empty" (seed: P = R = F1 = 1), "empty prediction" or
	// "empty reference" (0; under paper also when both are empty).
	EdgeCase string `json:"edge_case,omitempty"`
}

// Accepts says whether a pair at similarity sim may be matched under m's
// rule: sim > Threshold, or sim = Threshold when Inclusive (seed ≥, paper >;
// spec crystal.md "Match F1"). NaN is never accepted. MatchMatrix chooses its
// candidates with it, and the screen and the reports explain unmatched steps
// with it.
func (m Match) Accepts(sim float64) bool {
	return sim > m.Threshold || (m.Inclusive && sim == m.Threshold)
}

// MatchSteps computes Match F1 of predicted against reference steps, asking
// sim for the similarity matrix only when both lists are non-empty.
//
// Errors: ErrUnknownProfile, ErrBadParameter (threshold), ErrMatrixShape
// (sim returned a matrix of the wrong shape), or sim's own error. A nil sim
// is an error.
func MatchSteps(ctx context.Context, sim embedder.Similarity, pred, ref []string, cfg MatchConfig) (Match, error) {
	if sim == nil {
		return Match{}, fmt.Errorf("%w: nil similarity", ErrBadParameter)
	}
	th, err := resolveThreshold(cfg.Threshold, sim)
	if err != nil {
		return Match{}, err
	}
	cfg.Threshold = th
	var m [][]float64
	if len(pred) > 0 && len(ref) > 0 {
		var err error
		if m, err = sim.Similarities(ctx, pred, ref); err != nil {
			return Match{}, fmt.Errorf("crystal: similarity %s: %w", sim.Name(), err)
		}
	}
	return MatchMatrix(m, len(pred), len(ref), cfg)
}

// MatchMatrix is the greedy matcher on an explicit similarity matrix sim of
// nPred rows and nRef columns (sim[i][j]: predicted step i vs reference step
// j). It is seed 002's compute_match_f1 after the embedding step:
//
//   - Empty lists first. seed: both empty → P = R = F1 = 1; one empty → 0.
//     paper: either empty → 0 (the package's best_match_f1 returns 0.0;
//     EdgeCase "empty reference" when the reference is empty).
//     The matrix is not read in these cases (it may be nil).
//   - Candidates: pairs with sim ≥ threshold (seed) or > threshold (paper);
//     NaN similarities are never candidates.
//   - Greedy 1:1: candidates by similarity descending, ties by higher
//     predicted index then higher reference index — the order of seed 002's
//     `pairs.sort(reverse=True)` on (score, i, j) tuples and of the reference
//     package; a pair is accepted when neither step is taken yet.
//   - P = matched/nPred, R = matched/nRef, F1 = 2PR/(P+R), 0 when P+R = 0.
//
// Errors: ErrUnknownProfile, ErrBadParameter (negative sizes, NaN/Inf
// threshold), ErrMatrixShape.
func MatchMatrix(sim [][]float64, nPred, nRef int, cfg MatchConfig) (Match, error) {
	p, err := cfg.Profile.resolve()
	if err != nil {
		return Match{}, err
	}
	th, err := resolveThreshold(cfg.Threshold, nil)
	if err != nil {
		return Match{}, err
	}
	if nPred < 0 || nRef < 0 {
		return Match{}, fmt.Errorf("%w: negative step count", ErrBadParameter)
	}
	res := Match{Profile: p, Threshold: th, Inclusive: p == ProfileSeed, NPred: nPred, NRef: nRef,
		Pairs: []Pair{}, UnmatchedPred: seq(nPred), UnmatchedRef: seq(nRef)}

	switch {
	case p == ProfilePaper && nRef == 0:
		res.EdgeCase = "empty reference"
		return res, nil
	case nPred == 0 && nRef == 0: // seed only
		res.Precision, res.Recall, res.F1, res.EdgeCase = 1, 1, 1, "both empty"
		return res, nil
	case nPred == 0:
		res.EdgeCase = "empty prediction"
		return res, nil
	case nRef == 0:
		res.EdgeCase = "empty reference"
		return res, nil
	}

	if len(sim) != nPred {
		return Match{}, fmt.Errorf("%w: %d rows for %d predicted steps", ErrMatrixShape, len(sim), nPred)
	}
	var cands []Pair
	for i, row := range sim {
		if len(row) != nRef {
			return Match{}, fmt.Errorf("%w: row %d has %d columns for %d reference steps", ErrMatrixShape, i, len(row), nRef)
		}
		for j, s := range row {
			if res.Accepts(s) {
				cands = append(cands, Pair{Pred: i, Ref: j, Similarity: s})
			}
		}
	}
	// (similarity, pred, ref) is a total order on the candidates (no NaN, no
	// two with the same indices), so any sort gives the same list.
	slices.SortFunc(cands, func(x, y Pair) int {
		switch {
		case x.Similarity != y.Similarity:
			return cmp.Compare(y.Similarity, x.Similarity)
		case x.Pred != y.Pred:
			return y.Pred - x.Pred
		}
		return y.Ref - x.Ref
	})
	predUsed := make([]bool, nPred)
	refUsed := make([]bool, nRef)
	for _, c := range cands {
		if predUsed[c.Pred] || refUsed[c.Ref] {
			continue
		}
		predUsed[c.Pred], refUsed[c.Ref] = true, true
		res.Pairs = append(res.Pairs, c)
	}
	res.UnmatchedPred = unused(predUsed)
	res.UnmatchedRef = unused(refUsed)
	tp := float64(len(res.Pairs))
	res.Precision = tp / float64(nPred)
	res.Recall = tp / float64(nRef)
	if s := res.Precision + res.Recall; s > 0 {
		res.F1 = 2 * res.Precision * res.Recall / s
	}
	return res, nil
}

// resolveThreshold applies MatchConfig.Threshold's default: 0 means sim's
// hint when it has one (sim may be nil), else DefaultThreshold. NaN and ±Inf
// are ErrBadParameter.
func resolveThreshold(th float64, sim embedder.Similarity) (float64, error) {
	if th == 0 {
		th = DefaultThreshold
		if h, ok := sim.(embedder.ThresholdHinter); ok {
			th = h.DefaultThreshold()
		}
	}
	if math.IsNaN(th) || math.IsInf(th, 0) {
		return 0, fmt.Errorf("%w: threshold %v", ErrBadParameter, th)
	}
	return th, nil
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func unused(used []bool) []int {
	out := []int{}
	for i, u := range used {
		if !u {
			out = append(out, i)
		}
	}
	return out
}
