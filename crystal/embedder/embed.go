package embedder

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Embedder maps texts to vectors. Embed returns exactly one vector per input
// text, in input order, all of the same length (the model's dimension, e.g.
// 768 for all-distilroberta-v1). Vectors need not be normalised: Cosine
// normalises. Implementations return an error, never panic, on a model or
// input failure, and honour ctx cancellation.
type Embedder interface {
	// Name identifies the model in reports (e.g. "all-distilroberta-v1").
	Name() string
	// Embed returns len(texts) vectors; an empty input gives an empty result.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Similarity scores every predicted step against every reference step. The
// result m has len(pred) rows of len(ref) columns: m[i][j] is the similarity
// of pred[i] and ref[j], higher meaning more alike (cosine in [-1, 1] for
// embedders, [0, 1] for Lexical). An empty pred gives a nil or empty matrix.
// Implementations return an error, never panic, and honour ctx cancellation.
type Similarity interface {
	// Name identifies the similarity in reports ("lexical", or the model name).
	Name() string
	// Similarities returns the len(pred) × len(ref) matrix.
	Similarities(ctx context.Context, pred, ref []string) ([][]float64, error)
}

// ThresholdHinter is implemented by a Similarity whose scores call for a
// matching threshold other than the seed's 0.35 (Lexical: 0.3, the reference
// package's word-overlap reward). Package crystal uses the hint when the
// caller leaves the threshold unset.
type ThresholdHinter interface {
	DefaultThreshold() float64
}

// ErrEmbedding reports an Embedder that returned the wrong number of vectors,
// vectors of different lengths, or non-finite values.
var ErrEmbedding = errors.New("embed: malformed embeddings")

// Cosine turns an Embedder into a Similarity: embed both lists, then cosine
// similarity (dot product ÷ product of L2 norms) for every pair, as the seed's
// sklearn cosine_similarity does (seed 002). A nil Embedder is an error.
//
// With a Cache, reference-step vectors are looked up there first (keyed by
// the embedder's Name and the step text) and the ones missing are stored
// after embedding, so each reference step is embedded once per model.
// Predicted steps are always embedded and never stored: they rarely repeat,
// and a run over many models would otherwise keep them all.
type Cosine struct {
	Embedder Embedder
	// Cache, when not nil, holds reference-step vectors (see above).
	Cache *Cache
}

// Name returns the embedder's name, or "cosine" without an embedder.
func (c Cosine) Name() string {
	if c.Embedder == nil {
		return "cosine"
	}
	return c.Embedder.Name()
}

// Similarities embeds pred and the reference steps not in the cache in one
// call and returns the cosine matrix. Errors: the embedder's error, ctx's
// error, or ErrEmbedding for a wrong count, mismatched dimensions or NaN/Inf
// components.
func (c Cosine) Similarities(ctx context.Context, pred, ref []string) ([][]float64, error) {
	if c.Embedder == nil {
		return nil, fmt.Errorf("embed: Cosine without an Embedder")
	}
	if len(pred) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// vecs holds pred then ref; refs found in the cache are filled in now,
	// the rest are embedded together with pred.
	vecs := make([][]float32, len(pred)+len(ref))
	texts := make([]string, 0, len(pred)+len(ref))
	texts = append(texts, pred...)
	slots := make([]int, 0, len(pred)+len(ref))
	for i := range pred {
		slots = append(slots, i)
	}
	model := c.Embedder.Name()
	for j, r := range ref {
		if c.Cache != nil {
			if v, ok := c.Cache.Get(model, r); ok {
				vecs[len(pred)+j] = v
				continue
			}
		}
		texts = append(texts, r)
		slots = append(slots, len(pred)+j)
	}
	got, err := c.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(got) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(got), len(texts))
	}
	for k, slot := range slots {
		vecs[slot] = got[k]
		if c.Cache != nil && slot >= len(pred) {
			c.Cache.Put(model, texts[k], got[k])
		}
	}
	norms := make([]float64, len(vecs))
	for k, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("%w: vector %d has %d dimensions, vector 0 has %d", ErrEmbedding, k, len(v), len(vecs[0]))
		}
		var s float64
		for _, x := range v {
			s += float64(float64(x) * float64(x))
		}
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("%w: vector %d is not finite", ErrEmbedding, k)
		}
		norms[k] = math.Sqrt(s)
	}
	m := make([][]float64, len(pred))
	for i := range pred {
		m[i] = make([]float64, len(ref))
		a := vecs[i]
		for j := range ref {
			b := vecs[len(pred)+j]
			na, nb := norms[i], norms[len(pred)+j]
			if na == 0 || nb == 0 {
				continue
			}
			m[i][j] = dot(a, b) / (na * nb)
		}
	}
	return m, nil
}

// Cut is one text an embedder shortened to its token limit: Index is the
// text's 0-based position in the list asked about, Kept and Total the token
// counts after and before truncation (special tokens included).
type Cut struct {
	Index int `json:"index"`
	Kept  int `json:"kept"`
	Total int `json:"total"`
}

// TokenCounter is implemented by an Embedder that truncates long texts (the
// ONNX embedder, at its model's max_seq_length). TokenCounts returns, per
// text in order, the tokens the model sees (Kept) and the tokens the text
// has (Total); Kept < Total means the text was cut.
type TokenCounter interface {
	TokenCounts(ctx context.Context, texts []string) ([]Cut, error)
}

// Truncator is implemented by a Similarity that can say which steps it cut
// before comparing them (Cosine over a TokenCounter). Truncations returns
// one Cut per text that was shortened, in input order; none when nothing
// was cut. Package crystal notes them per item (issue 16: truncation is never
// silent).
type Truncator interface {
	Truncations(ctx context.Context, texts []string) ([]Cut, error)
}

// Truncations reports the texts c's embedder cuts. An embedder that is not a
// TokenCounter cuts nothing. Errors: the embedder's, or ErrEmbedding for a
// wrong count.
func (c Cosine) Truncations(ctx context.Context, texts []string) ([]Cut, error) {
	tc, ok := c.Embedder.(TokenCounter)
	if !ok || len(texts) == 0 {
		return nil, nil
	}
	counts, err := tc.TokenCounts(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(counts) != len(texts) {
		return nil, fmt.Errorf("%w: %d token counts for %d texts", ErrEmbedding, len(counts), len(texts))
	}
	var out []Cut
	for k, n := range counts {
		if n.Kept < n.Total {
			out = append(out, Cut{Index: k, Kept: n.Kept, Total: n.Total})
		}
	}
	return out, nil
}

// dot is the float64 dot product of two equal-length vectors, four partial
// sums at a time (the cosine's inner loop). Each product is converted
// explicitly so that no architecture fuses it with the sum (Go spec,
// "Arithmetic operators"): every path of Cosine rounds alike.
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += float64(float64(a[k]) * float64(b[k]))
		s1 += float64(float64(a[k+1]) * float64(b[k+1]))
		s2 += float64(float64(a[k+2]) * float64(b[k+2]))
		s3 += float64(float64(a[k+3]) * float64(b[k+3]))
	}
	for ; k < len(a); k++ {
		s0 += float64(float64(a[k]) * float64(b[k]))
	}
	return (s0 + s1) + (s2 + s3)
}
