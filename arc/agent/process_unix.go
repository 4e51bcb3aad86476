//go:build unix

package agent

import "syscall"

// newProcessGroup puts the agent in its own process group, so that the
// watchdog stops the agent and everything it started.
func newProcessGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup signals the process group of pid.
func killGroup(pid int, sig syscall.Signal) { syscall.Kill(-pid, sig) }
