//go:build !unix

package kafka_test

import (
	"testing"
	"time"
)

// processCPU is 0 where getrusage is missing: cpu-µs/turn then reads 0.
func processCPU(*testing.B) time.Duration { return 0 }
