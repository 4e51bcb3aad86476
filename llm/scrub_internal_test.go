package llm

import "testing"

func TestScrub(t *testing.T) {
	for _, tt := range []struct{ name, s, secret, want string }{
		{"a real key is removed", "bad key sk-test-123456 given", "sk-test-123456", "bad key [REDACTED] given"},
		{"a one-letter placeholder key leaves the text alone", "answer exceeds the response cap", "x", "answer exceeds the response cap"},
		{"no key leaves the text alone", " text ", "", "text"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := scrub(tt.s, tt.secret, 0); got != tt.want {
				t.Fatalf("scrub(%q, %q) = %q, want %q", tt.s, tt.secret, got, tt.want)
			}
		})
	}
}

// TestScrubCutsBetweenClusters: an error text over its cap is cut between
// grapheme clusters (a flag is two regional indicators, 8 bytes), never
// inside one.
func TestScrubCutsBetweenClusters(t *testing.T) {
	flags := "🇰🇷🇰🇷🇰🇷" // 24 bytes
	for _, tt := range []struct {
		name string
		max  int
		want string
	}{
		{"a cap inside the second flag keeps the first whole", 12, "🇰🇷…"},
		{"a cap at a boundary keeps both flags", 16, "🇰🇷🇰🇷…"},
		{"a cap under the first flag keeps nothing of it", 7, "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := scrub(flags, "", tt.max); got != tt.want {
				t.Fatalf("scrub(flags, %d) = %q, want %q", tt.max, got, tt.want)
			}
		})
	}
}
