//go:build !unix

package web_test

import "time"

// processCPU is 0 where getrusage is missing: cpu-µs/turn then reads 0.
func processCPU() time.Duration { return 0 }
