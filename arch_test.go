package evident_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"evident/internal/testenv"
)

// The import rules of the layout (README "Import graph"; issue 12): the
// domain (persona/..., crystal/..., arc/...) imports no adapter and no
// shell; the store adapter imports only domain packages and never the
// pipeline; the application layer (runstore) imports domain and store, not
// the shells; llm imports nothing of evident but the shared plumbing
// (evident/internal/...), which imports nothing of evident. Only non-test
// imports count.

// adapters and shells no domain package may import.
var forbiddenForDomain = []string{"evident/store", "evident/web", "evident/runstore", "evident/cmd/"}

// llmAllowed are the domain packages that may call models through llm (its
// Client interface and message types): the summarizer and the CRYSTAL runner.
var llmAllowed = []string{"evident/persona/summarize", "evident/crystal/run"}

// knownViolations are rules broken today, each with the issue that removes
// it. The test fails when one of them is fixed (take it off the list) as
// well as when a new one appears.
var knownViolations = map[string]string{}

func isDomain(p string) bool {
	for _, root := range []string{"evident/persona", "evident/crystal", "evident/arc"} {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

func hasPrefixAny(p string, prefixes []string) bool {
	for _, x := range prefixes {
		if p == x || (strings.HasSuffix(x, "/") && strings.HasPrefix(p, x)) || strings.HasPrefix(p, x+"/") {
			return true
		}
	}
	return false
}

// violation says which rule importing imp from pkg breaks, "" for none.
func violation(pkg, imp string) string {
	if !strings.HasPrefix(imp, "evident/") {
		return ""
	}
	if imp == "evident/internal/testenv" { // test plumbing: Imports lists non-test imports only
		return "non-test code imports the tests' plumbing (internal/testenv)"
	}
	if strings.HasPrefix(imp, "evident/internal/") { // shared plumbing (backoff, data URIs): a leaf anyone may use
		return ""
	}
	switch {
	case strings.HasPrefix(pkg, "evident/internal/"):
		return "shared plumbing imports another evident package"
	case isDomain(pkg) && hasPrefixAny(imp, forbiddenForDomain):
		return "a domain package imports an adapter or shell"
	case isDomain(pkg) && hasPrefixAny(imp, []string{"evident/llm"}) && !slices.Contains(llmAllowed, pkg) && imp != "evident/llm/llmtest":
		return "a domain package imports llm without being one of llmAllowed"
	case pkg == "evident/store" || strings.HasPrefix(pkg, "evident/store/"):
		if !isDomain(imp) && !strings.HasPrefix(imp, "evident/store") {
			return "the store imports a non-domain package"
		}
		if hasPrefixAny(imp, []string{"evident/persona/batch", "evident/persona/summarize", "evident/persona/evalrun", "evident/crystal/run"}) {
			return "the store imports the pipeline"
		}
	case pkg == "evident/runstore" && hasPrefixAny(imp, []string{"evident/web", "evident/cmd/", "evident/llm"}):
		return "the application layer imports a shell or llm"
	case strings.HasPrefix(pkg, "evident/llm") && !strings.HasPrefix(imp, "evident/llm"):
		return "llm imports another evident package"
	case pkg == "evident/web" && hasPrefixAny(imp, []string{"evident/cmd/"}):
		return "the screen imports the CLI"
	case pkg == "evident/kafka" && (hasPrefixAny(imp, []string{"evident/store", "evident/web", "evident/runstore", "evident/cmd/", "evident/llm"}) || hasPrefixAny(imp, []string{"evident/persona/batch", "evident/persona/summarize"})):
		return "the Kafka adapter imports another adapter, a shell or the batch pipeline"
	}
	return ""
}

// TestImportGraph checks every package's imports (go list -json ./...)
// against the layout's rules.
func TestImportGraph(t *testing.T) {
	goBin := testenv.Program(t, "go", "golang-go", "the import-graph check lists the packages with go list")
	cmd := exec.Command(goBin, "list", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	found := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		for _, imp := range p.Imports {
			if why := violation(p.ImportPath, imp); why != "" {
				found[p.ImportPath+" -> "+imp] = why
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list gave %d packages; expected the whole module", n)
	}
	var keys []string
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, known := knownViolations[k]; !known {
			t.Errorf("%s: %s", k, found[k])
		}
	}
	for k, why := range knownViolations {
		if _, still := found[k]; !still {
			t.Errorf("%s is no longer imported (%s): take it off knownViolations", k, why)
		}
	}
}

// TestImportRules checks the rules themselves on hand-picked edges.
func TestImportRules(t *testing.T) {
	tests := []struct {
		name, pkg, imp string
		broken         bool
	}{
		{"the pipeline may import the domain", "evident/persona/batch", "evident/persona/ingest", false},
		{"a domain package may not import the store", "evident/persona/batch", "evident/store", true},
		{"a domain package may not import the screen", "evident/crystal", "evident/web", true},
		{"a domain package may not import the application layer", "evident/persona", "evident/runstore", true},
		{"a domain package may not import the CLI", "evident/arc/client", "evident/cmd/evident", true},
		{"the summarizer may import llm", "evident/persona/summarize", "evident/llm", false},
		{"the rules may not import llm", "evident/persona", "evident/llm", true},
		{"the store may import the domain types", "evident/store", "evident/persona", false},
		{"the store may read ingest rows", "evident/store", "evident/persona/ingest", false},
		{"the store may not import the pipeline", "evident/store", "evident/persona/batch", true},
		{"the store may not import the screen", "evident/store", "evident/web", true},
		{"the application layer may import the store", "evident/runstore", "evident/store", false},
		{"the application layer may not import the screen", "evident/runstore", "evident/web", true},
		{"llm imports nothing of evident", "evident/llm", "evident/persona", true},
		{"the screen may import the application layer", "evident/web", "evident/runstore", false},
		{"the CLI may import anything", "evident/cmd/evident", "evident/web", false},
		{"standard library imports are free", "evident/persona", "encoding/json", false},
		{"shared plumbing may be imported by llm", "evident/llm", "evident/internal/backoff", false},
		{"shared plumbing imports nothing else of evident", "evident/internal/backoff", "evident/persona", true},
		{"non-test code may not import the tests' plumbing", "evident/cmd/evident", "evident/internal/testenv", true},
		{"the live judge may not import the store", "evident/persona/live", "evident/store", true},
		{"the Kafka adapter may import the live judge", "evident/kafka", "evident/persona/live", false},
		{"the Kafka adapter may not import the store", "evident/kafka", "evident/store", true},
		{"the Kafka adapter may not import the batch pipeline", "evident/kafka", "evident/persona/batch", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := violation(tc.pkg, tc.imp) != ""; got != tc.broken {
				t.Errorf("violation(%q, %q) = %q, want broken %v", tc.pkg, tc.imp, violation(tc.pkg, tc.imp), tc.broken)
			}
		})
	}
}
