package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// lowerPriority sets the nice value of every thread of this process to n
// (0 leaves it; Linux keeps nice per thread, and the threads Go starts
// later inherit it from the thread that starts them). evident import and
// judge --db call it (--nice, default 10): a long import on a machine
// that also serves the screen then gives the server's pages the CPU first
// (bench/store.sh measures pages while an import runs), and on an idle
// machine it changes nothing. Raising the value needs no privilege; an
// error names the thread.
func lowerPriority(n int) error {
	if n == 0 {
		return nil
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("--nice: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && err != syscall.ESRCH {
			return fmt.Errorf("--nice %d: thread %d: %w", n, tid, err)
		}
	}
	return nil
}
