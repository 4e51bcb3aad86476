//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"syscall"
)

// flockWorks: lockFile can tell a live writer from a dead one here.
const flockWorks = true

// lockFile takes an exclusive flock(2) on f without waiting: ok is false
// when another open file (of this or another process) holds it. The kernel
// releases it when f is closed or the process dies (writer.go).
func lockFile(f *os.File) (ok bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// shareFile takes a shared flock(2) on f, waiting while an exclusive one
// is held (yieldToWaiters holds one only for an instant).
func shareFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
