//go:build unix

package web_test

import (
	"syscall"
	"time"
)

// processCPU is the process's user+system CPU time so far (getrusage), 0
// when unknown.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
