//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import "os"

// flockWorks: lockFile can tell a live writer from a dead one here.
const flockWorks = false

// lockFile cannot tell on this system whether a writer is alive (no
// flock): every writer counts as alive, so a dead writer's invisible rows
// are never reclaimed here (package doc, "Transactions and safety").
func lockFile(*os.File) (ok bool, err error) { return false, nil }

// shareFile does nothing here (no flock): announceWait is then a no-op.
func shareFile(*os.File) error { return nil }
