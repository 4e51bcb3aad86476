// Package testenv is what the module's tests share about the machine they
// run on: whether an optional installed program (bubblewrap, Chromium, a
// python3 with numpy, git …) is here, and what a test does when it is not.
//
// The rule (README "Two commands"): a test that needs an installed program
// skips with a message naming the Debian package that provides it, so that
// `go test ./...` is green on a fresh machine; with EVIDENT_REQUIRE_ALL=1
// (set by .ci/run, which installs every such program) the skip is a failure
// instead, so a missing install step cannot hide behind a green run.
//
// It is test plumbing: it imports only the standard library (testing among
// it) and nothing of evident, and no non-test code may import it.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// RequireAllEnv is the environment variable that turns every Missing skip
// into a failure when it is "1".
const RequireAllEnv = "EVIDENT_REQUIRE_ALL"

// RequireAll reports whether RequireAllEnv is "1".
func RequireAll() bool { return os.Getenv(RequireAllEnv) == "1" }

// Missing ends t because something it needs is not installed: a skip with
// the message, or, under RequireAll, a failure with the message and a note
// that RequireAllEnv turned the skip into one. The message should name the
// Debian package ("… (Debian: apt-get install -y bubblewrap)").
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if RequireAll() {
		t.Fatal(msg + " (" + RequireAllEnv + "=1 turns this skip into a failure)")
	}
	t.Skip(msg)
}

// Program returns the path of the program name found on PATH, or ends t
// with Missing: "no NAME on PATH: WHY (Debian: apt-get install -y DEB)".
func Program(t testing.TB, name, deb, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "no %s on PATH: %s (Debian: apt-get install -y %s)", name, why, deb)
	}
	return p
}

// pythonCandidates are where Python finds an interpreter, in order: the
// first python3 on PATH (a virtual environment's), then Debian's.
var pythonCandidates = []string{"python3", "/usr/bin/python3"}

var pythonFound sync.Map // modules (space-separated) → path or ""

// FindPython returns the first python3 of PATH and /usr/bin/python3 that
// imports every module of mods (an empty mods asks for the interpreter
// only), or "" when none does. Answers are remembered per process.
func FindPython(mods ...string) string {
	key := strings.Join(mods, " ")
	if p, ok := pythonFound.Load(key); ok {
		return p.(string)
	}
	src := "pass"
	if len(mods) > 0 {
		src = "import " + strings.Join(mods, ", ")
	}
	found := ""
	for _, p := range pythonCandidates {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", src).Run() == nil {
			found = path
			break
		}
	}
	pythonFound.Store(key, found)
	return found
}

// Python returns FindPython(mods...) or ends t with Missing, naming the
// Debian packages debs ("python3 python3-numpy") and why the test needs
// them.
func Python(t testing.TB, debs, why string, mods ...string) string {
	t.Helper()
	p := FindPython(mods...)
	if p == "" {
		what := "no python3"
		if len(mods) > 0 {
			what = "no python3 that imports " + strings.Join(mods, ", ")
		}
		Missing(t, "%s: %s (Debian: apt-get install -y %s)", what, why, debs)
	}
	return p
}
