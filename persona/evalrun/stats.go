package evalrun

import (
	"fmt"
	"math"
	"math/big"
)

// Z95 is the standard normal quantile Φ⁻¹(0.975), the z of a two-sided 95 %
// interval.
const Z95 = 1.959963984540054

// Interval is a closed interval [Lo, Hi] of a proportion.
type Interval struct {
	Lo float64 `json:"lo"` // lower bound, ≥ 0
	Hi float64 `json:"hi"` // upper bound, ≤ 1
}

// Wilson returns the 95 % Wilson score interval for k successes out of n
// (Wilson 1927; formula in the package doc). ok is false when the interval is
// undefined: n ≤ 0, k < 0 or k > n.
func Wilson(k, n int) (iv Interval, ok bool) {
	if n <= 0 || k < 0 || k > n {
		return Interval{}, false
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := Z95 * Z95
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := Z95 / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Interval{Lo: clamp01(centre - half), Hi: clamp01(centre + half)}, true
}

func clamp01(x float64) float64 {
	return math.Min(1, math.Max(0, x))
}

// Kappa returns Cohen's kappa (Cohen 1960) of a square confusion matrix m
// (m[i][j] = items rater one put in class i and rater two in class j). ok is
// false when kappa is undefined: m is empty or not square, has a negative
// cell, holds no item, or the chance agreement p_e is 1.
func Kappa(m [][]int) (kappa float64, ok bool) {
	k := len(m)
	if k == 0 {
		return 0, false
	}
	rows := make([]float64, k)
	cols := make([]float64, k)
	var n, diag float64
	for i, row := range m {
		if len(row) != k {
			return 0, false
		}
		for j, x := range row {
			if x < 0 {
				return 0, false
			}
			rows[i] += float64(x)
			cols[j] += float64(x)
			n += float64(x)
			if i == j {
				diag += float64(x)
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	var pe float64
	for i := range k {
		pe += rows[i] * cols[i]
	}
	pe /= n * n
	if pe >= 1 {
		return 0, false
	}
	return (diag/n - pe) / (1 - pe), true
}

// exactLimit is the largest b+c for which McNemarExact sums binomial
// coefficients exactly with math/big; beyond it uses log-gamma.
const exactLimit = 4096

// McNemarExact returns the two-sided p-value of McNemar's exact test
// (McNemar 1947, binomial form) for b and c discordant pairs:
// min(1, 2·Σ_{i≤min(b,c)} C(b+c,i)/2^(b+c)), and 1 when b+c = 0. It panics
// when b or c is negative (counts cannot be).
func McNemarExact(b, c int) float64 {
	if b < 0 || c < 0 {
		panic(fmt.Sprintf("evalrun.McNemarExact: negative count (b=%d, c=%d)", b, c))
	}
	n, k := b+c, min(b, c)
	if n == 0 {
		return 1
	}
	if n <= exactLimit {
		return mcnemarBig(n, k)
	}
	return mcnemarLog(n, k)
}

// mcnemarBig computes min(1, 2·Σ_{i≤k} C(n,i)/2^n) with exact integers.
func mcnemarBig(n, k int) float64 {
	sum := big.NewInt(0)
	term := big.NewInt(1) // C(n, 0)
	for i := 0; i <= k; i++ {
		if i > 0 { // C(n,i) = C(n,i-1)·(n-i+1)/i, exact at every step
			term.Mul(term, big.NewInt(int64(n-i+1)))
			term.Quo(term, big.NewInt(int64(i)))
		}
		sum.Add(sum, term)
	}
	num := new(big.Int).Lsh(sum, 1)                 // 2·Σ
	den := new(big.Int).Lsh(big.NewInt(1), uint(n)) // 2^n
	if num.Cmp(den) >= 0 {
		return 1
	}
	p, _ := new(big.Rat).SetFrac(num, den).Float64()
	return p
}

// mcnemarLog computes the same value as mcnemarBig with log-gamma: the tail
// terms C(n,i)/2^n for i ≤ k ≤ n/2 grow with i, so the sum is the largest
// term C(n,k)/2^n times Σ of ratios taken from i = k downwards, where each
// ratio C(n,i-1)/C(n,i) = i/(n-i+1) < 1.
func mcnemarLog(n, k int) float64 {
	lnTerm := lnChoose(n, k) - float64(n)*math.Ln2
	s, r := 1.0, 1.0
	for i := k; i > 0; i-- {
		r *= float64(i) / float64(n-i+1)
		s += r
		if r < s*1e-17 {
			break
		}
	}
	return math.Min(1, 2*math.Exp(lnTerm+math.Log(s)))
}

func lnChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
