// Package file owns two small file operations every adapter of the module
// needs the same way: reading a file with a cap on its size, and replacing
// a file atomically. It imports nothing of evident (internal plumbing, like
// internal/backoff).
package file

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrTooLarge is returned (wrapped, with the path) by ReadCapped for a file
// longer than its limit.
var ErrTooLarge = errors.New("file larger than its limit")

// ReadCapped reads the file at path whole when it holds at most limit bytes;
// a longer file is the error "PATH: larger than N bytes" (matching
// ErrTooLarge), read no further than limit+1 bytes. A missing file's error
// matches fs.ErrNotExist.
func ReadCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, &tooLarge{path: path, limit: limit}
	}
	return b, nil
}

// tooLarge is ReadCapped's error for a file over its limit: "PATH: larger
// than N bytes", matching ErrTooLarge.
type tooLarge struct {
	path  string
	limit int64
}

func (e *tooLarge) Error() string {
	return fmt.Sprintf("%s: larger than %d bytes", e.path, e.limit)
}

func (e *tooLarge) Is(target error) bool { return target == ErrTooLarge }

// WriteAtomic replaces the file at path with data: written to a temporary
// file in the same folder (created, with its parents, when missing), then
// renamed over path, so a reader sees the old file or the new one, never a
// part. The temporary file is removed on failure; errors name path.
func WriteAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
