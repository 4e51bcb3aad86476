package embedder

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// multisetOverlap is the word-overlap score written the plain way (token
// counts in maps), as the reference package's reward computes it: the
// oracle for the prepared, token-numbered Lexical.
func multisetOverlap(a, b string, emptyMatch bool) float64 {
	ta, tb := Tokens(a), Tokens(b)
	if len(ta) == 0 || len(tb) == 0 {
		if len(ta) == 0 && len(tb) == 0 && emptyMatch {
			return 1
		}
		return 0
	}
	count := map[string]int{}
	for _, t := range tb {
		count[t]++
	}
	common := 0
	for _, t := range ta {
		if count[t] > 0 {
			count[t]--
			common++
		}
	}
	return float64(common) / math.Sqrt(float64(len(ta))*float64(len(tb)))
}

func TestLexicalPrepareGivesTheMultisetOverlapBitForBit(t *testing.T) {
	ref := []string{"The red bar is taller than the blue bar.", "...", "", "Größe ÉTÉ été 12_b", "bar bar bar", "x\xffy"}
	pred := []string{"the bar is red", "!!", "été größe", "bar", "unknown words only", "x y", ""}
	for _, quirk := range []bool{false, true} {
		t.Run(fmt.Sprintf("EmptyStepsMatch %v", quirk), func(t *testing.T) {
			l := Lexical{EmptyStepsMatch: quirk}
			p, err := l.Prepare(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			m, err := p.Similarities(context.Background(), pred)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := l.Similarities(context.Background(), pred, ref)
			for i := range pred {
				for j := range ref {
					want := multisetOverlap(pred[i], ref[j], quirk)
					if m[i][j] != want || again[i][j] != want {
						t.Errorf("pred %q ref %q: prepared %v, Similarities %v, want %v", pred[i], ref[j], m[i][j], again[i][j], want)
					}
				}
			}
		})
	}
	t.Run("invalid UTF-8 splits words as Python's \\w+ on the replacement character", func(t *testing.T) {
		if got := Tokens("x\xffy"); len(got) != 2 || got[0] != "x" || got[1] != "y" {
			t.Errorf("Tokens = %q, want [x y]", got)
		}
	})
}

func TestLexicalPreparedSimilaritiesOfNoPredictionIsNil(t *testing.T) {
	p, _ := Lexical{}.Prepare(context.Background(), []string{"a"})
	if m, err := p.Similarities(context.Background(), nil); m != nil || err != nil {
		t.Errorf("got %v, %v", m, err)
	}
}

// randomVecs gives n vectors of dim components; every fifth is zero.
func randomVecs(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		if i%5 == 4 {
			continue
		}
		for k := range out[i] {
			out[i][k] = float32(r.NormFloat64())
		}
	}
	return out
}

// mapEmbedder serves fixed vectors by text.
type mapEmbedder map[string][]float32

func (mapEmbedder) Name() string { return "map" }
func (m mapEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for k, t := range texts {
		v, ok := m[t]
		if !ok {
			return nil, fmt.Errorf("no vector for %q", t)
		}
		out[k] = v
	}
	return out, nil
}

func TestCosinePrepareGivesCosineSimilaritiesBitForBit(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 4))
	for _, dim := range []int{1, 3, 4, 5, 7, 8, 768} {
		for nRef := 0; nRef <= 9; nRef++ {
			vecs := randomVecs(r, nRef+6, dim)
			emb := mapEmbedder{}
			var pred, ref []string
			for k, v := range vecs {
				name := fmt.Sprintf("t%d", k)
				emb[name] = v
				if k < 6 {
					pred = append(pred, name)
				} else {
					ref = append(ref, name)
				}
			}
			for _, cache := range []*Cache{nil, NewCache()} {
				c := Cosine{Embedder: emb, Cache: cache}
				want, err := c.Similarities(context.Background(), pred, ref)
				if err != nil {
					t.Fatal(err)
				}
				p, err := c.Prepare(context.Background(), ref)
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.Similarities(context.Background(), pred)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					for j := range want[i] {
						if got[i][j] != want[i][j] {
							t.Fatalf("dim %d, %d refs, cache %v: [%d][%d] prepared %v, Similarities %v", dim, nRef, cache != nil, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		}
	}
}

func TestDot4x4IsTheScalarLoopBitForBit(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{0, 3, 4, 9, 768, 1021} {
		a := make([]float32, n+1)
		var b [4][]float64
		for k := range a {
			a[k] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
		}
		for q := range b {
			b[q] = make([]float64, n+1)
			for k := range b[q] {
				b[q][k] = float64(float32(r.NormFloat64()))
			}
		}
		var got, want [16]float64
		dot4x4(&a[0], &b[0][0], &b[1][0], &b[2][0], &b[3][0], n, &got)
		dot4x4Generic(&a[0], &b[0][0], &b[1][0], &b[2][0], &b[3][0], n, &want)
		if got != want {
			t.Errorf("n %d: dot4x4 %v, generic %v", n, got, want)
		}
		// dotFinish after either equals dot on the float32 vectors.
		b32 := make([]float32, n)
		for k := range b32 {
			b32[k] = float32(b[0][k])
		}
		if d, w := dotFinish(got[0:4], a[:n], b[0]), dot(a[:n], b32); d != w {
			t.Errorf("n %d: dotFinish %v, dot %v", n, d, w)
		}
	}
}

func TestCosinePrepareRefusesMalformedVectors(t *testing.T) {
	emb := mapEmbedder{"a": {1, 2}, "b": {1, 2, 3}, "nan": {float32(math.NaN()), 1}, "p": {1, 0}, "q": {1, 0, 0}}
	ctx := context.Background()
	tests := []struct {
		name      string
		ref, pred []string
		want      string
	}{
		{"reference vectors of different lengths", []string{"a", "b"}, nil, "reference vector 1 has 3 dimensions"},
		{"a reference vector with NaN", []string{"nan"}, nil, "reference vector 0 is not finite"},
		{"a predicted vector of another length than the references", []string{"a"}, []string{"p", "q"}, "vector 1 has 3 dimensions, vector 0 has 2"},
		{"a predicted vector with NaN", []string{"a"}, []string{"nan"}, "vector 0 is not finite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Cosine{Embedder: emb}.Prepare(ctx, tt.ref)
			if err == nil {
				_, err = p.Similarities(ctx, tt.pred)
			}
			if !errors.Is(err, ErrEmbedding) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrEmbedding with %q", err, tt.want)
			}
		})
	}
	t.Run("an embedder failure at Prepare is returned", func(t *testing.T) {
		if _, err := (Cosine{Embedder: emb}).Prepare(ctx, []string{"missing"}); err == nil || !strings.Contains(err.Error(), `no vector for "missing"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("Prepare stores the embedded references in the cache", func(t *testing.T) {
		c := NewCache()
		if _, err := (Cosine{Embedder: emb, Cache: c}).Prepare(ctx, []string{"a", "p"}); err != nil {
			t.Fatal(err)
		}
		if v, ok := c.Get("map", "p"); !ok || len(v) != 2 {
			t.Errorf("cache holds %v, %v", v, ok)
		}
	})
}
