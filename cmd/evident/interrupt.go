package main

// SIGINT and SIGTERM end a long command (judge, import) through its context,
// so its deferred cleanups run: pending outputs are removed, the store's
// transaction rolls back; exit status 130.

import (
	"context"
	"errors"
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
// once as usual. A run that has not returned stopGrace after the signal
// (blocked in a system call) has its pending outputs removed and the process
// exits with status 130 (interruptedExit), as interrupted runs also report
// through interrupted. While it runs, a write to a closed pipe on stdout or stderr
// fails with EPIPE instead of killing the process with SIGPIPE (os/signal),
// so that error takes the same way out. Call stop when done.
func interruptible(parent context.Context) (_ context.Context, stop func()) {
	ctx, stopSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		stopSignals() // the next signal has its default effect
		if parent.Err() != nil {
			return // the caller cancelled, not a signal
		}
		// A run blocked in a system call (opening a named pipe nobody
		// writes, writing to a pipe nobody reads) never sees the
		// cancellation: after a grace period remove its pending outputs
		// and exit, as the signal would have.
		select {
		case <-finished:
		case <-time.After(stopGrace):
			removePending()
			fmt.Fprintf(os.Stderr, "evident: %v; the run did not stop within %v (blocked on a file?), exiting\n", context.Cause(ctx), stopGrace)
			os.Exit(interruptedExit)
		}
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

// stopGrace is how long an interrupted run may take to stop by itself.
const stopGrace = 3 * time.Second

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
