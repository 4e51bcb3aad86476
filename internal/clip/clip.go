// Package clip finds where to shorten a text for display so that the cut
// falls between grapheme clusters (Unicode UAX #29 extended grapheme
// clusters, as github.com/rivo/uniseg reads them): a clipped text never ends
// in part of a user-perceived character — a family emoji without its last
// members and with a lone U+200D ZERO WIDTH JOINER, one regional indicator
// of a flag, a base letter without its combining marks, a Hangul syllable in
// conjoining jamo without its final.
//
// Budgets stay what the callers set (bytes or runes): a cluster that would
// cross the budget is dropped whole, so a clipped text is never longer than
// before, and may be shorter by at most one cluster. The functions read at
// most the budget plus 4 bytes of the text (Bytes) or its first budget runes
// plus 4 bytes (Runes), whatever the text's length. Shared plumbing
// (README "Import graph"): it imports nothing of evident.
package clip

import (
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Bytes returns the length in bytes of the longest prefix of s that is at
// most max bytes and ends on a grapheme cluster boundary: len(s) when
// len(s) <= max, 0 when max <= 0 or s's first cluster is longer than max.
// Invalid UTF-8 bytes are clusters of their own (uniseg reads them as
// U+FFFD). It reads at most max+utf8.UTFMax bytes of s.
func Bytes(s string, max int) int {
	if len(s) <= max {
		return len(s)
	}
	if max <= 0 {
		return 0
	}
	// Whether a boundary falls before a rune depends on the runes before it
	// and on that rune alone, so the rune that starts at or before max
	// (at most utf8.UTFMax bytes) is all that is needed past the budget.
	t := s[:min(len(s), max+utf8.UTFMax)]
	cut, state := 0, -1
	for t != "" {
		var c string
		c, t, _, state = uniseg.FirstGraphemeClusterInString(t, state)
		if cut+len(c) > max {
			break
		}
		cut += len(c)
	}
	return cut
}

// Runes returns the length in bytes of the longest prefix of s that has at
// most n runes and ends on a grapheme cluster boundary (Bytes of the first
// n runes' bytes): len(s) when s has at most n runes, 0 when n <= 0.
func Runes(s string, n int) int {
	if n <= 0 {
		return 0
	}
	end := 0
	for i := 0; i < n; i++ {
		if end >= len(s) {
			return len(s)
		}
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	if end >= len(s) {
		return len(s)
	}
	return Bytes(s, end)
}
