package evalrun

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestWilson(t *testing.T) {
	// Hand computation for 81/100 (z = 1.959963984540054):
	//   z²           = 3.8414588206941254
	//   z²/n         = 0.038414588206941255,   1 + z²/n = 1.0384145882069413
	//   p̂ + z²/2n    = 0.81 + 0.019207294103470628 = 0.8292072941034707
	//   centre       = 0.8292072941034707 / 1.0384145882069413 = 0.7985320155558344
	//   p̂(1−p̂)/n     = 0.81·0.19/100 = 0.001539
	//   z²/4n²       = 3.8414588206941254/40000 = 0.00009603647051735313
	//   √(sum)       = √0.0016350364705173531 = 0.04043558421140163
	//   half         = 1.959963984540054 · 0.04043558421140163 / 1.0384145882069413
	//                = 0.07925228874818363 / 1.0384145882069413 = 0.07632046934647818
	//   [Lo, Hi]     = [0.7222115462093562, 0.8748524849023126]
	// 0/10: centre = half = (z²/2n)/(1 + z²/n), so Lo = 0 and
	//   Hi = (z²/n)/(1 + z²/n) = 0.38414588206941255/1.3841458820694125 = 0.2775327998628892.
	// 10/10 mirrors it: Lo = 1/(1 + z²/n) = 0.7224672001371107, Hi = 1.
	tests := []struct {
		name   string
		k, n   int
		lo, hi float64
		ok     bool
	}{
		{"81 of 100 gives the hand-computed interval", 81, 100, 0.7222115462093562, 0.8748524849023126, true},
		{"0 of 10 starts at zero and is not degenerate", 0, 10, 0, 0.2775327998628892, true},
		{"10 of 10 ends at one and is not degenerate", 10, 10, 0.7224672001371107, 1, true},
		{"half of 2 is symmetric around one half", 1, 2, 0.09453120573423074, 0.9054687942657693, true},
		{"an empty sample has no interval", 0, 0, 0, 0, false},
		{"more successes than trials has no interval", 3, 2, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iv, ok := Wilson(tc.k, tc.n)
			if ok != tc.ok {
				t.Fatalf("Wilson(%d, %d) ok = %v, want %v", tc.k, tc.n, ok, tc.ok)
			}
			if !ok {
				return
			}
			if !near(iv.Lo, tc.lo, 1e-4) || !near(iv.Hi, tc.hi, 1e-4) {
				t.Errorf("Wilson(%d, %d) = [%.10f, %.10f], want [%.10f, %.10f]", tc.k, tc.n, iv.Lo, iv.Hi, tc.lo, tc.hi)
			}
			if !near(iv.Lo, tc.lo, 1e-12) || !near(iv.Hi, tc.hi, 1e-12) {
				t.Errorf("Wilson(%d, %d) = [%.17g, %.17g], want [%.17g, %.17g] to 1e-12", tc.k, tc.n, iv.Lo, iv.Hi, tc.lo, tc.hi)
			}
			if iv.Lo < 0 || iv.Hi > 1 || iv.Lo > iv.Hi {
				t.Errorf("interval [%g, %g] leaves [0, 1]", iv.Lo, iv.Hi)
			}
		})
	}
}

