//go:build unix

package worldmodel

import (
	"os"
	osexec "os/exec"
	"syscall"
)

// ownProcessGroup makes the child the leader of a new process group, so
// that killing the group also stops what it started (sh -c runs the model
// as its child).
func ownProcessGroup(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills p's process group.
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}
