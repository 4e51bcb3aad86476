//go:build amd64 && !purego

package embedder

// dot4x4 is dot4x4Generic in SSE2 assembly (dot_amd64.s; SSE2 is part of
// every amd64 CPU, so there is nothing to detect). a must have at least
// n&^3 components and b0…b3 as many.
//
//go:noescape
func dot4x4(a *float32, b0, b1, b2, b3 *float64, n int, out *[16]float64)
