package main

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// watchStop tells a run that is stopping from one blocked in a system call
// by the CPU time it used in each grace period.
func TestWatchStop(t *testing.T) {
	const grace = time.Millisecond // the periods' length decides nothing below: the CPU readings do
	never := make(chan struct{})

	t.Run("a run that used no CPU in the period is ended after it, without a note", func(t *testing.T) {
		exited := false
		watchStop(never, grace, func() (time.Duration, bool) { return 5 * time.Second, true },
			func() { t.Error("noted a blocked run") }, func() { exited = true })
		if !exited {
			t.Fatal("watchStop returned without ending the blocked run")
		}
	})

	t.Run("a run under a tenth of a core in the period counts as blocked", func(t *testing.T) {
		var n atomic.Int64
		exited := false
		watchStop(never, grace, func() (time.Duration, bool) { return time.Duration(n.Add(1)) * grace / 20, true },
			func() { t.Error("noted a blocked run") }, func() { exited = true })
		if !exited || n.Load() != 2 {
			t.Fatalf("exited %v after %d readings, want an exit at the second", exited, n.Load())
		}
	})

	t.Run("a run still working is waited for, with one note, until it finishes", func(t *testing.T) {
		finished := make(chan struct{})
		var n atomic.Int64
		cpu := func() (time.Duration, bool) {
			k := n.Add(1)
			if k == 6 {
				close(finished) // it finishes during its fifth period
			}
			return time.Duration(k) * time.Second, true // a second of CPU a period: busy
		}
		notes := 0
		watchStop(finished, grace, cpu, func() { notes++ }, func() { t.Fatal("ended a run that was working") })
		if notes != 1 || n.Load() < 6 {
			t.Fatalf("%d notes after %d readings, want one note and at least 6 readings", notes, n.Load())
		}
	})

	t.Run("where CPU time is not measured a run is ended after one period", func(t *testing.T) {
		exited := false
		watchStop(never, grace, func() (time.Duration, bool) { return 0, false },
			func() { t.Error("noted") }, func() { exited = true })
		if !exited {
			t.Fatal("watchStop returned without ending the run")
		}
	})
}

// A second signal while a run is stopping ends it at once; once the run has
// finished a signal is no longer taken.
func TestASecondSignalExitsAtOnce(t *testing.T) {
	t.Run("a second signal before the run finished", func(t *testing.T) {
		again := make(chan os.Signal, 1)
		again <- syscall.SIGTERM
		var got os.Signal
		exitOnSecond(again, make(chan struct{}), func(s os.Signal) { got = s })
		if got != syscall.SIGTERM {
			t.Fatalf("exit called with %v, want SIGTERM", got)
		}
	})
	t.Run("the run finished first", func(t *testing.T) {
		again := make(chan os.Signal, 1)
		finished := make(chan struct{})
		close(finished)
		exitOnSecond(again, finished, func(s os.Signal) { t.Fatalf("exit called with %v after the run finished", s) })
	})
}
