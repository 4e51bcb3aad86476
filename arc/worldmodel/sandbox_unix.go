//go:build unix

package worldmodel

import (
	"bytes"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

var bwrapProbe struct {
	once      sync.Once
	path, why string
}

// bwrapNamespaces are the namespace options every sandboxed run uses; the
// probe uses the same ones.
var bwrapNamespaces = []string{"--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"}

// bwrapUsable finds bwrap on PATH and checks once per process that it can
// create the sandbox's namespaces here (inside some containers
// unprivileged namespaces are disabled): path, or why not.
func bwrapUsable() (path, why string) {
	bwrapProbe.once.Do(func() {
		p, err := osexec.LookPath("bwrap")
		if err != nil {
			bwrapProbe.why = "bwrap not found (Debian: apt-get install bubblewrap)"
			return
		}
		args := append([]string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}, bwrapNamespaces...)
		var stderr bytes.Buffer
		probe := osexec.Command(p, append(args, "true")...)
		probe.Stderr = &stderr
		if err := probe.Run(); err != nil {
			msg := strings.TrimSpace(stderr.String())
			if i := strings.IndexByte(msg, '\n'); i >= 0 {
				msg = msg[:i]
			}
			if msg == "" {
				msg = err.Error()
			}
			bwrapProbe.why = "bwrap cannot create its namespaces here (" + msg + ")"
			return
		}
		bwrapProbe.path = p
	})
	return bwrapProbe.path, bwrapProbe.why
}

// bwrapArgv is the bubblewrap command line that runs what follows it: the
// whole file system read-only, private empty /tmp, /var/tmp and /run (the
// workspace, the full frames, the adapter and the folders of absolute paths
// in the command bound again on top, read-only), private /dev and /proc, no
// network, its own PID namespace (so every
// process it starts, setsid or not, dies with it), killed with its parent,
// and — with prlimit — the memory, process and file-size rlimits.
func bwrapArgv(path string, spec sandboxSpec) []string {
	argv := []string{path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	for _, d := range privateDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			argv = append(argv, "--tmpfs", d)
		}
	}
	for _, d := range append([]string{spec.dir, spec.fullDir, spec.adapterDir}, commandDirs(spec.command)...) {
		if d == "" {
			continue
		}
		if _, err := os.Stat(d); err == nil {
			argv = append(argv, "--ro-bind", d, d)
		}
	}
	// What the model must not see of its workspace: the recorded session
	// and the client's state (guid, cookies), the agent run's transcript,
	// and git history (snapshots hold old sessions). Empty folders take
	// their place; initial_full_frames stays (load_initial_full_frame).
	for _, name := range hiddenWorkspaceDirs {
		d := filepath.Join(spec.dir, name)
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() && spec.dir != "" {
			argv = append(argv, "--tmpfs", d)
		}
	}
	argv = append(argv, bwrapNamespaces...)
	argv = append(argv, "--chdir", spec.dir, "--")
	if p, err := osexec.LookPath("prlimit"); err == nil {
		argv = append(argv, p)
		if spec.memory > 0 {
			argv = append(argv, "--as="+strconv.FormatInt(spec.memory, 10))
		}
		if spec.processes > 0 {
			argv = append(argv, "--nproc="+strconv.Itoa(spec.processes))
		}
		argv = append(argv, "--fsize="+strconv.Itoa(sandboxFileSize), "--")
	}
	return argv
}
