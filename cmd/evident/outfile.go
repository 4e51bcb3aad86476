package main

// User-named output files (judge --out, --rejects and --summary-log,
// crystal score --items, report --html, review export --out, card write
// --out): a regular file is replaced atomically when the run succeeds, so a
// failed or interrupted run leaves what was there; a symbolic link is
// followed, so its target gets the output and the link stays; a device or
// named pipe (/dev/null, a FIFO) is written in place, never replaced by a
// regular file; and so is a name of standard output or error (/dev/stdout,
// /dev/stderr, /dev/fd/1), whatever it is open on (`--out /dev/stdout >>
// log` appends to log, where replacing what /dev/stdout resolves to would
// replace log). Another descriptor's name (/dev/fd/9, /dev/stdin) is
// refused: it may be one the process opened itself, a store's WAL. So is,
// on Linux, any name that reaches a file the process has open, whatever way
// it gets there (the store's own path, a link to /proc/thread-self/fd/5):
// checked when the output is created and again just before it replaces its
// target (openHere).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/renameio/v2"
)

// maxLinks bounds the symbolic links resolveOutput follows by hand (Linux's
// own limit is 40).
const maxLinks = 40

// outFile is one output file being written: a pending file that replaces a
// regular file (or creates it) on commit, or a device or named pipe opened
// for writing.
type outFile struct {
	io.Writer
	flag    string      // "--out", for errors
	target  string      // the file a pending file replaces (links resolved)
	pending pendingFile // nil when writing in place
	direct  *os.File    // set when writing in place
	std     bool        // direct is os.Stdout or os.Stderr: never closed
}

// descriptorOf returns the descriptor that path names when it names one of
// the process's descriptors: /dev/stdout (1), /dev/stderr (2), /dev/fd/N
// or /proc/self/fd/N (N ≥ 0; /dev/stdin is 0). createOutput takes 1 and 2
// only.
func descriptorOf(path string) (int, bool) {
	p := filepath.Clean(path)
	switch p {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(p, dir); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// createOutput opens path for output; flag ("--out") prefixes errors. A
// symbolic link is resolved first. Call commit when the run succeeded and
// cleanup in any case (a no-op after commit).
func createOutput(flag, path string) (*outFile, error) {
	if fd, ok := descriptorOf(path); ok {
		// One of the process's open descriptors (--out /dev/stdout):
		// written in place, as the shell opened it (appending after
		// `>>`); replacing what it resolves to would replace the
		// redirected file.
		// Only the standard ones: any other descriptor may be one this
		// process opened itself (a store's WAL, for report --html
		// /dev/fd/9), and writing there would destroy it.
		switch fd {
		case 1:
			return &outFile{Writer: os.Stdout, flag: flag, direct: os.Stdout, std: true}, nil
		case 2:
			return &outFile{Writer: os.Stderr, flag: flag, direct: os.Stderr, std: true}, nil
		}
		return nil, fmt.Errorf("%s %s: of the process's descriptors only standard output (/dev/stdout, /dev/fd/1) and standard error (/dev/stderr, /dev/fd/2) can be named; redirect one of them, or name a file", flag, path)
	}
	target, fi, err := resolveOutput(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if openHere(target) {
		return nil, openHereError(flag, path)
	}
	if fi != nil && !fi.Mode().IsRegular() {
		// A device, FIFO or socket: write to it. Renaming over it would
		// replace it with a regular file (/dev/null as root). No O_TRUNC:
		// it means nothing to these and fails on some.
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		return &outFile{Writer: f, flag: flag, direct: f}, nil
	}
	// The pending file sits next to its target (not in $TMPDIR), so the
	// rename is atomic. On Linux it has no name until commit (O_TMPFILE),
	// so a run killed outright leaves nothing; elsewhere, or on a file
	// system without O_TMPFILE, it is a named file beside the target
	// (where the user looks), removed on every exit but a kill.
	if f, err := newAnonFile(target, fi); err == nil {
		return &outFile{Writer: f, flag: flag, target: target, pending: f}, nil
	}
	f, err := renameio.NewPendingFile(target, renameio.WithPermissions(0o644), renameio.WithExistingPermissions(),
		renameio.WithTempDir(filepath.Dir(target)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	p := namedPending{f}
	trackPending(p.PendingName())
	return &outFile{Writer: f, flag: flag, target: target, pending: p}, nil
}

// openHere reports whether target (a path with its links resolved) is a
// regular file this process has open on a descriptor other than standard
// input, output and error: a store's database, WAL or search index, an
// input table. It reads /proc/self/fd (Linux); where that is missing it
// reports false.
func openHere(target string) bool {
	fi, err := os.Stat(target)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err != nil || n <= 2 {
			continue
		}
		if o, err := os.Stat("/proc/self/fd/" + e.Name()); err == nil && os.SameFile(fi, o) {
			return true
		}
	}
	return false
}

func openHereError(flag, path string) error {
	return fmt.Errorf("%s %s: that is a file this command has open (a store's database, WAL or search index, or an input table), which the output would destroy; name another file", flag, path)
}

// pendingFile is an output written aside and put in place by
// CloseAtomicallyReplace, or dropped by Cleanup. PendingName is the path
// to remove if the process must exit at once ("" when it has none).
type pendingFile interface {
	io.Writer
	PendingName() string
	CloseAtomicallyReplace() error
	Cleanup() error
}

// namedPending is renameio's named pending file.
type namedPending struct{ *renameio.PendingFile }

func (n namedPending) PendingName() string { return n.Name() }

// pending holds the paths of the pending files not yet committed or cleaned
// up, for removePending.
var pending struct {
	sync.Mutex
	paths map[string]bool
}

func trackPending(path string) {
	if path == "" {
		return
	}
	pending.Lock()
	defer pending.Unlock()
	if pending.paths == nil {
		pending.paths = map[string]bool{}
	}
	pending.paths[path] = true
}

func untrackPending(path string) {
	pending.Lock()
	defer pending.Unlock()
	delete(pending.paths, path)
}

// removePending removes every pending file, for a process about to exit
// without running its deferred cleanups (interruptible's grace period).
func removePending() {
	pending.Lock()
	defer pending.Unlock()
	for p := range pending.paths {
		_ = os.Remove(p)
	}
}

// commit closes the file; a pending file atomically replaces its target.
func (o *outFile) commit() error {
	var err error
	if o.direct != nil {
		f := o.direct
		o.direct = nil
		if !o.std {
			err = f.Close()
		}
	} else {
		name := o.pending.PendingName()
		if openHere(o.target) {
			// Opened since the output was created (a store read after
			// its --html was named): replacing it now would destroy it.
			err = errors.Join(openHereError(o.flag, o.target), o.pending.Cleanup())
			untrackPending(name)
			return err
		}
		err = o.pending.CloseAtomicallyReplace()
		untrackPending(name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.flag, err)
	}
	return nil
}

// cleanup closes the file and removes a pending file that was not
// committed. It is a no-op after commit.
func (o *outFile) cleanup() error {
	if o.pending != nil {
		defer untrackPending(o.pending.PendingName())
		return o.pending.Cleanup()
	}
	if o.direct != nil {
		f := o.direct
		o.direct = nil
		if !o.std {
			return f.Close()
		}
	}
	return nil
}

// resolveOutput returns the file that writing path reaches: path with its
// symbolic links resolved (filepath.EvalSymlinks), and the file's info; nil
// info when no file is there yet. A dangling link resolves to its missing
// target, which the caller then creates, as a shell's > would.
func resolveOutput(path string) (string, fs.FileInfo, error) {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		fi, err := os.Stat(r)
		if err != nil {
			return "", nil, err
		}
		return r, fi, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	// path, or a link it names, does not exist: follow the links by hand.
	p := path
	for range maxLinks {
		dir, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			return "", nil, err // a missing directory
		}
		p = filepath.Join(dir, filepath.Base(p))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, nil // created since EvalSymlinks looked
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(dir, link)
		}
		p = link
	}
	return "", nil, fmt.Errorf("more than %d symbolic links", maxLinks)
}

// sameFile reports whether paths a and b name the same file: os.SameFile
// when both exist, else their absolute paths with links resolved.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	return canonical(a) == canonical(b)
}

// canonical is path made absolute with its links resolved as far as they
// exist (resolveOutput).
func canonical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, _, err := resolveOutput(abs); err == nil {
		return r
	}
	return abs
}

