//go:build !linux

package main

// lowerPriority does nothing here: the nice value is set per thread on
// Linux only (nice_linux.go).
func lowerPriority(int) error { return nil }
