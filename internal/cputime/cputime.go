// Package cputime reads the CPU time the process has used: benchmarks
// report it beside wall time (which other work on shared cores inflates),
// and evident's interrupt watchdog tells a run that is stopping from one
// blocked in a system call by it. It imports nothing of evident.
package cputime
