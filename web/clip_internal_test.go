package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// family is 👨‍👩‍👧‍👦: seven runes (four emoji, three U+200D), one 25-byte
// grapheme cluster.
const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"

// TestEveryDisplayCutKeepsWholeClusters: each place the screen shortens a
// text keeps its budget (bytes or runes) and drops a cluster crossing it
// whole. The cut each replaced kept part of the family (noted per case).
func TestEveryDisplayCutKeepsWholeClusters(t *testing.T) {
	tests := []struct {
		name string
		got  func() string
		want string
	}{
		{
			// 64 KiB = 65,536 bytes: 2,621 families are 65,525; the rune cut
			// kept 👨 U+200D 👩 (11 bytes more).
			name: "an ARC transcript field is cut to 64 KiB of whole families",
			got:  func() string { return cut(strings.Repeat(family, 2700)) },
			want: strings.Repeat(family, 2621) + "\n… (1975 more bytes not shown)",
		},
		{
			// 110 runes: "질문 " is 3, then 15 families are 105 runes; the 16th
			// crosses 110 (the rune cut kept 👨 U+200D).
			name: "a CRYSTAL question is cut to 110 runes of whole families",
			got:  func() string { return firstLine("질문 "+strings.Repeat(family, 20), 110) },
			want: "질문 " + strings.Repeat(family, 15) + "…",
		},
		{
			name: "a CRYSTAL question within 110 runes is whole",
			got:  func() string { return firstLine("질문 "+family, 110) },
			want: "질문 " + family,
		},
		{
			// maxWho 40 runes: 5 families are 35 runes; the 6th crosses 40
			// (the rune cut kept 👨 U+200D 👩 U+200D 👧).
			name: "a reviewer's name is cut to 40 runes of whole families",
			got: func() string {
				return whoOf(httptest.NewRequest("POST", "/", nil), strings.Repeat(family, 6))
			},
			want: strings.Repeat(family, 5),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got(); got != tt.want {
				t.Errorf("got %d bytes ending %q, want %d bytes ending %q", len(got), tail(got), len(tt.want), tail(tt.want))
			}
		})
	}
}

func tail(s string) string { return s[max(0, len(s)-40):] }
