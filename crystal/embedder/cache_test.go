package embedder

import (
	"context"
	"errors"
	"math"
	"testing"
)

// countingStub records what reaches the embedder.
type countingStub struct {
	stubEmbedder
	calls [][]string
}

func (c *countingStub) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls = append(c.calls, append([]string(nil), texts...))
	return c.stubEmbedder.Embed(ctx, texts)
}

func TestCache(t *testing.T) {
	ctx := context.Background()
	vecs := map[string][]float32{"p": {1, 0}, "q": {0, 1}, "r1": {1, 1}, "r2": {2, 0}}
	t.Run("Cosine embeds a reference step once and serves it from the cache after", func(t *testing.T) {
		e := &countingStub{stubEmbedder: stubEmbedder{vecs: vecs}}
		c := NewCache()
		cos := Cosine{Embedder: e, Cache: c}
		m1, err := cos.Similarities(ctx, []string{"p"}, []string{"r1", "r2"})
		if err != nil {
			t.Fatal(err)
		}
		m2, err := cos.Similarities(ctx, []string{"q", "p"}, []string{"r2", "r1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(e.calls) != 2 || len(e.calls[0]) != 3 || len(e.calls[1]) != 2 {
			t.Fatalf("embedder calls %q, want [p r1 r2] then [q p]", e.calls)
		}
		if s := c.Stats(); s.Hits != 2 || s.Misses != 2 || s.Entries != 2 {
			t.Errorf("stats %+v", s)
		}
		if !near(m1[0][0], m2[1][1]) || !near(m1[0][1], m2[1][0]) || !near(m1[0][0], 1/math.Sqrt2) {
			t.Errorf("cached and fresh similarities differ: %v vs %v", m1, m2)
		}
	})
	t.Run("Warm embeds each distinct uncached text once in one call", func(t *testing.T) {
		e := &countingStub{stubEmbedder: stubEmbedder{vecs: vecs}}
		c := NewCache()
		c.Put("stub", "r1", vecs["r1"])
		n, err := c.Warm(ctx, e, []string{"r1", "r2", "r2", "p"})
		if err != nil || n != 2 {
			t.Fatalf("Warm = %d, %v", n, err)
		}
		if len(e.calls) != 1 || len(e.calls[0]) != 2 {
			t.Errorf("embedder calls %q, want one call [r2 p]", e.calls)
		}
		if n, _ := c.Warm(ctx, e, []string{"r2"}); n != 0 || len(e.calls) != 1 {
			t.Errorf("a second Warm embedded again")
		}
	})
	t.Run("entries are keyed by model name as well as text", func(t *testing.T) {
		c := NewCache()
		c.Put("model-a", "x", []float32{1})
		if _, ok := c.Get("model-b", "x"); ok {
			t.Error("model-b was served model-a's vector")
		}
		if v, ok := c.Get("model-a", "x"); !ok || v[0] != 1 {
			t.Error("model-a's vector is missing")
		}
	})
	t.Run("a short embedder answer is malformed for Warm too", func(t *testing.T) {
		e := stubEmbedder{vecs: vecs, short: true}
		if _, err := NewCache().Warm(ctx, e, []string{"p", "q"}); !errors.Is(err, ErrEmbedding) {
			t.Errorf("err = %v, want ErrEmbedding", err)
		}
	})
}

func TestPooling(t *testing.T) {
	t.Run("mean pooling averages only the attended tokens", func(t *testing.T) {
		hidden := []float32{1, 2, 3, 4, 100, 100}
		got := meanPool(hidden, []int64{1, 1, 0}, 3, 2)
		if got[0] != 2 || got[1] != 3 {
			t.Errorf("meanPool = %v, want [2 3]", got)
		}
	})
	t.Run("a sequence without attended tokens pools to zero", func(t *testing.T) {
		got := meanPool([]float32{5, 5}, []int64{0}, 1, 2)
		if got[0] != 0 || got[1] != 0 {
			t.Errorf("meanPool = %v", got)
		}
	})
	t.Run("normalisation gives unit length and leaves zero vectors alone", func(t *testing.T) {
		v := []float32{3, 4}
		l2Normalize(v)
		if math.Abs(float64(v[0])-0.6) > 1e-7 || math.Abs(float64(v[1])-0.8) > 1e-7 {
			t.Errorf("normalised %v", v)
		}
		z := []float32{0, 0}
		l2Normalize(z)
		if z[0] != 0 || z[1] != 0 {
			t.Errorf("zero vector became %v", z)
		}
	})
}
