//go:build !unix

package worldmodel

import (
	"os"
	osexec "os/exec"
)

// ownProcessGroup does nothing where there are no Unix process groups.
func ownProcessGroup(*osexec.Cmd) {}

// killGroup kills p alone.
func killGroup(p *os.Process) error { return p.Kill() }
