package crystal

import (
	"errors"
	"math"
	"testing"
)

func TestLIS(t *testing.T) {
	tests := []struct {
		name  string
		seq   []int
		lis   int
		ratio float64
	}{
		{"an empty sequence has LIS 0 and ratio 1", nil, 0, 1},
		{"a single match has LIS 1 and ratio 1", []int{4}, 1, 1},
		{"an increasing sequence is fully in order", []int{0, 1, 2, 5}, 4, 1},
		{"a reversed sequence keeps one step", []int{3, 2, 1, 0}, 1, 0.25},
		{"one swapped pair loses one step", []int{0, 2, 1, 3}, 3, 0.75},
		{"a step moved to the front loses one step", []int{3, 0, 1, 2}, 3, 0.75},
		{"equal values are not strictly increasing", []int{1, 1, 1}, 1, 1.0 / 3},
		{"a zigzag keeps the best run", []int{2, 0, 3, 1, 4}, 3, 0.6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LISLength(tt.seq); got != tt.lis {
				t.Errorf("LISLength(%v) = %d, want %d", tt.seq, got, tt.lis)
			}
			if got := LISRatio(tt.seq); !near(got, tt.ratio) {
				t.Errorf("LISRatio(%v) = %v, want %v", tt.seq, got, tt.ratio)
			}
		})
	}
}

func TestKendallTau(t *testing.T) {
	tests := []struct {
		name string
		seq  []int
		tau  float64
	}{
		{"fewer than two matches count as in order", []int{7}, 1},
		{"an increasing sequence has tau 1", []int{0, 1, 2}, 1},
		{"a reversed sequence has tau -1", []int{2, 1, 0}, -1},
		{"one swap among three has tau one third", []int{0, 2, 1}, 1.0 / 3},            // C 2, D 1
		{"a step moved to the front of four has tau zero", []int{3, 0, 1, 2}, 0},       // C 3, D 3
		{"two discordant of six pairs give tau one third", []int{2, 0, 1, 3}, 1.0 / 3}, // C 4, D 2
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KendallTau(tt.seq); !near(got, tt.tau) {
				t.Errorf("KendallTau(%v) = %v, want %v", tt.seq, got, tt.tau)
			}
		})
	}
}

func TestOrderedF1(t *testing.T) {
	// Pairs (pred, ref): (2,0) (0,1) (1,2) (3,3): in reference order the
	// predicted indices read 2 0 1 3 → LIS 3/4, τ = (4−2)/6 = 1/3.
	m := Match{F1: 0.8, Pairs: []Pair{{0, 1, 0.9}, {2, 0, 0.8}, {1, 2, 0.7}, {3, 3, 0.6}}}
	tests := []struct {
		name    string
		match   Match
		method  OrderMethod
		alpha   float64
		score   float64
		ordered float64
	}{
		{"LIS with alpha 0.3 discounts by 0.3 of the missing order", m, OrderLIS, 0.3, 0.75, 0.8 * (0.7 + 0.3*0.75)},
		{"the empty method means LIS", m, "", 0.3, 0.75, 0.74},
		{"Kendall scores (tau+1)/2", m, OrderKendall, 0.3, 2.0 / 3, 0.8 * (0.7 + 0.2)},
		{"alpha 1 multiplies by the order score alone", m, OrderLIS, 1, 0.75, 0.6},
		{"alpha 0 leaves F1 unchanged", m, OrderLIS, 0, 0.75, 0.8},
		{"a single pair is in order", Match{F1: 0.5, Pairs: []Pair{{3, 0, 0.9}}}, OrderLIS, 0.3, 1, 0.5},
		{"no pair gives F1 0 whatever the order", Match{Pairs: []Pair{}}, OrderKendall, 0.3, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OrderedF1(tt.match, tt.method, tt.alpha)
			if err != nil {
				t.Fatal(err)
			}
			if !near(got.Score, tt.score) || !near(got.OrderedF1, tt.ordered) {
				t.Errorf("score %v ordered %v, want %v %v", got.Score, got.OrderedF1, tt.score, tt.ordered)
			}
		})
	}
	for _, bad := range []struct {
		name   string
		method OrderMethod
		alpha  float64
	}{
		{"an unknown method is refused", "spearman", 0.3},
		{"alpha above 1 is refused", OrderLIS, 1.5},
		{"negative alpha is refused", OrderLIS, -0.1},
		{"NaN alpha is refused", OrderLIS, math.NaN()},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if _, err := OrderedF1(m, bad.method, bad.alpha); !errors.Is(err, ErrBadParameter) {
				t.Errorf("err = %v, want ErrBadParameter", err)
			}
		})
	}
}

func TestCPR(t *testing.T) {
	tests := []struct {
		name    string
		profile Profile
		correct bool
		f1      float64
		want    float64
	}{
		{"seed: a correct answer earns 0.65 plus 0.35 of the step F1", ProfileSeed, true, 0.5, 0.825},
		{"seed: a wrong answer earns 0.35 × F1 × 0.3", ProfileSeed, false, 0.5, 0.0525},
		{"seed: a correct answer with perfect steps earns 1", ProfileSeed, true, 1, 1},
		{"seed: a wrong answer with no matched step earns 0", ProfileSeed, false, 0, 0},
		{"paper: a correct answer earns 0.6 plus 0.4 of the step F1", ProfilePaper, true, 0.5, 0.8},
		{"paper: a wrong answer earns 0.4 × F1 × 0.3", ProfilePaper, false, 0.5, 0.06},
		{"the empty profile uses the seed weights", "", true, 0, 0.65},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CPR(tt.correct, tt.f1, WeightsFor(tt.profile)); !near(got, tt.want) {
				t.Errorf("CPR = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseProfile(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Profile
		err      error
	}{
		{"the empty name is the seed profile", "", ProfileSeed, nil},
		{"seed is read", "seed", ProfileSeed, nil},
		{"paper is read", "paper", ProfilePaper, nil},
		{"names are case-sensitive", "Paper", "", ErrUnknownProfile},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProfile(tt.in)
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("ParseProfile(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
}
