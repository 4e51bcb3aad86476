package crystal

import (
	"context"
	"fmt"

	"evident/crystal/embedder"
)

// Nearest explains one unmatched step: the step on the other side it is most
// similar to, and whether that pair would have passed the threshold (so the
// other step was taken by a better pair first) or fell below it.
type Nearest struct {
	// Step is the unmatched step's 0-based index on its own side, Other the
	// nearest step's 0-based index on the other side.
	Step, Other int
	// Similarity of the two steps.
	Similarity float64
	// Taken: the pair passes Match.Accepts and Other is matched to another
	// step, so greedy matching gave it away; false: below the threshold.
	Taken bool
}

// Unmatched is why each unmatched step of a Match stayed unmatched: Pred for
// the predicted steps (nearest reference step), Ref for the reference steps
// (nearest predicted step), each ascending by Step.
type Unmatched struct {
	Pred, Ref []Nearest
}

// ExplainUnmatched explains the unmatched steps of m on the similarity matrix
// sim it was computed from (sim[i][j]: predicted step i vs reference step j,
// m.NPred × m.NRef). The nearest step is the first one at the highest
// similarity; NaN never wins. With no steps on one side there is nothing to
// compare and the result is empty. Errors: ErrMatrixShape.
func ExplainUnmatched(sim [][]float64, m Match) (Unmatched, error) {
	var u Unmatched
	if m.NPred == 0 || m.NRef == 0 || (len(m.UnmatchedPred) == 0 && len(m.UnmatchedRef) == 0) {
		return u, nil
	}
	if len(sim) != m.NPred {
		return u, fmt.Errorf("%w: %d rows for %d predicted steps", ErrMatrixShape, len(sim), m.NPred)
	}
	for i, row := range sim {
		if len(row) != m.NRef {
			return u, fmt.Errorf("%w: row %d has %d columns for %d reference steps", ErrMatrixShape, i, len(row), m.NRef)
		}
	}
	predTaken := make([]bool, m.NPred)
	refTaken := make([]bool, m.NRef)
	for _, p := range m.Pairs {
		if p.Pred >= 0 && p.Pred < m.NPred && p.Ref >= 0 && p.Ref < m.NRef {
			predTaken[p.Pred], refTaken[p.Ref] = true, true
		}
	}
	for _, i := range m.UnmatchedPred {
		j := argmax(sim[i])
		u.Pred = append(u.Pred, Nearest{Step: i, Other: j, Similarity: sim[i][j], Taken: m.Accepts(sim[i][j]) && refTaken[j]})
	}
	col := make([]float64, m.NPred)
	for _, j := range m.UnmatchedRef {
		for i := range sim {
			col[i] = sim[i][j]
		}
		i := argmax(col)
		u.Ref = append(u.Ref, Nearest{Step: j, Other: i, Similarity: col[i], Taken: m.Accepts(col[i]) && predTaken[i]})
	}
	return u, nil
}

// ExplainSteps is ExplainUnmatched on the similarities sim gives for pred and
// ref, the step texts m was computed from (the matrix is asked for only when
// some step is unmatched and both sides have steps). Errors: sim's own,
// wrapped with its name, or ErrMatrixShape.
func ExplainSteps(ctx context.Context, sim embedder.Similarity, pred, ref []string, m Match) (Unmatched, error) {
	if len(pred) != m.NPred || len(ref) != m.NRef {
		return Unmatched{}, fmt.Errorf("%w: %d×%d steps for a match of %d×%d", ErrMatrixShape, len(pred), len(ref), m.NPred, m.NRef)
	}
	if len(pred) == 0 || len(ref) == 0 || (len(m.UnmatchedPred) == 0 && len(m.UnmatchedRef) == 0) {
		return Unmatched{}, nil
	}
	if sim == nil {
		return Unmatched{}, fmt.Errorf("%w: nil similarity", ErrBadParameter)
	}
	mat, err := sim.Similarities(ctx, pred, ref)
	if err != nil {
		return Unmatched{}, fmt.Errorf("crystal: similarity %s: %w", sim.Name(), err)
	}
	return ExplainUnmatched(mat, m)
}

// argmax is the first index of the largest value (NaN never wins).
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] || (v[best] != v[best] && x == x) {
			best = i
		}
	}
	return best
}
