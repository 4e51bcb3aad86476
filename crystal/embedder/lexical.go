package embedder

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
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
// step is tokenised once (through Prepare). The only error is ctx's.
func (l Lexical) Similarities(ctx context.Context, pred, ref []string) ([][]float64, error) {
	p, err := l.Prepare(ctx, ref)
	if err != nil {
		return nil, err
	}
	return p.Similarities(ctx, pred)
}

// Pair returns the word-overlap similarity of two single steps.
func (l Lexical) Pair(a, b string) float64 {
	m, _ := l.Similarities(context.Background(), []string{a}, []string{b})
	return m[0][0]
}

// Tokens splits s into lowercased word tokens the way Python's `\w+` does on
// str: maximal runs of Unicode letters, numbers and '_'. Nil when s has none.
func Tokens(s string) []string {
	var out []string
	scanTokens(s, func(tok string) { out = append(out, tok) })
	return out
}

// scanTokens calls yield with each of Tokens(s) in order, without building
// the list (Lexical.Prepare and its prepared Similarities number tokens as
// they come).
func scanTokens(s string, yield func(tok string)) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		var word bool
		size := 1
		if c < 0x80 {
			word = asciiWord[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			word = isWord(r)
		}
		if word {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			yield(lower(s[start:i]))
			start = -1
		}
		i += size
	}
	if start >= 0 {
		yield(lower(s[start:]))
	}
}

// asciiWord is isWord for the ASCII range: letters, digits and '_'.
var asciiWord = func() (t [0x80]bool) {
	for c := range t {
		t[c] = isWord(rune(c))
	}
	return t
}()

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
