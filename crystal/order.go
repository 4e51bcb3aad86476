package crystal

import (
	"fmt"
	"math"
	"sort"
)

// DefaultAlpha is the weight of the order term in Ordered Match F1 (paper:
// α = 0.3; spec crystal.md "Ordered Match F1").
const DefaultAlpha = 0.3

// OrderMethod selects how the order of matched steps is scored.
type OrderMethod string

const (
	// OrderLIS (default, paper): length of the longest strictly increasing
	// subsequence of predicted indices, taken in reference order, ÷ number of
	// matches.
	OrderLIS OrderMethod = "lis"
	// OrderKendall (spec option): (τ + 1) / 2 with Kendall's τ between
	// reference and predicted indices of the matched pairs.
	OrderKendall OrderMethod = "kendall"
)

// Order is the Ordered Match F1 of one item (spec crystal.md "Ordered Match
// F1 (paper)"): OrderedF1 = F1 × ((1 − Alpha) + Alpha × Score).
type Order struct {
	Method OrderMethod `json:"method"`
	Alpha  float64     `json:"alpha"`
	// Score is the order score in [0, 1]: the LIS ratio or (τ+1)/2; 1 when
	// fewer than 2 pairs matched.
	Score float64 `json:"score"`
	// LIS is the longest strictly increasing subsequence length (OrderLIS).
	LIS int `json:"lis,omitempty"`
	// Tau is Kendall's τ in [−1, 1] (OrderKendall; 1 with < 2 pairs).
	Tau       float64 `json:"tau,omitempty"`
	F1        float64 `json:"f1"`
	OrderedF1 float64 `json:"ordered_f1"`
}

// OrderedF1 scores the order of m's matched pairs. method "" means OrderLIS.
// alpha must lie in [0, 1]. Errors: ErrBadParameter for an unknown method or
// an alpha outside [0, 1] (NaN included).
func OrderedF1(m Match, method OrderMethod, alpha float64) (Order, error) {
	method, err := checkOrder(method, alpha)
	if err != nil {
		return Order{}, err
	}
	s := PredOrder(m.Pairs)
	o := Order{Method: method, Alpha: alpha, F1: m.F1}
	if method == OrderLIS {
		o.LIS = LISLength(s)
		o.Score = LISRatio(s)
	} else {
		o.Tau = KendallTau(s)
		o.Score = (o.Tau + 1) / 2
	}
	o.OrderedF1 = m.F1 * ((1 - alpha) + alpha*o.Score)
	return o, nil
}

// checkOrder resolves "" to OrderLIS and rejects an unknown method or an
// alpha outside [0, 1].
func checkOrder(method OrderMethod, alpha float64) (OrderMethod, error) {
	if math.IsNaN(alpha) || alpha < 0 || alpha > 1 {
		return "", fmt.Errorf("%w: alpha %v not in [0, 1]", ErrBadParameter, alpha)
	}
	switch method {
	case "":
		return OrderLIS, nil
	case OrderLIS, OrderKendall:
		return method, nil
	}
	return "", fmt.Errorf("%w: order method %q (want %q or %q)", ErrBadParameter, string(method), OrderLIS, OrderKendall)
}

// PredOrder returns the predicted indices of pairs sorted by reference index
// ascending — the sequence whose monotonicity the order scores measure.
func PredOrder(pairs []Pair) []int {
	ps := append([]Pair(nil), pairs...)
	sort.Slice(ps, func(a, b int) bool { return ps[a].Ref < ps[b].Ref })
	out := make([]int, len(ps))
	for k, p := range ps {
		out[k] = p.Pred
	}
	return out
}

// LISLength returns the length of the longest strictly increasing
// subsequence of s (patience sorting, O(n log n)); 0 for an empty s.
func LISLength(s []int) int {
	var tails []int // tails[k]: smallest tail of an increasing run of length k+1
	for _, x := range s {
		k := sort.SearchInts(tails, x) // first tail ≥ x: strictness
		if k == len(tails) {
			tails = append(tails, x)
		} else {
			tails[k] = x
		}
	}
	return len(tails)
}

// LISRatio returns LISLength(s) ÷ len(s), and 1 when len(s) < 2 (paper).
func LISRatio(s []int) float64 {
	if len(s) < 2 {
		return 1
	}
	return float64(LISLength(s)) / float64(len(s))
}

// KendallTau returns Kendall's τ-a of s against its positions: (concordant −
// discordant) ÷ (n(n−1)/2), in [−1, 1]; tied values count as neither (they
// cannot occur in a 1:1 matching). 1 when len(s) < 2.
func KendallTau(s []int) float64 {
	n := len(s)
	if n < 2 {
		return 1
	}
	var c, d int
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			switch {
			case s[a] < s[b]:
				c++
			case s[a] > s[b]:
				d++
			}
		}
	}
	return float64(c-d) / float64(n*(n-1)/2)
}
