package main

import (
	"syscall"
	"time"
)

// processCPU is the process's CPU time so far (user + system, all
// threads), and true; interruptible's watchdog tells a run that is
// stopping from one blocked in a system call by it.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
