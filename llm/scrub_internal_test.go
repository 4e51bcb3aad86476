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
