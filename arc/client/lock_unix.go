//go:build unix

package client

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on path without blocking. ok is false
// when another open file (in this or another process) holds it. The lock
// dies with the process, so a crashed command never leaves it behind.
func tryLock(path string) (release func() error, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("client: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("client: lock %s: %w", path, err)
	}
	// The pid is for people reading the file; the lock is the flock.
	f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() error {
		f.Truncate(0)
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, true, nil
}
