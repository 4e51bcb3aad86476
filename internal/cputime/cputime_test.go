package cputime

import "testing"

// Process grows as the process works.
func TestProcessGrows(t *testing.T) {
	before, ok := Process()
	if !ok {
		t.Skip("CPU time is not measured on this system")
	}
	x := 0
	for {
		for i := range 1_000_000 {
			x += i
		}
		if now, _ := Process(); now > before {
			break
		}
	}
	_ = x
}
