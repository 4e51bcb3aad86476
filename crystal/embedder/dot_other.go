//go:build !amd64 || purego

package embedder

func dot4x4(a *float32, b0, b1, b2, b3 *float64, n int, out *[16]float64) {
	dot4x4Generic(a, b0, b1, b2, b3, n, out)
}
