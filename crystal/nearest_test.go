package crystal

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"evident/crystal/embedder"
)

func TestExplainUnmatched(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name string
		sim  [][]float64
		cfg  MatchConfig
		want Unmatched
	}{
		{
			// Greedy takes (0,0) at 0.9; (1,0) at 0.8 and (0,1) at 0.5 pass
			// the seed's ≥ 0.30 but find a step taken; pred 2 peaks at 0.25.
			name: "steps that lost to a better pair are taken, the rest below the threshold",
			sim:  [][]float64{{0.9, 0.5}, {0.8, 0.2}, {0.1, 0.25}},
			cfg:  MatchConfig{Threshold: 0.3},
			want: Unmatched{
				Pred: []Nearest{{Step: 1, Other: 0, Similarity: 0.8, Taken: true}, {Step: 2, Other: 1, Similarity: 0.25}},
				Ref:  []Nearest{{Step: 1, Other: 0, Similarity: 0.5, Taken: true}},
			},
		},
		{
			name: "a pair exactly at the threshold was acceptable under seed's ≥",
			sim:  [][]float64{{0.9}, {0.3}},
			cfg:  MatchConfig{Threshold: 0.3},
			want: Unmatched{Pred: []Nearest{{Step: 1, Other: 0, Similarity: 0.3, Taken: true}}},
		},
		{
			name: "the same pair is below the threshold under paper's >",
			sim:  [][]float64{{0.9}, {0.3}},
			cfg:  MatchConfig{Profile: ProfilePaper, Threshold: 0.3},
			want: Unmatched{Pred: []Nearest{{Step: 1, Other: 0, Similarity: 0.3}}},
		},
		{
			name: "NaN never wins the nearest step",
			sim:  [][]float64{{nan, 0.1}},
			cfg:  MatchConfig{Threshold: 0.3},
			want: Unmatched{Pred: []Nearest{{Step: 0, Other: 1, Similarity: 0.1}}, Ref: []Nearest{{Step: 0, Other: 0, Similarity: nan}, {Step: 1, Other: 0, Similarity: 0.1}}},
		},
		{
			name: "a full match has nothing to explain",
			sim:  [][]float64{{0.9}},
			cfg:  MatchConfig{Threshold: 0.3},
			want: Unmatched{},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := MatchMatrix(c.sim, len(c.sim), len(c.sim[0]), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ExplainUnmatched(c.sim, m)
			if err != nil {
				t.Fatal(err)
			}
			if !sameUnmatched(got, c.want) {
				t.Errorf("ExplainUnmatched = %+v, want %+v", got, c.want)
			}
		})
	}
	t.Run("a matrix of the wrong shape is ErrMatrixShape", func(t *testing.T) {
		m, _ := MatchMatrix([][]float64{{0.1}}, 1, 1, MatchConfig{Threshold: 0.3})
		if _, err := ExplainUnmatched([][]float64{{0.1, 0.2}}, m); !errors.Is(err, ErrMatrixShape) {
			t.Errorf("err = %v, want ErrMatrixShape", err)
		}
	})
}

func TestExplainSteps(t *testing.T) {
	ctx := context.Background()
	sim := embedder.Lexical{}
	pred := []string{"count the red bars", "the answer is four"}
	ref := []string{"count the red bars", "compare with blue"}
	m, err := MatchSteps(ctx, sim, pred, ref, MatchConfig{Threshold: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	mat, err := sim.Similarities(ctx, pred, ref)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ExplainUnmatched(mat, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Pred) != 1 || want.Pred[0].Step != 1 {
		t.Fatalf("hand check: predicted step 2 should be the unmatched one, got %+v", want)
	}
	got, err := ExplainSteps(ctx, sim, pred, ref, m)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ExplainSteps = %+v, %v; want %+v", got, err, want)
	}
	if _, err := ExplainSteps(ctx, sim, pred[:1], ref, m); !errors.Is(err, ErrMatrixShape) {
		t.Errorf("steps that are not the match's: err = %v, want ErrMatrixShape", err)
	}
}

func sameUnmatched(a, b Unmatched) bool {
	same := func(x, y []Nearest) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			p, q := x[i], y[i]
			if p.Step != q.Step || p.Other != q.Other || p.Taken != q.Taken ||
				!(p.Similarity == q.Similarity || (math.IsNaN(p.Similarity) && math.IsNaN(q.Similarity))) {
				return false
			}
		}
		return true
	}
	return same(a.Pred, b.Pred) && same(a.Ref, b.Ref)
}
