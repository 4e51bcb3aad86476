package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// anonFile is a pending output with no name until it is committed: an
// O_TMPFILE inode in the target's directory. A run killed outright (kill -9)
// leaves nothing behind, since the kernel frees an unlinked inode when its
// last descriptor closes (issue 15 item 6). Commit links it under a
// temporary name and renames that over the target, the microseconds between
// the two being the only time it has a name of its own.
type anonFile struct {
	*os.File
	target string
}

// newAnonFile opens an anonymous pending file for target with mode perm (the
// existing target's mode when there is one). It fails where the file system
// has no O_TMPFILE (the caller then falls back to a named pending file).
func newAnonFile(target string, existing fs.FileInfo) (pendingFile, error) {
	perm := os.FileMode(0o644)
	if existing != nil {
		perm = existing.Mode().Perm()
	}
	fd, err := unix.Open(filepath.Dir(target), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), target)
	if err := f.Chmod(perm); err != nil { // O_TMPFILE's mode went through the umask
		f.Close()
		return nil, err
	}
	return &anonFile{File: f, target: target}, nil
}

// PendingName is "": the file has no name to remove.
func (a *anonFile) PendingName() string { return "" }

// CloseAtomicallyReplace syncs the file, gives it a temporary name next to
// its target and renames it over the target.
func (a *anonFile) CloseAtomicallyReplace() error {
	defer a.File.Close()
	if err := a.Sync(); err != nil {
		return err
	}
	var suffix [8]byte
	rand.Read(suffix[:])
	tmp := filepath.Join(filepath.Dir(a.target), "."+filepath.Base(a.target)+".evident-"+hex.EncodeToString(suffix[:]))
	proc := fmt.Sprintf("/proc/self/fd/%d", a.Fd())
	err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		// Without /proc: AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
		if err2 := unix.Linkat(int(a.Fd()), "", unix.AT_FDCWD, tmp, unix.AT_EMPTY_PATH); err2 != nil {
			return fmt.Errorf("giving the output a name: %w", err)
		}
	}
	trackPending(tmp)
	defer untrackPending(tmp)
	if err := os.Rename(tmp, a.target); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(a.target)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Cleanup closes the file, which frees it.
func (a *anonFile) Cleanup() error { return a.File.Close() }
