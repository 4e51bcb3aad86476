package embedder

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Preparer is implemented by a Similarity that can do the reference side's
// work once per reference list and reuse it for many predictions: the same
// reference steps are scored against every model's reply (issue 16 item 4,
// 6,372 items × 20 models). Lexical tokenises the reference steps once;
// Cosine looks their vectors up (or embeds them) and computes their norms
// once.
//
// Prepare(ctx, ref) returns a PreparedRef p with p.Similarities(ctx, pred)
// equal, bit for bit, to Similarities(ctx, pred, ref). Errors: as
// Similarities' (for Cosine an embedding error of a reference step shows at
// Prepare).
type Preparer interface {
	Similarity
	Prepare(ctx context.Context, ref []string) (PreparedRef, error)
}

// PreparedRef scores predictions against one prepared reference list.
// Similarities returns the len(pred) × len(ref) matrix (nil for an empty
// pred), as Similarity.Similarities does. It is safe for concurrent use.
type PreparedRef interface {
	Similarities(ctx context.Context, pred []string) ([][]float64, error)
}

// ---- Lexical --------------------------------------------------------------

// lexicalRef is Lexical's prepared reference list: every reference token
// numbered within the list (vocab), and each reference step as its sorted
// token numbers. A predicted token outside vocab cannot be common to any
// reference step, so it only counts towards the predicted step's length.
type lexicalRef struct {
	l     Lexical
	vocab map[string]int32
	bags  []idBag
}

// idBag is a token multiset as sorted token numbers; n counts every token
// (for a predicted step also those outside the reference vocabulary).
type idBag struct {
	ids []int32
	n   int
}

// Prepare tokenises ref once (see Preparer). The only error is ctx's.
func (l Lexical) Prepare(ctx context.Context, ref []string) (PreparedRef, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &lexicalRef{l: l, vocab: map[string]int32{}, bags: make([]idBag, len(ref))}
	for j, s := range ref {
		var ids []int32
		scanTokens(s, func(tok string) {
			id, ok := p.vocab[tok]
			if !ok {
				id = int32(len(p.vocab))
				p.vocab[tok] = id
			}
			ids = append(ids, id)
		})
		slices.Sort(ids)
		p.bags[j] = idBag{ids: ids, n: len(ids)}
	}
	return p, nil
}

// Similarities returns the word-overlap matrix of pred against the prepared
// reference steps: the same numbers as Lexical.Similarities(ctx, pred, ref).
func (p *lexicalRef) Similarities(ctx context.Context, pred []string) ([][]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(pred) == 0 {
		return nil, nil
	}
	cells := make([]float64, len(pred)*len(p.bags))
	m := make([][]float64, len(pred))
	var ids []int32
	for i, s := range pred {
		ids = ids[:0]
		n := 0
		scanTokens(s, func(tok string) {
			n++
			if id, ok := p.vocab[tok]; ok {
				ids = append(ids, id)
			}
		})
		slices.Sort(ids)
		a := idBag{ids: ids, n: n}
		row := cells[i*len(p.bags) : (i+1)*len(p.bags) : (i+1)*len(p.bags)]
		for j := range p.bags {
			row[j] = p.l.scoreIDs(a, p.bags[j])
		}
		m[i] = row
	}
	return m, nil
}

// scoreIDs is score on token numbers: common multiset size ÷ √(n₁·n₂), with
// the same empty-step rule.
func (l Lexical) scoreIDs(a, b idBag) float64 {
	if a.n == 0 || b.n == 0 {
		if a.n == 0 && b.n == 0 && l.EmptyStepsMatch {
			return 1
		}
		return 0
	}
	common := 0
	x, y := a.ids, b.ids
	for i, j := 0, 0; i < len(x) && j < len(y); {
		switch {
		case x[i] == y[j]:
			common++
			i++
			j++
		case x[i] < y[j]:
			i++
		default:
			j++
		}
	}
	return float64(common) / math.Sqrt(float64(a.n)*float64(b.n))
}

// ---- Cosine ---------------------------------------------------------------

// cosineRef is Cosine's prepared reference list: the vectors widened to
// float64 once (exact), and their L2 norms.
type cosineRef struct {
	c     Cosine
	dim   int
	vecs  [][]float64
	norms []float64
}

