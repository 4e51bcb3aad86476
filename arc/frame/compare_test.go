package frame

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

// naiveMismatches is the obviously correct reference for AppendMismatches.
func naiveMismatches(a, b Grid) []Cell {
	var out []Cell
	for y := 0; y < max(a.Height(), b.Height()); y++ {
		for x := 0; x < max(a.Width(), b.Width()); x++ {
			inA := x < a.Width() && y < a.Height()
			inB := x < b.Width() && y < b.Height()
			if (inA != inB) || (inA && a.At(x, y) != b.At(x, y)) {
				out = append(out, Cell{x, y})
			}
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	base := gamePattern(t)
	tests := []struct {
		name   string
		a, b   func() Grid
		want   []Cell
		equals bool
	}{
		{"identical game frames have no mismatch",
			func() Grid { return base }, func() Grid { return base.Clone() }, nil, true},
		{"one moved player cell is one mismatch at its position",
			func() Grid { return base }, func() Grid { g := base.Clone(); g.Set(16, 40, 9); return g },
			[]Cell{{16, 40}}, false},
		{"cells in one machine word and across words are all found in row-major order",
			func() Grid { return base },
			func() Grid {
				g := base.Clone()
				for _, c := range []Cell{{7, 2}, {0, 3}, {1, 3}, {2, 3}, {8, 3}, {63, 63}} {
					g.Set(c.X, c.Y, 11)
				}
				return g
			},
			[]Cell{{7, 2}, {0, 3}, {1, 3}, {2, 3}, {8, 3}, {63, 63}}, false},
		{"a difference in the high bit of a byte is seen",
			func() Grid { return mustParse(t, "000\n") },
			func() Grid { g := mustParse(t, "000\n"); g.Set(1, 0, 0x80); return g },
			[]Cell{{1, 0}}, false},
		{"the tail cells of a 5×3 frame beyond the last full word are compared",
			func() Grid { return mustParse(t, "01234\n56789\nABCDE\n") },
			func() Grid { return mustParse(t, "01234\n56789\nABCDF\n") },
			[]Cell{{4, 2}}, false},
		{"a narrower prediction mismatches on the missing column",
			func() Grid { return mustParse(t, "012\n345\n") },
			func() Grid { return mustParse(t, "01\n34\n") },
			[]Cell{{2, 0}, {2, 1}}, false},
		{"a wide and a tall frame mismatch on cells in one but not the other",
			func() Grid { return mustParse(t, "00\n") },
			func() Grid { return mustParse(t, "0\n0\n") },
			[]Cell{{1, 0}, {0, 1}}, false},
		{"a zero grid against a 1×2 frame mismatches everywhere",
			func() Grid { return Grid{} },
			func() Grid { return mustParse(t, "5\n5\n") },
			[]Cell{{0, 0}, {0, 1}}, false},
		{"two zero grids are equal", func() Grid { return Grid{} }, func() Grid { return Grid{} }, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.a(), tc.b()
			if got := Equal(a, b); got != tc.equals {
				t.Errorf("Equal = %v, want %v", got, tc.equals)
			}
			if got := CountMismatches(a, b); got != len(tc.want) {
				t.Errorf("CountMismatches = %d, want %d", got, len(tc.want))
			}
			if got := Mismatches(a, b); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Mismatches = %v, want %v", got, tc.want)
			}
			if got := CountMismatches(b, a); got != len(tc.want) {
				t.Errorf("CountMismatches is not symmetric: %d", got)
			}
		})
	}

	t.Run("random frames agree with the cell-by-cell reference", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 5))
		for i := 0; i < 300; i++ {
			w, h := 1+r.IntN(70), 1+r.IntN(70)
			a := filled(t, w, h, 0)
			for j := range a.Cells() {
				a.Cells()[j] = uint8(r.IntN(16))
			}
			b := a.Clone()
			if r.IntN(4) == 0 {
				b = filled(t, 1+r.IntN(70), 1+r.IntN(70), 0)
			}
			for k := r.IntN(40); k > 0; k-- {
				b.Set(r.IntN(b.Width()), r.IntN(b.Height()), uint8(r.IntN(256)))
			}
			want := naiveMismatches(a, b)
			if got := Mismatches(a, b); !reflect.DeepEqual(got, want) {
				t.Fatalf("%d×%d vs %d×%d: got %v, want %v", w, h, b.Width(), b.Height(), got, want)
			}
			if got := CountMismatches(a, b); got != len(want) {
				t.Fatalf("count %d, want %d", got, len(want))
			}
		}
	})

	t.Run("counting two game frames allocates nothing", func(t *testing.T) {
		b := base.Clone()
		b.Set(5, 5, 4)
		dst := make([]Cell, 0, 8)
		if n := testing.AllocsPerRun(100, func() {
			_ = CountMismatches(base, b)
			dst = AppendMismatches(dst[:0], base, b)
		}); n != 0 {
			t.Fatalf("%v allocations", n)
		}
	})
}

func BenchmarkCompare64(b *testing.B) {
	a := gamePattern(b)
	p := a.Clone()
	p.Set(13, 41, 0)
	p.Set(40, 20, 8)
	b.Run("Equal", func(b *testing.B) {
		b.SetBytes(GameSide * GameSide)
		for b.Loop() {
			if Equal(a, p) {
				b.Fatal("equal")
			}
		}
	})
	b.Run("CountMismatches", func(b *testing.B) {
		b.SetBytes(GameSide * GameSide)
		for b.Loop() {
			if CountMismatches(a, p) != 2 {
				b.Fatal("count")
			}
		}
	})
	b.Run("AppendMismatches", func(b *testing.B) {
		b.SetBytes(GameSide * GameSide)
		dst := make([]Cell, 0, 8)
		for b.Loop() {
			dst = AppendMismatches(dst[:0], a, p)
		}
	})
}

func BenchmarkWritePNG64(b *testing.B) {
	g := gamePattern(b)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := g.WritePNG(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/png")
}

func BenchmarkParseASCII64(b *testing.B) {
	data := gamePattern(b).AppendASCII(nil)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseASCII(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMismatchViews64(b *testing.B) {
	a := gamePattern(b)
	p := a.Clone()
	p.Set(13, 41, 0)
	for b.Loop() {
		_ = MismatchRegion(a, p)
		_ = MismatchAsMagneta(a, p)
	}
}
