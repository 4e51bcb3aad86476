package embedder

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"words are lowercased and punctuation splits them", "The Cube, is RED!", []string{"the", "cube", "is", "red"}},
		{"underscores and digits belong to words", "x_1 = 42.5", []string{"x_1", "42", "5"}},
		{"non-ASCII letters are word characters", "Größe été", []string{"größe", "été"}},
		{"a text of symbols has no token", "?! -- ...", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokens(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLexicalPair(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		quirk bool
		want  float64
	}{
		{"identical steps score 1", "The cube is red.", "the cube is red", false, 1},
		{"two shared of three and two tokens score 2/√6", "the cat sat", "The cat", false, 2 / math.Sqrt(6)},
		{"repeated tokens count as a multiset", "a a b", "a b b", false, 2.0 / 3},
		{"no shared token scores 0", "red cube", "blue ball", false, 0},
		{"a step without tokens scores 0 against a word", "...", "cube", true, 0},
		{"two steps without tokens score 0 by default", "...", "!!", false, 0},
		{"two steps without tokens score 1 with the paper quirk", "...", "!!", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Lexical{EmptyStepsMatch: tt.quirk}).Pair(tt.a, tt.b); !near(got, tt.want) {
				t.Errorf("Pair(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestLexicalSimilarities(t *testing.T) {
	l := Lexical{}
	m, err := l.Similarities(context.Background(), []string{"red cube", "blue ball"}, []string{"the red cube", "ball", "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{2 / math.Sqrt(6), 0, 0}, {0, 1 / math.Sqrt(2), 0}}
	for i := range want {
		for j := range want[i] {
			if !near(m[i][j], want[i][j]) {
				t.Errorf("m[%d][%d] = %v, want %v", i, j, m[i][j], want[i][j])
			}
		}
	}
	if l.Name() != "lexical" || l.DefaultThreshold() != 0.3 {
		t.Errorf("name %q threshold %v", l.Name(), l.DefaultThreshold())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Similarities(ctx, []string{"a"}, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
}

// stubEmbedder returns fixed vectors by text.
type stubEmbedder struct {
	vecs  map[string][]float32
	short bool // return one vector too few
}

func (stubEmbedder) Name() string { return "stub" }
func (s stubEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for _, t := range texts {
		out = append(out, s.vecs[t])
	}
	if s.short {
		out = out[:len(out)-1]
	}
	return out, nil
}

func TestCosine(t *testing.T) {
	vecs := map[string][]float32{"x": {1, 0}, "y": {0, 2}, "xy": {3, 3}, "zero": {0, 0}, "odd": {1, 0, 0}, "nan": {float32(math.NaN()), 0}}
	ctx := context.Background()
	t.Run("cosine normalises the vectors itself", func(t *testing.T) {
		m, err := Cosine{Embedder: stubEmbedder{vecs: vecs}}.Similarities(ctx, []string{"x", "xy"}, []string{"y", "x", "zero"})
		if err != nil {
			t.Fatal(err)
		}
		want := [][]float64{{0, 1, 0}, {1 / math.Sqrt(2), 1 / math.Sqrt(2), 0}}
		for i := range want {
			for j := range want[i] {
				if !near(m[i][j], want[i][j]) {
					t.Errorf("m[%d][%d] = %v, want %v", i, j, m[i][j], want[i][j])
				}
			}
		}
	})
	for _, bad := range []struct {
		name string
		c    Cosine
		pred []string
	}{
		{"too few vectors are malformed", Cosine{Embedder: stubEmbedder{vecs: vecs, short: true}}, []string{"x"}},
		{"vectors of different lengths are malformed", Cosine{Embedder: stubEmbedder{vecs: vecs}}, []string{"odd"}},
		{"a NaN component is malformed", Cosine{Embedder: stubEmbedder{vecs: vecs}}, []string{"nan"}},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if _, err := bad.c.Similarities(ctx, bad.pred, []string{"x"}); !errors.Is(err, ErrEmbedding) {
				t.Errorf("err = %v, want ErrEmbedding", err)
			}
		})
	}
	t.Run("a Cosine without embedder is an error, not a panic", func(t *testing.T) {
		if _, err := (Cosine{}).Similarities(ctx, []string{"x"}, []string{"y"}); err == nil {
			t.Error("want an error")
		}
	})
}
