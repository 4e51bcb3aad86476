package embedder

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
)

// LexicalThreshold is the matching threshold the reference package uses with
// its word-overlap step F1 (spec crystal.md "CPR": threshold 0.3).
const LexicalThreshold = 0.3

// Lexical is the model-free word-overlap similarity of the reference package's
// reward (spec crystal.md "CPR"): each step becomes its lowercased `\w+`
// tokens; the similarity of two steps is the size of their common token
// multiset ÷ √(len1·len2), in [0, 1]. It needs no model and never fails
// except on ctx cancellation.
//
// The zero value is the clean variant used by the `seed` profile.
type Lexical struct {
	// EmptyStepsMatch gives similarity 1.0 to two steps that both have no word
	// token (reference-package quirk, `paper` profile; spec crystal.md
	// "Decision — quirks of the reference package"). When false such a pair
	// scores 0.
	EmptyStepsMatch bool
}

// Name returns "lexical".
func (Lexical) Name() string { return "lexical" }

// DefaultThreshold returns LexicalThreshold (0.3).
func (Lexical) DefaultThreshold() float64 { return LexicalThreshold }

// Similarities returns the len(pred) × len(ref) word-overlap matrix. Each
// step is tokenised once. The only error is ctx's.
func (l Lexical) Similarities(ctx context.Context, pred, ref []string) ([][]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(pred) == 0 {
		return nil, nil
	}
	pb := make([]bag, len(pred))
	for i, s := range pred {
		pb[i] = newBag(s)
	}
	rb := make([]bag, len(ref))
	for j, s := range ref {
		rb[j] = newBag(s)
	}
	m := make([][]float64, len(pred))
	for i := range pb {
		m[i] = make([]float64, len(rb))
		for j := range rb {
			m[i][j] = l.score(pb[i], rb[j])
		}
	}
	return m, nil
}

// Pair returns the word-overlap similarity of two single steps.
func (l Lexical) Pair(a, b string) float64 {
	return l.score(newBag(a), newBag(b))
}

func (l Lexical) score(a, b bag) float64 {
	if a.n == 0 || b.n == 0 {
		if a.n == 0 && b.n == 0 && l.EmptyStepsMatch {
			return 1
		}
		return 0
	}
	// common multiset size: merge the two sorted token lists.
	common := 0
	for i, j := 0, 0; i < len(a.toks) && j < len(b.toks); {
		switch x, y := a.toks[i], b.toks[j]; {
		case x == y:
			common++
			i++
			j++
		case x < y:
			i++
		default:
			j++
		}
	}
	return float64(common) / math.Sqrt(float64(a.n)*float64(b.n))
}

// bag is a token multiset: the tokens sorted, and their count.
type bag struct {
	toks []string
	n    int
}

func newBag(s string) bag {
	toks := Tokens(s)
	sort.Strings(toks)
	return bag{toks: toks, n: len(toks)}
}

// Tokens splits s into lowercased word tokens the way Python's `\w+` does on
// str: maximal runs of Unicode letters, numbers and '_'. Nil when s has none.
func Tokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		if isWord(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, lower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, lower(s[start:]))
	}
	return out
}

// lower is strings.ToLower without the copy for ASCII text already in
// lower case (most step words).
func lower(w string) string {
	for k := 0; k < len(w); k++ {
		if c := w[k]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return strings.ToLower(w)
		}
	}
	return w
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}
