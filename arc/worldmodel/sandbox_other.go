//go:build !unix

package worldmodel

// bwrapUsable: there is no bubblewrap off Unix.
func bwrapUsable() (path, why string) { return "", "bwrap is Linux-only" }

func bwrapArgv(string, sandboxSpec) []string { return nil }
