package report

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"evident/crystal"
	"evident/crystal/embedder"
)

// fakeEmbedder gives every text a fixed pseudo-random vector seeded by its
// hash: a stand-in for a sentence-transformer whose vectors are cached.
type fakeEmbedder struct{ dim int }

func (f fakeEmbedder) Name() string { return fmt.Sprintf("fake-%d", f.dim) }
func (f fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for k, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		r := rand.New(rand.NewPCG(h.Sum64(), 2))
		v := make([]float32, f.dim)
		for d := range v {
			v[d] = float32(r.NormFloat64())
		}
		out[k] = v
	}
	return out, nil
}

// tableEmbedder serves precomputed vectors: every step of the benchmark set
// is embedded beforehand, as a warmed cache would hold them.
type tableEmbedder struct {
	name string
	vecs map[string][]float32
}

func (t tableEmbedder) Name() string { return t.name }
func (t tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for k, s := range texts {
		out[k] = t.vecs[s]
	}
	return out, nil
}

// benchSet is a synthetic test set the size of CRYSTAL's: 6,372 items with 3
// to 20 reference steps (11.5 on average; the real set has 11.6) and
// predictions with 2 to 8 steps (5 on average; GPT-5 gives 5.29).
func benchSet() ([]crystal.Item, map[string]crystal.Reply) {
	words := []string{"the", "red", "blue", "bar", "dot", "square", "is", "taller", "than", "has", "three", "seven", "units", "left", "of", "grid", "cells", "sum", "equals", "chart"}
	step := func(r *rand.Rand) string {
		n := 5 + r.IntN(6)
		s := words[r.IntN(len(words))]
		for k := 1; k < n; k++ {
			s += " " + words[r.IntN(len(words))]
		}
		return s
	}
	r := rand.New(rand.NewPCG(6372, 1))
	items := make([]crystal.Item, 6372)
	preds := make(map[string]crystal.Reply, len(items))
	for k := range items {
		id := fmt.Sprintf("item-%04d", k)
		refs := make([]string, 3+(k*7)%18)
		for j := range refs {
			refs[j] = step(r)
		}
		ps := make([]string, 2+k%7)
		for i := range ps {
			if i < len(refs) && r.IntN(2) == 0 {
				ps[i] = refs[i] // some steps copy the reference
			} else {
				ps[i] = step(r)
			}
		}
		items[k] = crystal.Item{ID: id, Question: "How many?", Answer: "3", ReferenceSteps: refs}
		preds[id] = crystal.Reply{Steps: ps, Answer: "3"}
	}
	return items, preds
}

// BenchmarkScore6372 scores the 6,372-item synthetic set once per iteration:
// with the lexical similarity, and with the cosine of 768-dimensional vectors
// (all-distilroberta-v1's size) that are already embedded — reference steps
// from an embedder.Cache, predicted steps from a precomputed table — so only
// scoring is timed.
func BenchmarkScore6372(b *testing.B) {
	items, preds := benchSet()
	runs := []Run{{Model: "bench", Replies: preds}}
	ctx := context.Background()

	var texts []string
	for _, it := range items {
		texts = append(texts, it.ReferenceSteps...)
		texts = append(texts, preds[it.ID].Steps...)
	}
	all, _ := fakeEmbedder{dim: 768}.Embed(ctx, texts)
	table := tableEmbedder{name: "cached-768", vecs: make(map[string][]float32, len(texts))}
	for k, t := range texts {
		table.vecs[t] = all[k]
	}
	cache := embedder.NewCache()
	for _, it := range items {
		if _, err := cache.Warm(ctx, table, it.ReferenceSteps); err != nil {
			b.Fatal(err)
		}
	}

	for _, c := range []struct {
		name string
		sim  embedder.Similarity
	}{
		{"lexical", crystal.LexicalFor(crystal.ProfileSeed)},
		{"cached-cosine-768", embedder.Cosine{Embedder: table, Cache: cache}},
	} {
		b.Run(c.name, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				tab, err := Score(ctx, items, runs, crystal.Config{Similarity: c.sim})
				if err != nil {
					b.Fatal(err)
				}
				if tab.Rows[0].Report.Items != 6372 {
					b.Fatal("wrong item count")
				}
			}
			b.ReportMetric(float64(b.N*len(items))/time.Since(start).Seconds(), "items/s")
		})
	}
}
