package cardfile

import (
	"strconv"
	"strings"
	"testing"
)

// TestNotesAndMessagesCutOnWholeClusters: a guess note's quote (cut, runes)
// and an error's quoted value (describe, 40 bytes) keep their budgets and
// drop a grapheme cluster crossing it whole: a family emoji (👨‍👩‍👧‍👦, seven
// runes, 25 bytes, one cluster) is never left with a lone U+200D.
func TestNotesAndMessagesCutOnWholeClusters(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"
	tests := []struct {
		name      string
		got, want string
	}{
		// 60 runes: "말투: 네" is 5, 7 families are 49 more; the 8th crosses
		// 60 (the rune cut kept 👨 U+200D 👩 U+200D 👧 U+200D of it).
		{"a note's quote is cut to 60 runes of whole families", cut("말투: 네"+strings.Repeat(family, 9), 60), "말투: 네" + strings.Repeat(family, 7) + "…"},
		{"a note's quote within 60 runes is whole", cut("말투: "+family, 60), "말투: " + family},
		// 40 bytes: "가" is 3, one family 25 more; the second crosses 40
		// (the rune cut kept 👨 U+200D 👩, 11 bytes).
		{"an error quotes 40 bytes of whole families", describe("가" + family + family), strconv.Quote("가" + family + "…")},
		{"an error quotes a short value whole", describe("가" + family), strconv.Quote("가" + family)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
