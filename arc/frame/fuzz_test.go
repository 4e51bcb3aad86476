package frame

import (
	"errors"
	"testing"
)

// FuzzReadASCII checks that ParseASCII never panics, that every error is a
// *ParseError, and that whatever it accepts writes back canonically and reads
// back equal.
func FuzzReadASCII(f *testing.F) {
	for _, s := range []string{
		"0F1\nA9C\n", "0f1\r\na9c", "\n\n5\n\n", "", "   \n", "0 1\n", "01\n012\n", "G\n",
		string(make([]byte, 70)),
	} {
		f.Add([]byte(s))
	}
	f.Add(gamePattern(f).AppendASCII(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseASCII(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			_ = pe.Error()
			return
		}
		if g.IsZero() || !g.InPalette() || len(g.Cells()) != g.Width()*g.Height() {
			t.Fatalf("accepted a malformed grid %d×%d with %d cells", g.Width(), g.Height(), len(g.Cells()))
		}
		out := g.AppendASCII(nil)
		g2, err := ParseASCII(out)
		if err != nil || !Equal(g, g2) || string(g2.AppendASCII(nil)) != string(out) {
			t.Fatalf("round trip failed: %v", err)
		}
		if g.Width() <= GameSide && g.Height() <= GameSide {
			// Larger grids only make the views slow (8× scale), not different.
			_ = CountMismatches(g, gamePattern(t))
			_ = MismatchRegion(g, gamePattern(t))
			_ = MismatchAsMagneta(gamePattern(t), g)
		}
	})
}
