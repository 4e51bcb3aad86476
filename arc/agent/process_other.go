//go:build !unix

package agent

import (
	"os"
	"syscall"
)

func newProcessGroup() *syscall.SysProcAttr { return nil }

// killGroup kills the process itself where there are no process groups.
func killGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
