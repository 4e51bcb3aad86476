package crystalset

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"evident/crystal"
	"evident/crystal/embedder"
	"evident/crystal/report"
	"evident/internal/cputime"
)

// table serves precomputed vectors: every step of the set embedded
// beforehand, as a warmed cache holds them.
type table struct{ vecs map[string][]float32 }

func (table) Name() string { return "cached-768" }
func (t table) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for k, s := range texts {
		out[k] = t.vecs[s]
	}
	return out, nil
}

// vectors gives every text a fixed pseudo-random unit-free 768-dimensional
// vector (all-distilroberta-v1's size) seeded by its hash.
func vectors(texts []string, dim int) map[string][]float32 {
	out := make(map[string][]float32, len(texts))
	for _, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		r := rand.New(rand.NewPCG(h.Sum64(), 2))
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(r.NormFloat64())
		}
		out[t] = v
	}
	return out
}

func TestGenerateHasThePapersShape(t *testing.T) {
	s := Generate(Config{Models: 2, Seed: 1})
	if len(s.Items) != 6372 || len(s.Runs) != 2 {
		t.Fatalf("%d items, %d runs", len(s.Items), len(s.Runs))
	}
	var refs, preds, replies int
	for _, it := range s.Items {
		refs += len(it.ReferenceSteps)
		if n := len(it.ReferenceSteps); n < 3 || n > 42 {
			t.Fatalf("item %s has %d reference steps", it.ID, n)
		}
	}
	for _, r := range s.Runs[0].Replies {
		preds += len(r.Steps)
		replies++
	}
	meanRef, meanPred := float64(refs)/6372, float64(preds)/float64(replies)
	if meanRef < 11 || meanRef > 12.5 || meanPred < 5 || meanPred > 6 || replies < 6200 || replies == 6372 {
		t.Errorf("mean reference steps %.2f (paper 11.6), predicted %.2f (about 5.3), %d replies", meanRef, meanPred, replies)
	}
	again := Generate(Config{Models: 2, Seed: 1})
	if again.Items[100].ReferenceSteps[0] != s.Items[100].ReferenceSteps[0] {
		t.Error("Generate is not deterministic")
	}
}

// BenchmarkScorePaperSize scores the 6,372-item, 20-model set once per
// iteration through report.Score: with the lexical similarity, and with the
// cosine of cached 768-dimensional vectors (reference steps from an
// embedder.Cache, predicted steps from a precomputed table), so that only
// scoring is timed. Issue 16 item 4: ≤ 2 s per iteration on 2 cores.
// cpu-s/op is the process CPU time per iteration (GC included): on a
// machine other work keeps busy the wall time grows, the CPU time does
// not, and CPU ÷ 2 is the wall time two idle cores would give.
func BenchmarkScorePaperSize(b *testing.B) {
	s := Generate(Config{Seed: 1})
	ctx := context.Background()
	tab := table{vecs: vectors(s.Texts, 768)}
	cache := embedder.NewCache()
	for _, it := range s.Items {
		if _, err := cache.Warm(ctx, tab, it.ReferenceSteps); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		sim  embedder.Similarity
	}{
		{"lexical", crystal.LexicalFor(crystal.ProfilePaper)},
		{"cached-cosine-768", embedder.Cosine{Embedder: tab, Cache: cache}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu0, cpuOK := cputime.Process()
			for b.Loop() {
				t, err := report.Score(ctx, s.Items, s.Runs, crystal.Config{Profile: crystal.ProfilePaper, Similarity: c.sim})
				if err != nil {
					b.Fatal(err)
				}
				if len(t.Rows) != 20 {
					b.Fatal("wrong model count")
				}
			}
			b.ReportMetric(float64(b.N*len(s.Items)*len(s.Runs))/b.Elapsed().Seconds(), "item-scores/s")
			if cpu1, ok := cputime.Process(); ok && cpuOK {
				b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			}
		})
	}
}
