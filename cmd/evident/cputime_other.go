//go:build !linux

package main

import "time"

// processCPU is not measured here: interruptible's watchdog then ends a run
// that has not stopped after one grace period, as if it were blocked.
func processCPU() (time.Duration, bool) { return 0, false }
