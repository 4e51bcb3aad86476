package worldmodel

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// SandboxMode chooses how LoadSubprocess confines the model program
// (SubprocessOptions.Sandbox; issue 15 item 7).
type SandboxMode string

const (
	// SandboxAuto (also "") runs the program under bubblewrap when bwrap
	// is on PATH and can create its namespaces here, else in guard-rail
	// mode with a one-line notice.
	SandboxAuto SandboxMode = "auto"
	// SandboxBwrap requires bubblewrap: LoadSubprocess fails when it is
	// missing or cannot create namespaces.
	SandboxBwrap SandboxMode = "bwrap"
	// SandboxOff is guard-rail mode: the program runs as the user, in a
	// process group of its own that is killed on timeouts and at Close.
	SandboxOff SandboxMode = "off"
)

// Defaults of the bubblewrap sandbox's limits.
const (
	// DefaultSubprocessMemory is the address space (RLIMIT_AS) a sandboxed
	// model process may map when SubprocessOptions.MemoryLimit is 0: 4 GiB
	// (numpy, scipy and networkx load in well under 1 GiB).
	DefaultSubprocessMemory int64 = 4 << 30
	// DefaultSubprocessProcesses is RLIMIT_NPROC of a sandboxed model
	// when SubprocessOptions.MaxProcesses is 0.
	DefaultSubprocessProcesses = 64
	// sandboxFileSize is RLIMIT_FSIZE in the sandbox: the largest file
	// the program may write (only its private /tmp is writable).
	sandboxFileSize = 64 << 20
)

// probeBwrap is bwrapUsable; tests replace it.
var probeBwrap = bwrapUsable

// sandboxUsed names what confines a started program, for Subprocess.Sandbox.
const (
	sandboxNameBwrap = "bwrap"
	sandboxNameGuard = "guard-rail"
)

// sandboxSpec is what the sandbox must let the program see.
type sandboxSpec struct {
	dir, fullDir, adapterDir string
	// command is the program's command line: the folders of the absolute
	// paths in it that lie under a private folder (/tmp, say) are bound
	// read-only, so a program or interpreter kept there is found.
	command   string
	memory    int64
	processes int
}

// privateDirs are the folders the sandbox replaces by empty private ones:
// /tmp and /var/tmp (shared scratch), /run (sockets of daemons: D-Bus, the
// Docker socket, ssh agents; /var/run links there on Debian).
var privateDirs = []string{"/tmp", "/var/tmp", "/run"}

// hiddenWorkspaceDirs are the workspace folders the sandbox replaces by
// empty ones (issue 11: the world model reads nothing of the session but
// through load_initial_full_frame): client/ (session/ and the state file),
// agent/ (the controller's transcript and policy) and .git (snapshots).
var hiddenWorkspaceDirs = []string{"client", "agent", ".git"}

// commandDirs are the folders of the absolute paths in command (a word
// starting with "/", quotes stripped) that exist under a private folder.
func commandDirs(command string) []string {
	var out []string
	for _, w := range strings.Fields(command) {
		w = strings.Trim(w, `'"`)
		if !filepath.IsAbs(w) {
			continue
		}
		fi, err := os.Lstat(w)
		if err != nil {
			continue
		}
		d := w
		if !fi.IsDir() {
			d = filepath.Dir(w)
		}
		for _, p := range privateDirs {
			if strings.HasPrefix(d, p+"/") {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// GuardRailNotice is the line (newline included) that a Subprocess in
// SandboxAuto mode writes to its Notice on this machine: "" where bubblewrap
// works here, else "world model: WHY; running the model program in
// guard-rail mode (no sandbox)\n", WHY naming what is missing ("bwrap not
// found (Debian: apt-get install bubblewrap)") or failing. The probe runs
// once per process.
func GuardRailNotice() string {
	_, why := probeBwrap()
	if why == "" {
		return ""
	}
	return guardRailNotice(why)
}

func guardRailNotice(why string) string {
	return "world model: " + why + "; running the model program in guard-rail mode (no sandbox)\n"
}

// chooseSandbox decides the runtime's confinement: argv wraps the "sh -c
// command" argv (nil for guard-rail mode); notice is written when auto
// falls back.
func chooseSandbox(mode SandboxMode, spec sandboxSpec, notice io.Writer) (wrap []string, used string, err error) {
	switch mode {
	case "", SandboxAuto, SandboxBwrap:
	case SandboxOff:
		return nil, sandboxNameGuard, nil
	default:
		return nil, "", fmt.Errorf("worldmodel: sandbox %q, want auto, bwrap or off", mode)
	}
	path, why := probeBwrap()
	if why != "" {
		if mode == SandboxBwrap {
			return nil, "", fmt.Errorf("worldmodel: sandbox bwrap: %s", why)
		}
		if notice != nil {
			io.WriteString(notice, guardRailNotice(why))
		}
		return nil, sandboxNameGuard, nil
	}
	return bwrapArgv(path, spec), sandboxNameBwrap, nil
}
