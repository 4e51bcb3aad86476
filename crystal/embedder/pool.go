package embedder

import "math"

// meanPool is sentence-transformers' mean pooling for one sequence: the
// average of the token vectors whose attention mask is non-zero. hidden holds
// seq × dim values, row-major (token t's vector at hidden[t*dim:(t+1)*dim]);
// mask has seq entries. A sequence with no attended token pools to the zero
// vector (sentence-transformers divides by max(Σmask, 1e-9), which gives the
// same).
func meanPool(hidden []float32, mask []int64, seq, dim int) []float32 {
	out := make([]float32, dim)
	sum := make([]float64, dim)
	var n float64
	for t := 0; t < seq; t++ {
		if mask[t] == 0 {
			continue
		}
		n++
		row := hidden[t*dim : (t+1)*dim]
		for k, x := range row {
			sum[k] += float64(x)
		}
	}
	if n == 0 {
		return out
	}
	for k := range out {
		out[k] = float32(sum[k] / n)
	}
	return out
}

// l2Normalize scales v in place to unit length, as sentence-transformers'
// Normalize layer (torch.nn.functional.normalize, eps 1e-12) does; a zero
// vector stays zero.
func l2Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := math.Max(math.Sqrt(s), 1e-12)
	for k := range v {
		v[k] = float32(float64(v[k]) / n)
	}
}
