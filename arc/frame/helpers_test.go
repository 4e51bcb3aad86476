package frame

import (
	"testing"
)

// mustParse parses an ASCII frame, failing the test on error.
func mustParse(t testing.TB, s string) Grid {
	t.Helper()
	g, err := ParseASCII([]byte(s))
	if err != nil {
		t.Fatalf("ParseASCII(%q): %v", s, err)
	}
	return g
}

// filled returns a w×h grid of value v.
func filled(t testing.TB, w, h int, v uint8) Grid {
	t.Helper()
	g, err := New(w, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.Cells() {
		g.Cells()[i] = v
	}
	return g
}

// gamePattern returns a 64×64 frame shaped like a real game screen: a grey
// border (3), a black floor band (5), a blue player block (9) and one cell of
// every colour along row 1.
func gamePattern(t testing.TB) Grid {
	t.Helper()
	g := filled(t, GameSide, GameSide, 0)
	for i := 0; i < GameSide; i++ {
		g.Set(i, 0, 3)
		g.Set(i, GameSide-1, 3)
		g.Set(0, i, 3)
		g.Set(GameSide-1, i, 3)
	}
	for x := 1; x < GameSide-1; x++ {
		for y := 50; y < 54; y++ {
			g.Set(x, y, 5)
		}
	}
	for x := 12; x < 16; x++ {
		for y := 40; y < 44; y++ {
			g.Set(x, y, 9)
		}
	}
	for v := 0; v < NumColors; v++ {
		g.Set(1+v, 1, uint8(v))
	}
	return g
}