// outputs are a command's output files (createOutput), each behind a
// buffer, put in place together when the command succeeds.
type outputs struct {
	files []*outFile
	bufs  []*bufio.Writer // bufs[i] buffers files[i]
}

// create opens path as the output of flag ("--out") and returns its buffer;
// commit flushes it.
func (o *outputs) create(flag, path string) (*bufio.Writer, error) {
	f, err := createOutput(flag, path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	o.files, o.bufs = append(o.files, f), append(o.bufs, bw)
	return bw, nil
}

// commit flushes every buffer, then replaces every file in the order they
// were created. A failed flush replaces none of them.
func (o *outputs) commit() error { return o.commitOnly(nil) }

// commitOnly is commit for the outputs of the given flags ("--rejects");
// nil means all. The others stay pending (cleanup removes them).
func (o *outputs) commitOnly(flags []string) error {
	want := func(flag string) bool { return flags == nil || slices.Contains(flags, flag) }
	for i, b := range o.bufs {
		if !want(o.files[i].flag) {
			continue
		}
		if err := b.Flush(); err != nil {
			return fmt.Errorf("%s: %w", o.files[i].flag, err)
		}
	}
	for _, f := range o.files {
		if !want(f.flag) {
			continue
		}
		if err := f.commit(); err != nil {
			return err
		}
	}
	return nil
}

// cleanup removes the files not committed (a no-op for committed ones).
func (o *outputs) cleanup() {
	for _, f := range o.files {
		_ = f.cleanup()
	}
}

// writeOutput writes the output of flag to path through write, replacing
// the file only when write and the flush succeed (createOutput).
func writeOutput(flag, path string, write func(w *bufio.Writer) error) error {
	var o outputs
	defer o.cleanup()
	w, err := o.create(flag, path)
	if err != nil {
		return err
	}
	if err := write(w); err != nil {
		return err
	}
	return o.commit()
}
