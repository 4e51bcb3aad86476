package main

// SIGINT and SIGTERM end a long command (judge, import) through its context,
// so its deferred cleanups run: pending outputs are removed, the store's
// transaction rolls back; exit status 130.

import (
	"context"
	"errors"
	"evident/internal/cputime"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// interruptible returns ctx cancelled by the first SIGINT or SIGTERM, so
// that a run stops through its context and its deferred cleanups remove
// pending outputs and temporary files; a second signal ends the process at
// once (exit status 130, pending outputs removed, no other cleanup). A run
// that has not returned stopGrace after the signal and used almost no CPU
// in it (blocked in a system call; see stopping) has its pending outputs
// removed and the process exits with status 130 (interruptedExit); one
// still working is waited for, period after period, with a note on stderr.
// Interrupted runs also report through interrupted. While it runs, a write
// to a closed pipe on stdout or stderr fails with EPIPE instead of killing
// the process with SIGPIPE (os/signal), so that error takes the same way
// out. Call stop when done.
func interruptible(parent context.Context) (_ context.Context, stop func()) {
	ctx, stopSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		if parent.Err() != nil {
			stopSignals()
			return // the caller cancelled, not a signal
		}
		// A second signal ends the process at once, leaving what the run
		// would still clean up (a store's rollback) to the next command
		// that opens the store. Handled here rather than left to the
		// signal's default effect, which is none for a process started
		// with it ignored (a background job of a script).
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		stopSignals()
		// exitNow removes the pending outputs, says why and exits.
		exitNow := func(format string, args ...any) {
			removePending()
			fmt.Fprintf(os.Stderr, format, args...)
			os.Exit(interruptedExit)
		}
		go exitOnSecond(again, finished, func(sig os.Signal) { exitNow("evident: %v again, exiting at once\n", sig) })
		// A run blocked in a system call (opening a named pipe nobody
		// writes, writing to a pipe nobody reads) never sees the
		// cancellation: watchStop ends it.
		cause := context.Cause(ctx)
		watchStop(finished, stopGrace, cputime.Process, func() {
			fmt.Fprintf(os.Stderr, "evident: %v; still stopping (cleaning up: a store rolls back what the import wrote); a second Ctrl-C exits at once and leaves that to the next command that opens the store\n", cause)
		}, func() {
			exitNow("evident: %v; the run did not stop within %v (blocked on a file?), exiting\n", cause, stopGrace)
		})
	}()
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	var once sync.Once
	return ctx, func() {
		once.Do(func() { close(finished) })
		stopSignals()
		signal.Stop(pipe)
	}
}

// exitOnSecond calls exit with a signal that arrives on again before
// finished is closed; when finished is closed first it stops the
// signals' delivery to again.
func exitOnSecond(again chan os.Signal, finished <-chan struct{}, exit func(os.Signal)) {
	select {
	case sig := <-again:
		exit(sig)
	case <-finished:
		signal.Stop(again)
	}
}

// watchStop waits for an interrupted run to finish. After each grace
// period it reads cpu (the process's CPU time; ok false where it is not
// measured): a run that used almost none in the period (see stopping) is
// blocked in a system call, and exit is called (it does not return); one
// that used more is stopping (a store rolling back an import deletes the
// rows its batches committed: over 3 s for 90,000 turns) and gets another
// period, note being called once. It returns when finished is closed.
func watchStop(finished <-chan struct{}, grace time.Duration, cpu func() (time.Duration, bool), note, exit func()) {
	cpu0, measured := cpu()
	noted := false
	for {
		t := time.NewTimer(grace)
		select {
		case <-finished:
			t.Stop()
			return
		case <-t.C:
		}
		now, _ := cpu()
		if !measured || !stopping(now-cpu0, grace) {
			exit()
			return
		}
		cpu0 = now
		if !noted {
			noted = true
			note()
		}
	}
}

// stopGrace is how long an interrupted run may take to stop by itself
// while it uses less than a tenth of a core (see stopping).
const stopGrace = 3 * time.Second

// stopping reports whether an interrupted run that used cpu in the last
// grace period is working toward its stop (at least a tenth of one core)
// rather than blocked in a system call.
func stopping(cpu, grace time.Duration) bool { return cpu >= grace/10 }

// interruptedExit is the exit status of a run ended by SIGINT or SIGTERM
// (128 + SIGINT, as shells report an interrupted command).
const interruptedExit = 130

// interruptError is a run's error when a signal cancelled it: the cause and
// the error, with exit status interruptedExit (main's exitCode).
type interruptError struct{ err error }

func (e interruptError) Error() string { return e.err.Error() }
func (e interruptError) Unwrap() error { return e.err }

// ExitCode implements cli.ExitCoder.
func (e interruptError) ExitCode() int { return interruptedExit }

// interrupted adds the signal that cancelled ctx (see interruptible) to an
// error caused by the cancellation, and gives it exit status 130.
func interrupted(ctx context.Context, err error) error {
	if err == nil || !errors.Is(err, context.Canceled) {
		return err
	}
	// A signal's cause is its own error ("interrupt signal received"),
	// which also matches context.Canceled.
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		if !errors.Is(err, cause) {
			err = fmt.Errorf("%w: %w", cause, err)
		}
		return interruptError{err}
	}
	return err
}
