package clip

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// family is 👨‍👩‍👧‍👦: four emoji joined by three U+200D, one cluster of 25 bytes.
const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"

// TestBytesCutsBetweenClusters: hand-checked cuts. Each case names the
// bytes the old rune-boundary cut kept, where that differs.
func TestBytesCutsBetweenClusters(t *testing.T) {
	if len(family) != 25 || uniseg.GraphemeClusterCount(family) != 1 {
		t.Fatalf("family is %d bytes, %d clusters; want 25, 1", len(family), uniseg.GraphemeClusterCount(family))
	}
	tests := []struct {
		name string
		s    string
		max  int
		want int
	}{
		{"a text within the budget is whole", "하늘", 6, 6},
		{"an empty text is empty", "", 10, 0},
		{"a zero budget keeps nothing", "하늘", 0, 0},
		{"a negative budget keeps nothing", "하늘", -3, 0},
		{"Hangul syllables cut at a syllable (the rune cut kept 3 too)", "하늘", 5, 3},
		{"a family emoji crossing the budget is dropped whole (the rune cut kept 👨 and a U+200D, 7 bytes)", "가" + family, 3 + 8, 3},
		{"a family emoji that ends at the budget is kept", "가" + family + family, 3 + 25, 28},
		{"one byte short of the family's end drops it (the rune cut kept 21 bytes ending in 👧 U+200D)", family + "x", 24, 0},
		{"a flag's two regional indicators stay together (🇰🇷; the rune cut kept 🇰)", "a\U0001F1F0\U0001F1F7b", 1 + 4 + 2, 1},
		{"two flags cut between them", "\U0001F1F0\U0001F1F7\U0001F1EF\U0001F1F5", 8 + 4, 8},
		{"a letter keeps its combining mark (e + U+0301; the rune cut kept the bare e)", "ae\u0301z", 3, 1},
		{"conjoining jamo 한 (U+1112 U+1161 U+11AB) is one cluster (the rune cut kept U+1112 U+1161)", "\u1112\u1161\u11ab다", 6, 0},
		{"a CR LF pair is one cluster", "a\r\nb", 2, 1},
		{"invalid bytes are clusters of their own", "ab\xff\xfecd", 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bytes(tt.s, tt.max)
			if got != tt.want {
				t.Fatalf("Bytes(%q, %d) = %d, want %d", tt.s, tt.max, got, tt.want)
			}
			if got > max(tt.max, 0) && got != len(tt.s) {
				t.Errorf("cut %d is over the budget %d", got, tt.max)
			}
		})
	}
}

// TestBytesOfALongFamilyReply: a 67 KB reply of 👨‍👩‍👧‍👦 after one syllable,
// clipped to the screen's 64 KiB, keeps 2,621 whole families (65,528 bytes):
// it ends in U+1F466, not in a lone U+200D as the rune cut at 65,536 did,
// and every cut point agrees with uniseg's own cluster boundaries.
func TestBytesOfALongFamilyReply(t *testing.T) {
	s := "가" + strings.Repeat(family, 67*1024/len(family))
	cut := Bytes(s, 64<<10)
	if cut != 3+2621*25 {
		t.Fatalf("cut %d, want %d", cut, 3+2621*25)
	}
	last, _ := utf8.DecodeLastRuneInString(s[:cut])
	if last != 0x1F466 {
		t.Errorf("the clipped text ends in %U, want U+1F466", last)
	}
	if n := uniseg.GraphemeClusterCount(s[:cut]); n != 1+2621 {
		t.Errorf("the clipped text has %d clusters, want %d", n, 1+2621)
	}
	// Every budget around the cut lands on a boundary uniseg reports.
	boundary := map[int]bool{0: true}
	for pos, rest, state := 0, s, -1; rest != ""; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		pos += len(c)
		boundary[pos] = true
	}
	for max := 64<<10 - 60; max <= 64<<10+60; max++ {
		got := Bytes(s, max)
		if !boundary[got] || got > max || max-got >= len(family) {
			t.Fatalf("Bytes(s, %d) = %d: not the last boundary at or before the budget", max, got)
		}
	}
}

// TestRunesKeepsTheRuneBudget: at most n runes, cut between clusters.
func TestRunesKeepsTheRuneBudget(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"a text within the budget is whole", "하늘이", 3, "하늘이"},
		{"a text over the budget keeps n runes of whole clusters", "하늘이다", 2, "하늘"},
		{"a family crossing the rune budget is dropped whole (the rune cut kept 👨 U+200D)", "가나" + family, 4, "가나"},
		{"a family within the rune budget is kept", "가" + family + "다", 8, "가" + family},
		{"a combining mark is not split from its letter", "ae\u0301", 2, "a"},
		{"zero runes keep nothing", "하늘", 0, ""},
		{"an empty text is empty", "", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s[:Runes(tt.s, tt.n)]; got != tt.want {
				t.Errorf("Runes(%q, %d) keeps %q, want %q", tt.s, tt.n, got, tt.want)
			}
		})
	}
}
