package embedder

import "unsafe"

// dot4x4Generic computes, for each of the four vectors b0…b3 (r = 0…3),
// the four partial sums of Cosine's dot product of a with it over the first
// n&^3 components: out[4r+q] = Σ float64(a[k])·b_r[k] over k ≡ q (mod 4),
// summed in increasing k. Those are the s0…s3 of dot before its
// remainder loop; dotFinish adds the remainder and combines them. dot4x4 is
// this function in assembly where there is one (dot_amd64.s), with the same
// results bit for bit.
func dot4x4Generic(a *float32, b0, b1, b2, b3 *float64, n int, out *[16]float64) {
	n &^= 3
	*out = [16]float64{}
	if n == 0 {
		return
	}
	x := unsafe.Slice(a, n)
	for r, p := range [4]*float64{b0, b1, b2, b3} {
		y := unsafe.Slice(p, n)
		var s0, s1, s2, s3 float64
		for k := 0; k+4 <= n; k += 4 {
			s0 += float64(float64(x[k]) * y[k])
			s1 += float64(float64(x[k+1]) * y[k+1])
			s2 += float64(float64(x[k+2]) * y[k+2])
			s3 += float64(float64(x[k+3]) * y[k+3])
		}
		out[4*r], out[4*r+1], out[4*r+2], out[4*r+3] = s0, s1, s2, s3
	}
}

// dotFinish completes one dot product from its four partial sums s (over
// the first len(a)&^3 components): the remaining components go into s[0],
// then (s0 + s1) + (s2 + s3), as dot does.
func dotFinish(s []float64, a []float32, b []float64) float64 {
	s0 := s[0]
	for k := len(a) &^ 3; k < len(a); k++ {
		s0 += float64(float64(a[k]) * b[k])
	}
	return (s0 + s[1]) + (s[2] + s[3])
}
