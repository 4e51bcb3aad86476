//go:build !linux

package main

import (
	"errors"
	"io/fs"
)

// newAnonFile has no anonymous files to offer off Linux; the caller uses a
// named pending file.
func newAnonFile(target string, existing fs.FileInfo) (pendingFile, error) {
	return nil, errors.ErrUnsupported
}
