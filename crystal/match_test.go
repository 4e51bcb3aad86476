package crystal

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"evident/crystal/embedder"
)

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= eps }

// matrixSim is a test Similarity returning a fixed matrix whatever the texts.
type matrixSim struct {
	m     [][]float64
	calls int
}

func (s *matrixSim) Name() string { return "matrix" }
func (s *matrixSim) Similarities(_ context.Context, pred, ref []string) ([][]float64, error) {
	s.calls++
	return s.m, nil
}

// failingSim fails every call, to prove it is not called.
type failingSim struct{}

func (failingSim) Name() string { return "failing" }
func (failingSim) Similarities(context.Context, []string, []string) ([][]float64, error) {
	return nil, errors.New("similarity must not be called")
}

func TestMatchMatrixGreedy(t *testing.T) {
	tests := []struct {
		name          string
		m             [][]float64
		profile       Profile
		pairs         []Pair
		p, r, f1      float64
		unPred, unRef []int
	}{
		{"a clean diagonal matches every step",
			[][]float64{{0.9, 0.1}, {0.2, 0.8}}, ProfileSeed,
			[]Pair{{0, 0, 0.9}, {1, 1, 0.8}}, 1, 1, 1, []int{}, []int{}},
		{"greedy takes the best pair first even when that loses a match",
			[][]float64{{0.9, 0.8}, {0.85, 0.1}}, ProfileSeed,
			[]Pair{{0, 0, 0.9}}, 0.5, 0.5, 0.5, []int{1}, []int{1}},
		{"a tie goes to the higher predicted index first",
			// (0.9, pred 1, ref 0) beats (0.9, pred 0, ref 0); pred 0 then takes ref 1.
			[][]float64{{0.9, 0.5}, {0.9, 0.0}}, ProfileSeed,
			[]Pair{{1, 0, 0.9}, {0, 1, 0.5}}, 1, 1, 1, []int{}, []int{}},
		{"a tie on the same predicted step goes to the higher reference index",
			// (0.9, 0, 1) beats (0.9, 0, 0); pred 1 then takes ref 0.
			[][]float64{{0.9, 0.9}, {0.5, 0.0}}, ProfileSeed,
			[]Pair{{0, 1, 0.9}, {1, 0, 0.5}}, 1, 1, 1, []int{}, []int{}},
		{"the paper profile breaks ties the same way",
			[][]float64{{0.9, 0.5}, {0.9, 0.0}}, ProfilePaper,
			[]Pair{{1, 0, 0.9}, {0, 1, 0.5}}, 1, 1, 1, []int{}, []int{}},
		{"a similarity of exactly 0.35 matches under seed",
			[][]float64{{0.35}}, ProfileSeed,
			[]Pair{{0, 0, 0.35}}, 1, 1, 1, []int{}, []int{}},
		{"a similarity of exactly 0.35 does not match under paper",
			[][]float64{{0.35}}, ProfilePaper,
			[]Pair{}, 0, 0, 0, []int{0}, []int{0}},
		{"just below 0.35 matches under neither profile (seed)",
			[][]float64{{math.Nextafter(0.35, 0)}}, ProfileSeed,
			[]Pair{}, 0, 0, 0, []int{0}, []int{0}},
		{"just above 0.35 matches under paper",
			[][]float64{{math.Nextafter(0.35, 1)}}, ProfilePaper,
			[]Pair{{0, 0, math.Nextafter(0.35, 1)}}, 1, 1, 1, []int{}, []int{}},
		{"more predicted than reference steps lowers precision only",
			[][]float64{{0.9}, {0.2}, {0.4}}, ProfileSeed,
			[]Pair{{0, 0, 0.9}}, 1.0 / 3, 1, 0.5, []int{1, 2}, []int{}},
		{"NaN similarities never match",
			[][]float64{{math.NaN(), 0.6}}, ProfileSeed,
			[]Pair{{0, 1, 0.6}}, 1, 0.5, 2.0 / 3, []int{}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nRef := len(tt.m[0])
			got, err := MatchMatrix(tt.m, len(tt.m), nRef, MatchConfig{Profile: tt.profile})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Pairs, tt.pairs) {
				t.Errorf("pairs = %v, want %v", got.Pairs, tt.pairs)
			}
			if !near(got.Precision, tt.p) || !near(got.Recall, tt.r) || !near(got.F1, tt.f1) {
				t.Errorf("P/R/F1 = %v/%v/%v, want %v/%v/%v", got.Precision, got.Recall, got.F1, tt.p, tt.r, tt.f1)
			}
			if !reflect.DeepEqual(got.UnmatchedPred, tt.unPred) || !reflect.DeepEqual(got.UnmatchedRef, tt.unRef) {
				t.Errorf("unmatched = %v / %v, want %v / %v", got.UnmatchedPred, got.UnmatchedRef, tt.unPred, tt.unRef)
			}
			if got.Profile != tt.profile || got.Threshold != DefaultThreshold || got.Inclusive != (tt.profile == ProfileSeed) {
				t.Errorf("report names profile %q threshold %v inclusive %v", got.Profile, got.Threshold, got.Inclusive)
			}
		})
	}
}