func TestKappa(t *testing.T) {
	tests := []struct {
		name  string
		m     [][]int
		kappa float64
		ok    bool
	}{
		// p_o = 35/50 = 0.7; rows 25, 25; cols 30, 20;
		// p_e = (25·30 + 25·20)/50² = 1250/2500 = 0.5; κ = 0.2/0.5 = 0.4.
		{"two classes with 35 of 50 agreeing give 0.4", [][]int{{20, 5}, {10, 15}}, 0.4, true},
		// p_o = 24/30; rows 12, 10, 8; cols 11, 12, 7;
		// p_e = (132 + 120 + 56)/900 = 308/900; κ = (720 − 308)/(900 − 308) = 412/592.
		{"three classes give 412/592", [][]int{{10, 2, 0}, {1, 8, 1}, {0, 2, 6}}, 412.0 / 592.0, true},
		{"perfect agreement gives one", [][]int{{5, 0, 0}, {0, 3, 0}, {0, 0, 2}}, 1, true},
		// p_o = 0.5 = p_e.
		{"agreement at chance level gives zero", [][]int{{25, 25}, {25, 25}}, 0, true},
		// p_o = 0, p_e = (10·10 + 10·10)/400 = 0.5: κ = −1.
		{"systematic disagreement gives minus one", [][]int{{0, 10}, {10, 0}}, -1, true},
		{"one class on both sides is undefined", [][]int{{7, 0}, {0, 0}}, 0, false},
		{"an empty matrix is undefined", [][]int{{0, 0}, {0, 0}}, 0, false},
		{"a ragged matrix is undefined", [][]int{{1, 2}, {3}}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := Kappa(tc.m)
			if ok != tc.ok {
				t.Fatalf("Kappa ok = %v, want %v", ok, tc.ok)
			}
			if ok && !near(k, tc.kappa, 1e-12) {
				t.Errorf("Kappa = %.15f, want %.15f", k, tc.kappa)
			}
		})
	}
}

func TestMcNemarExact(t *testing.T) {
	tests := []struct {
		name string
		b, c int
		p    float64
	}{
		{"no discordant pairs gives one", 0, 0, 1},
		// 2·C(5,0)/2⁵ = 2/32.
		{"five against none gives 0.0625", 5, 0, 0.0625},
		{"none against five is symmetric", 0, 5, 0.0625},
		// n = 12: C(12,0) + C(12,1) + C(12,2) = 1 + 12 + 66 = 79; p = 2·79/4096 = 158/4096.
		{"ten against two gives 158/4096", 10, 2, 158.0 / 4096.0},
		{"two against ten is symmetric", 2, 10, 158.0 / 4096.0},
		// n = 4: 2·(1 + 4)/16 = 10/16.
		{"three against one gives 0.625", 3, 1, 0.625},
		{"equal counts give one", 3, 3, 1},
		{"one against none is capped at one", 1, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if p := McNemarExact(tc.b, tc.c); !near(p, tc.p, 1e-15) {
				t.Errorf("McNemarExact(%d, %d) = %.17g, want %.17g", tc.b, tc.c, p, tc.p)
			}
		})
	}
	t.Run("the exact and the log-gamma forms agree near the switch", func(t *testing.T) {
		for _, bc := range [][2]int{{2000, 2096}, {1900, 2100}, {1000, 3000}, {2048, 2048}, {10, 4000}} {
			n, k := bc[0]+bc[1], min(bc[0], bc[1])
			exact, approx := mcnemarBig(n, k), mcnemarLog(n, k)
			if exact == 0 && approx == 0 {
				continue
			}
			if rel := math.Abs(exact-approx) / exact; rel > 1e-9 {
				t.Errorf("(b,c)=%v: big %.17g, log-gamma %.17g (rel %.2g)", bc, exact, approx, rel)
			}
		}
	})
	t.Run("large counts stay finite and inside [0, 1]", func(t *testing.T) {
		for _, bc := range [][2]int{{500000, 500000}, {500000, 501000}, {1000000, 900000}} {
			p := McNemarExact(bc[0], bc[1])
			if math.IsNaN(p) || p < 0 || p > 1 {
				t.Errorf("McNemarExact%v = %g", bc, p)
			}
		}
		if p := McNemarExact(500000, 500000); p != 1 {
			t.Errorf("equal large counts give %g, want 1", p)
		}
		if p := McNemarExact(1000000, 900000); p != 0 && p > 1e-100 {
			t.Errorf("a difference of 100000 in 1.9 million gives %g, want ~0", p)
		}
	})
	t.Run("a negative count panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		McNemarExact(-1, 2)
	})
}
