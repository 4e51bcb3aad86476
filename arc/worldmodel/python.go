package worldmodel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"
)

// FallbackPythons are the interpreters FindPython tries after every python3
// on PATH: where Debian and Ubuntu (baseline1's agent image) install theirs
// with python3-numpy, and where a source build goes.
var FallbackPythons = []string{"/usr/bin/python3", "/usr/local/bin/python3"}

// probeTimeout bounds one interpreter probe (starting Python and importing
// numpy; a cold disk cache can take seconds).
const probeTimeout = 30 * time.Second

// probeScript prints "VERSION NUMPY_VERSION" and fails without numpy; it
// rejects Pythons older than 3.8, which have no audit hooks (the adapter's
// sandbox).
const probeScript = `import sys
if sys.version_info < (3, 8):
    sys.exit("Python %s is older than 3.8 (no audit hooks)" % sys.version.split()[0])
import numpy
print(sys.version.split()[0], numpy.__version__)
`

// Python is an interpreter FindPython chose.
type Python struct {
	// Path is the interpreter as found: the --python value as given when it
	// has a slash, else the PATH entry's file (not resolved through links,
	// so a virtual environment's python3 stays itself).
	Path string
	// Version and NumPy are the versions the probe printed ("3.11.2",
	// "1.24.2").
	Version, NumPy string
	// Skipped lists the candidates tried before Path and rejected, each
	// "PATH (why)", in the order tried.
	Skipped []string
}

// String is the line the command line prints on stderr:
// "python: /usr/bin/python3 (python 3.11.2, numpy 1.24.2)", followed by
// "; skipped /root/.pyenv/shims/python3 (cannot import numpy)" when
// candidates were skipped.
func (p Python) String() string {
	s := fmt.Sprintf("python: %s (python %s, numpy %s)", p.Path, p.Version, p.NumPy)
	if len(p.Skipped) > 0 {
		s += "; skipped " + strings.Join(p.Skipped, ", ")
	}
	return s
}

// Command is the SubprocessOptions.Command that runs the embedded adapter
// with this interpreter.
func (p Python) Command() string { return shellQuote(p.Path) + " " + AdapterPlaceholder }

// ErrNoPython: no interpreter with numpy was found.
var ErrNoPython = errors.New("no python3 with numpy")

// FindPython picks the interpreter for the Python adapter (issue 10 item 4):
// explicit (the --python flag) when it is not "", found on PATH when it has
// no slash; otherwise the first python3 in the folders of pathEnv (a PATH
// value, in order) that imports numpy, then FallbackPythons. A candidate
// qualifies when "PY -c <probe>" imports numpy on Python ≥ 3.8 within 30 s;
// candidates that are the same file as one already tried are not probed
// again. The error wraps ErrNoPython and lists every candidate with why it
// was rejected (an explicit interpreter is never replaced by another).
func FindPython(ctx context.Context, explicit, pathEnv string) (Python, error) {
	if explicit != "" {
		p := explicit
		if !strings.ContainsRune(p, os.PathSeparator) {
			lp, err := osexec.LookPath(p)
			if err != nil {
				return Python{}, fmt.Errorf("%w: --python %s: not found on PATH", ErrNoPython, explicit)
			}
			p = lp
		}
		version, numpy, why := probePython(ctx, p)
		if why != "" {
			return Python{}, fmt.Errorf("%w: --python %s: %s", ErrNoPython, explicit, why)
		}
		return Python{Path: p, Version: version, NumPy: numpy}, nil
	}
	var candidates []string
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		candidates = append(candidates, filepath.Join(dir, "python3"))
	}
	candidates = append(candidates, FallbackPythons...)
	var found Python
	seen := map[string]bool{}
	for _, c := range candidates {
		info, err := os.Stat(c)
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			continue
		}
		id := c
		if r, err := filepath.EvalSymlinks(c); err == nil {
			id = r
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		version, numpy, why := probePython(ctx, c)
		if why == "" {
			found.Path, found.Version, found.NumPy = c, version, numpy
			return found, nil
		}
		found.Skipped = append(found.Skipped, c+" ("+why+")")
		if ctx.Err() != nil {
			break
		}
	}
	tried := "no python3 on PATH or at " + strings.Join(FallbackPythons, ", ")
	if len(found.Skipped) > 0 {
		tried = "tried " + strings.Join(found.Skipped, ", ")
	}
	return Python{}, fmt.Errorf("%w: %s; install numpy (Debian: apt-get install python3-numpy) or name an interpreter with --python PATH", ErrNoPython, tried)
}

// probePython runs the probe; why is "" when p qualifies.
func probePython(ctx context.Context, p string) (version, numpy, why string) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := osexec.CommandContext(ctx, p, "-c", probeScript)
	var out, errOut capped
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = exitGrace
	err := cmd.Run()
	if err == nil {
		f := strings.Fields(out.String())
		if len(f) == 2 {
			return f[0], f[1], ""
		}
		return "", "", fmt.Sprintf("unexpected probe output %s", clip(out.b))
	}
	switch {
	case ctx.Err() != nil:
		return "", "", "no answer within " + probeTimeout.String()
	case strings.Contains(errOut.String(), "No module named 'numpy'"):
		return "", "", "cannot import numpy"
	}
	last := strings.TrimSpace(errOut.String())
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	if last == "" {
		last = err.Error()
	}
	return "", "", clipString(last)
}

// capped keeps the first 4 KiB written to it.
type capped struct{ b []byte }

func (c *capped) Write(p []byte) (int, error) {
	if room := 4<<10 - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) String() string { return string(bytes.ToValidUTF8(c.b, []byte("�"))) }

func clipString(s string) string {
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