func TestMatchMatrixEmptyLists(t *testing.T) {
	tests := []struct {
		name       string
		profile    Profile
		nPred      int
		nRef       int
		f1, p, r   float64
		edge       string
		wantErr    error
		unmatchedR []int
	}{
		{"seed scores both lists empty as 1", ProfileSeed, 0, 0, 1, 1, 1, "both empty", nil, []int{}},
		{"seed scores an empty prediction as 0", ProfileSeed, 0, 2, 0, 0, 0, "empty prediction", nil, []int{0, 1}},
		{"seed scores an empty reference as 0", ProfileSeed, 3, 0, 0, 0, 0, "empty reference", nil, []int{}},
		// issue 16: the package's best_match_f1 returns 0.0, no error.
		{"paper scores both lists empty as 0", ProfilePaper, 0, 0, 0, 0, 0, "empty reference", nil, []int{}},
		{"paper scores an empty reference as 0", ProfilePaper, 2, 0, 0, 0, 0, "empty reference", nil, []int{}},
		{"paper scores an empty prediction as 0", ProfilePaper, 0, 2, 0, 0, 0, "empty prediction", nil, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MatchMatrix(nil, tt.nPred, tt.nRef, MatchConfig{Profile: tt.profile})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.F1 != tt.f1 || got.Precision != tt.p || got.Recall != tt.r || got.EdgeCase != tt.edge {
				t.Errorf("got F1 %v P %v R %v edge %q, want %v %v %v %q", got.F1, got.Precision, got.Recall, got.EdgeCase, tt.f1, tt.p, tt.r, tt.edge)
			}
			if !reflect.DeepEqual(got.UnmatchedRef, tt.unmatchedR) {
				t.Errorf("unmatched ref = %v, want %v", got.UnmatchedRef, tt.unmatchedR)
			}
		})
	}
}

func TestMatchMatrixRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		m       [][]float64
		nPred   int
		nRef    int
		cfg     MatchConfig
		wantErr error
	}{
		{"too few rows is a shape error", [][]float64{{0.5}}, 2, 1, MatchConfig{}, ErrMatrixShape},
		{"a short row is a shape error", [][]float64{{0.5, 0.5}, {0.5}}, 2, 2, MatchConfig{}, ErrMatrixShape},
		{"a nil matrix for non-empty lists is a shape error", nil, 1, 1, MatchConfig{}, ErrMatrixShape},
		{"a NaN threshold is a bad parameter", [][]float64{{0.5}}, 1, 1, MatchConfig{Threshold: math.NaN()}, ErrBadParameter},
		{"a negative size is a bad parameter", nil, -1, 1, MatchConfig{}, ErrBadParameter},
		{"an unknown profile is refused", [][]float64{{0.5}}, 1, 1, MatchConfig{Profile: "strict"}, ErrUnknownProfile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := MatchMatrix(tt.m, tt.nPred, tt.nRef, tt.cfg); !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestMatchSteps(t *testing.T) {
	ctx := context.Background()
	t.Run("the similarity is not asked when a list is empty", func(t *testing.T) {
		got, err := MatchSteps(ctx, failingSim{}, nil, []string{"r"}, MatchConfig{})
		if err != nil || got.F1 != 0 || got.EdgeCase != "empty prediction" {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	t.Run("a similarity error is returned, not swallowed", func(t *testing.T) {
		if _, err := MatchSteps(ctx, failingSim{}, []string{"p"}, []string{"r"}, MatchConfig{}); err == nil {
			t.Error("want an error")
		}
	})
	t.Run("a matrix of the wrong shape from the similarity is a shape error", func(t *testing.T) {
		s := &matrixSim{m: [][]float64{{0.9}}}
		if _, err := MatchSteps(ctx, s, []string{"a", "b"}, []string{"r"}, MatchConfig{}); !errors.Is(err, ErrMatrixShape) {
			t.Errorf("err = %v, want ErrMatrixShape", err)
		}
	})
	t.Run("the injected matrix decides the match", func(t *testing.T) {
		s := &matrixSim{m: [][]float64{{0.1, 0.7}}}
		got, err := MatchSteps(ctx, s, []string{"p"}, []string{"r0", "r1"}, MatchConfig{})
		if err != nil || !reflect.DeepEqual(got.Pairs, []Pair{{0, 1, 0.7}}) || s.calls != 1 {
			t.Errorf("got %+v, %v after %d calls", got, err, s.calls)
		}
	})
	t.Run("lexical similarity brings its own threshold of 0.3", func(t *testing.T) {
		// "the red cube" vs "a red ball": 1 common token of 3 and 3 → 1/3 ≥ 0.3.
		got, err := MatchSteps(ctx, embedder.Lexical{}, []string{"the red cube"}, []string{"a red ball"}, MatchConfig{})
		if err != nil || got.Threshold != 0.3 || len(got.Pairs) != 1 || !near(got.Pairs[0].Similarity, 1.0/3) {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	t.Run("an explicit threshold overrides the lexical hint", func(t *testing.T) {
		got, err := MatchSteps(ctx, embedder.Lexical{}, []string{"the red cube"}, []string{"a red ball"}, MatchConfig{Threshold: 0.35})
		if err != nil || len(got.Pairs) != 0 {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	t.Run("a nil similarity is a bad parameter", func(t *testing.T) {
		if _, err := MatchSteps(ctx, nil, []string{"p"}, []string{"r"}, MatchConfig{}); !errors.Is(err, ErrBadParameter) {
			t.Errorf("err = %v", err)
		}
	})
}

var benchPred = []string{
	"The image shows a bar chart with five bars.",
	"The x-axis lists the years 2015 to 2019.",
	"The tallest bar is the one for 2018.",
	"The 2018 bar reaches about 42 units.",
	"The 2016 bar is the shortest at 12 units.",
	"The difference between them is 30 units.",
	"The question asks for the largest value.",
	"So the answer is 42 units.",
}

var benchRef = []string{
	"The chart is a bar chart of yearly sales.",
	"Years 2015 through 2019 are on the horizontal axis.",
	"The bar for 2018 is the highest.",
	"Its value is 42 units.",
	"The lowest bar belongs to 2016.",
	"The 2016 value is 12 units.",
	"The largest value is asked for.",
	"Therefore the largest value is 42 units.",
}

func BenchmarkMatchStepsLexical8x8(b *testing.B) {
	ctx := context.Background()
	sim := embedder.Lexical{}
	var f1 float64
	for b.Loop() {
		m, err := MatchSteps(ctx, sim, benchPred, benchRef, MatchConfig{})
		if err != nil {
			b.Fatal(err)
		}
		f1 = m.F1
	}
	b.ReportMetric(f1, "F1")
}

func BenchmarkMatchMatrix8x8(b *testing.B) {
	m, err := embedder.Lexical{}.Similarities(context.Background(), benchPred, benchRef)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := MatchMatrix(m, 8, 8, MatchConfig{Threshold: embedder.LexicalThreshold}); err != nil {
			b.Fatal(err)
		}
	}
}
