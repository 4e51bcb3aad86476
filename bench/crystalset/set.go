// Package crystalset generates a synthetic CRYSTAL test set the size of the
// paper's (6,372 items, 20 models; spec crystal.md "Data", "Headline
// numbers"), for benchmarking the scorer. The real set is gated; these items
// only have its shape: 3 to 42 reference steps per item (11.6 on average),
// predictions of 1 to 10 steps (5.3 on average, GPT-5 gives 5.29), a mix of
// numeric, yes/no and multiple-choice answers, about 1 % missing
// predictions, and predicted steps drawn from a per-item pool (poolSize)
// that often reuse a reference step's words, so that some pairs match. Output is deterministic for a given Config.
package crystalset

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"evident/crystal"
	"evident/crystal/report"
)

// Config sizes the set. Zero values take the paper's sizes.
type Config struct {
	Items  int    // 0 means 6372
	Models int    // 0 means 20
	Seed   uint64 // PCG seed
}

// Set is one generated benchmark: items, one Run per model, and every
// distinct step text (reference and predicted), for precomputing vectors.
type Set struct {
	Items []crystal.Item
	Runs  []report.Run
	Texts []string
}

var words = strings.Fields(`the red blue green bar dot square circle line chart grid cell axis label
value count sum total left right top bottom above below taller shorter larger smaller three seven
twelve units percent angle triangle side length area ratio equals shows has is are of in on than each
first second third option answer image plot year point curve peak lowest highest between`)

// poolSize is the number of candidate steps per item that the models'
// replies are drawn from (1 to poolSize steps each, 5.5 on average). Models
// sharing candidates keeps the distinct step texts, and so the cached
// 768-float vectors, at about 138,000 (≈ 420 MB) instead of the ≈ 750,000
// (2.3 GB) of all-distinct replies; the scoring work — every predicted step
// against every reference step — is the same.
const poolSize = 10

// Generate builds the set.
func Generate(c Config) Set {
	if c.Items == 0 {
		c.Items = 6372
	}
	if c.Models == 0 {
		c.Models = 20
	}
	r := rand.New(rand.NewPCG(c.Seed, 6372))
	step := func() string {
		n := 6 + r.IntN(8)
		b := make([]string, n)
		for k := range b {
			b[k] = words[r.IntN(len(words))]
		}
		return strings.Join(b, " ")
	}
	seen := map[string]bool{}
	var s Set
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			s.Texts = append(s.Texts, t)
		}
	}
	s.Items = make([]crystal.Item, c.Items)
	pools := make([][]string, c.Items)
	for k := range s.Items {
		// 3–42 steps, mean ≈ 11.7: mostly 3–17, 8 % from 21 to 42.
		n := 3 + r.IntN(15)
		if r.IntN(100) < 8 {
			n = 21 + r.IntN(22)
		}
		refs := make([]string, n)
		for j := range refs {
			refs[j] = step()
			add(refs[j])
		}
		it := crystal.Item{ID: fmt.Sprintf("crys-%05d", k), ReferenceSteps: refs}
		switch k % 3 {
		case 0:
			it.Question, it.Answer = "How many bars are taller than 7?", fmt.Sprint(r.IntN(50))
		case 1:
			it.Question, it.Answer = "Is the red bar the tallest?", []string{"yes", "no"}[r.IntN(2)]
		default:
			it.Question, it.Answer = "Which colour is the tallest bar?\nA) red\nB) blue\nC) green\nD) black", string(rune('A'+r.IntN(4)))
		}
		s.Items[k] = it
		// The models' candidate steps for this item: two in three reuse a
		// reference step with one word changed, the rest are new.
		pool := make([]string, poolSize)
		for i := range pool {
			if r.IntN(3) > 0 {
				f := strings.Fields(refs[r.IntN(len(refs))])
				f[r.IntN(len(f))] = words[r.IntN(len(words))]
				pool[i] = strings.Join(f, " ")
			} else {
				pool[i] = step()
			}
			add(pool[i])
		}
		pools[k] = pool
	}
	for m := 0; m < c.Models; m++ {
		run := report.Run{Model: fmt.Sprintf("model-%02d", m), Replies: make(map[string]crystal.Reply, c.Items)}
		for k, it := range s.Items {
			if r.IntN(100) == 0 {
				continue // missing prediction
			}
			pick := r.Perm(poolSize)[:1+r.IntN(poolSize)]
			ps := make([]string, len(pick))
			for i, p := range pick {
				ps[i] = pools[k][p]
			}
			ans := it.Answer
			if r.IntN(2) == 0 {
				ans = "B"
			}
			run.Replies[it.ID] = crystal.Reply{Steps: ps, Answer: ans}
		}
		s.Runs = append(s.Runs, run)
	}
	return s
}
