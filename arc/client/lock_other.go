//go:build !unix

package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// tryLock creates path+".held" with O_EXCL. ok is false when it exists. A
// crashed command leaves it behind; delete it by hand then.
func tryLock(path string) (release func() error, ok bool, err error) {
	held := path + ".held"
	f, err := os.OpenFile(held, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("client: lock: %w", err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
	return func() error { return os.Remove(held) }, true, nil
}
