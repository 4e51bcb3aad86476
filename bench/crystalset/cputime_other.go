//go:build !unix

package crystalset

import "time"

// processCPU is not measured here; the benchmark reports wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
