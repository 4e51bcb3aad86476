//go:build !unix

package store

import "time"

// cpuTime is unknown on this platform.
func cpuTime() time.Duration { return 0 }
