package crystalset

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"evident/crystal"
	"evident/crystal/embedder"
	"evident/crystal/report"
)

// plain hides a similarity's Prepare (and every other optional interface
// but the threshold hint), so crystal.Evaluate asks Similarities for every
// model × item: the path before issue 16 item 4's sharing.
type plain struct{ s embedder.Similarity }

func (p plain) Name() string { return p.s.Name() }
func (p plain) Similarities(ctx context.Context, pred, ref []string) ([][]float64, error) {
	return p.s.Similarities(ctx, pred, ref)
}

type hinted struct{ plain }

func (h hinted) DefaultThreshold() float64 { return h.s.(embedder.ThresholdHinter).DefaultThreshold() }

// TestScoreEqualsEvaluatePerModelBitForBit: report.Score (items in
// parallel, reference sides prepared once for all models) gives every row
// exactly as crystal.Evaluate of that model alone through a similarity
// that prepares nothing.
func TestScoreEqualsEvaluatePerModelBitForBit(t *testing.T) {
	s := Generate(Config{Items: 300, Models: 3, Seed: 7})
	s.Items[5].ReferenceSteps = nil                            // skipped under paper
	s.Items[6].ReferenceSteps = []string{"  padded step ", ""} // training reward trims
	s.Items[7].Options = []string{"red", "blue"}
	ctx := context.Background()
	tab := table{vecs: vectors(append(s.Texts, "  padded step ", ""), 16)}
	cache := embedder.NewCache()
	for _, c := range []struct {
		name    string
		profile crystal.Profile
		sim     embedder.Similarity
		old     embedder.Similarity
	}{
		{"lexical, paper profile", crystal.ProfilePaper, crystal.LexicalFor(crystal.ProfilePaper), hinted{plain{crystal.LexicalFor(crystal.ProfilePaper)}}},
		{"lexical, seed profile", crystal.ProfileSeed, crystal.LexicalFor(crystal.ProfileSeed), hinted{plain{crystal.LexicalFor(crystal.ProfileSeed)}}},
		{"cached cosine, paper profile", crystal.ProfilePaper, embedder.Cosine{Embedder: tab, Cache: cache}, plain{embedder.Cosine{Embedder: tab}}},
		{"cosine, seed profile", crystal.ProfileSeed, embedder.Cosine{Embedder: tab}, plain{embedder.Cosine{Embedder: tab}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := report.Score(ctx, s.Items, s.Runs, crystal.Config{Profile: c.profile, Similarity: c.sim})
			if err != nil {
				t.Fatal(err)
			}
			for k, run := range s.Runs {
				want, err := crystal.Evaluate(ctx, s.Items, run.Replies, crystal.Config{Profile: c.profile, Similarity: c.old})
				if err != nil {
					t.Fatal(err)
				}
				if got.Rows[k].Model != run.Model || !reflect.DeepEqual(got.Rows[k].Report, want) {
					t.Errorf("model %s: Score's row differs from Evaluate (Match F1 %v vs %v, CPR %v vs %v)", run.Model,
						got.Rows[k].Report.MatchF1, want.MatchF1, got.Rows[k].Report.CPR, want.CPR)
				}
			}
		})
	}
}

// failing fails on the reference steps of chosen items.
type failing struct {
	lex embedder.Lexical
	bad map[string]bool // first reference step → fail
}

func (f failing) Name() string { return f.lex.Name() }

func (f failing) Similarities(ctx context.Context, pred, ref []string) ([][]float64, error) {
	if f.bad[ref[0]] {
		return nil, errors.New("boom")
	}
	return f.lex.Similarities(ctx, pred, ref)
}

func TestScoreReportsTheFirstFailingItemWhateverTheScheduling(t *testing.T) {
	s := Generate(Config{Items: 500, Models: 3, Seed: 3})
	sim := failing{bad: map[string]bool{s.Items[421].ReferenceSteps[0]: true, s.Items[88].ReferenceSteps[0]: true}}
	for range 5 {
		_, err := report.Score(context.Background(), s.Items, s.Runs, crystal.Config{Similarity: sim})
		want := `model model-00: item "crys-00088": crystal: similarity lexical: boom`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
	}
	t.Run("a cancelled context is an error of the first model", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := report.Score(ctx, s.Items, s.Runs, crystal.Config{Similarity: crystal.LexicalFor(crystal.ProfileSeed)})
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "model model-00: ") {
			t.Errorf("err = %v", err)
		}
	})
}