// Prepare looks up (or embeds, storing them in the Cache) the reference
// steps' vectors and computes their norms once (see Preparer). Errors: the
// embedder's, ctx's, or ErrEmbedding for a wrong count, mismatched
// dimensions or NaN/Inf components.
func (c Cosine) Prepare(ctx context.Context, ref []string) (PreparedRef, error) {
	if c.Embedder == nil {
		return nil, fmt.Errorf("embed: Cosine without an Embedder")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(ref))
	var texts []string
	var slots []int
	model := c.Embedder.Name()
	for j, r := range ref {
		if c.Cache != nil {
			if v, ok := c.Cache.Get(model, r); ok {
				vecs[j] = v
				continue
			}
		}
		texts = append(texts, r)
		slots = append(slots, j)
	}
	if len(texts) > 0 {
		got, err := c.Embedder.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		if len(got) != len(texts) {
			return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(got), len(texts))
		}
		for k, slot := range slots {
			vecs[slot] = got[k]
			if c.Cache != nil {
				c.Cache.Put(model, texts[k], got[k])
			}
		}
	}
	p := &cosineRef{c: c, vecs: make([][]float64, len(ref)), norms: make([]float64, len(ref))}
	if len(ref) > 0 {
		p.dim = len(vecs[0])
	}
	flat := make([]float64, len(ref)*p.dim)
	for j, v := range vecs {
		if len(v) != p.dim {
			return nil, fmt.Errorf("%w: reference vector %d has %d dimensions, reference vector 0 has %d", ErrEmbedding, j, len(v), p.dim)
		}
		w := flat[j*p.dim : (j+1)*p.dim : (j+1)*p.dim]
		for k, x := range v {
			w[k] = float64(x)
		}
		s := sumSquares(w)
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("%w: reference vector %d is not finite", ErrEmbedding, j)
		}
		p.vecs[j], p.norms[j] = w, math.Sqrt(s)
	}
	return p, nil
}

// Similarities embeds pred and returns its cosine matrix against the
// prepared references: the same numbers as Cosine.Similarities(ctx, pred,
// ref) (float64 products summed in the same order; four references at a
// time through dot4x4). Errors: the embedder's, ctx's, or ErrEmbedding.
func (p *cosineRef) Similarities(ctx context.Context, pred []string) ([][]float64, error) {
	if len(pred) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	got, err := p.c.Embedder.Embed(ctx, pred)
	if err != nil {
		return nil, err
	}
	if len(got) != len(pred) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(got), len(pred))
	}
	dim := len(got[0])
	if len(p.vecs) > 0 {
		dim = p.dim
	}
	for i, v := range got {
		if len(v) != dim {
			return nil, fmt.Errorf("%w: vector %d has %d dimensions, vector 0 has %d", ErrEmbedding, i, len(v), dim)
		}
	}
	norms := make([]float64, len(got))
	for i, s := range sumSquaresAll(got) {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("%w: vector %d is not finite", ErrEmbedding, i)
		}
		norms[i] = math.Sqrt(s)
	}
	n := len(p.vecs)
	cells := make([]float64, len(pred)*n)
	m := make([][]float64, len(pred))
	var part [16]float64
	for i, a := range got {
		row := cells[i*n : (i+1)*n : (i+1)*n]
		m[i] = row
		na := norms[i]
		if na == 0 {
			continue
		}
		for j := 0; j < n; j += 4 {
			// Four references at a time; past the end, repeat the last
			// one and ignore its sums.
			var b [4][]float64
			for r := range b {
				b[r] = p.vecs[min(j+r, n-1)]
			}
			dot4x4(&a[0], &b[0][0], &b[1][0], &b[2][0], &b[3][0], dim, &part)
			for r := 0; r < 4 && j+r < n; r++ {
				if nb := p.norms[j+r]; nb != 0 {
					row[j+r] = dotFinish(part[4*r:4*r+4], a, b[r]) / (na * nb)
				}
			}
		}
	}
	return m, nil
}

// sumSquares is Σx², summed in order with one accumulator (as Cosine sums
// the squares of a vector's components).
func sumSquares(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	return s
}

// sumSquaresAll is Σx² of each vector, as Cosine sums it (in order, one
// accumulator per vector, the float32 components widened), four vectors at
// a time so that the four sums do not wait on each other. Vectors of
// unequal length are summed one by one.
func sumSquaresAll(vs [][]float32) []float64 {
	out := make([]float64, len(vs))
	i := 0
	for ; i+4 <= len(vs); i += 4 {
		a, b, c, d := vs[i], vs[i+1], vs[i+2], vs[i+3]
		if len(b) != len(a) || len(c) != len(a) || len(d) != len(a) {
			break
		}
		b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
		var s0, s1, s2, s3 float64
		for k, x := range a {
			s0 += float64(float64(x) * float64(x))
			s1 += float64(float64(b[k]) * float64(b[k]))
			s2 += float64(float64(c[k]) * float64(c[k]))
			s3 += float64(float64(d[k]) * float64(d[k]))
		}
		out[i], out[i+1], out[i+2], out[i+3] = s0, s1, s2, s3
	}
	for ; i < len(vs); i++ {
		var s float64
		for _, x := range vs[i] {
			s += float64(float64(x) * float64(x))
		}
		out[i] = s
	}
	return out
}
