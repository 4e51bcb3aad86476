package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evident/crystal/embedder"
	"evident/crystal/report"
)

// crystalRun runs "evident crystal ARGS" in-process (crystalCommand alone);
// see runSub.
func crystalRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runSub(t, crystalCommand(), args...)
}

func goldenTable(t *testing.T, profile string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "crystal", "demo", "testdata", "table_"+profile+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCrystalScoreDemo(t *testing.T) {
	for _, profile := range []string{"seed", "paper"} {
		t.Run("the "+profile+" demo table is the golden one and names the lexical similarity", func(t *testing.T) {
			out, errOut, code := crystalRun(t, "score", "--demo", "--profile", profile)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if out != goldenTable(t, profile) {
				t.Errorf("table differs from crystal/demo/testdata/table_%s.golden:\n%s", profile, out)
			}
			if !strings.Contains(out, "similarity lexical") || !strings.Contains(out, "profile "+profile) {
				t.Errorf("the table does not name its similarity and profile:\n%s", out)
			}
		})
	}

	t.Run("the JSON table has one entry per model with the settings", func(t *testing.T) {
		out, errOut, code := crystalRun(t, "score", "--demo", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var s report.Summary
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		if s.Similarity != "lexical" || !s.Lexical || s.Profile != "seed" || s.Items != 15 || len(s.Models) != 3 {
			t.Errorf("summary %+v", s)
		}
	})

	t.Run("the items file holds one evidence line per model and item", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "items.jsonl")
		if _, errOut, code := crystalRun(t, "score", "--demo", "--items", path); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var lines []report.Evidence
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e report.Evidence
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, e)
		}
		if len(lines) != 45 {
			t.Fatalf("%d evidence lines, want 3 models × 15 items", len(lines))
		}
		first := lines[0]
		if first.Model != "lumen-7b" || first.ID != "crys-001" || first.Rule == "" || first.Similarity != "lexical" ||
			len(first.Pairs) == 0 || first.Pairs[0].PredText == "" || first.Pairs[0].RefText == "" {
			t.Errorf("first evidence line %+v", first)
		}
	})
}

func TestCrystalScoreFiles(t *testing.T) {
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.jsonl")
	preds := filepath.Join(dir, "model-x.jsonl")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(refs, `{"id": "q1", "question": "How many dots?", "answer": "3", "reference_steps": ["There are 3 dots."]}
{"id": "q2", "question": "Is it red?", "answer": "yes", "reference_steps": ["The square is red."]}
`)
	write(preds, `{"id": "q1", "reasoning_steps": ["There are 3 dots."], "answer": "3"}
{"id": "q2", "reply": "`+"```json\\n"+`{\"reasoning_steps\": [\"The square is blue.\"], \"answer\": \"no\"}`+"\\n```"+`"}
`)
	t.Run("files are read, a model without a name is named after its file", func(t *testing.T) {
		out, errOut, code := crystalRun(t, "score", "--refs", refs, "--preds", preds)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "model-x ") || !strings.Contains(out, "50.00 %") || !strings.Contains(out, "2 items") {
			t.Errorf("table:\n%s", out)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"--demo with a references file is refused", []string{"score", "--demo", "--refs", refs}, "cannot be combined"},
		{"no input at all is refused", []string{"score"}, "--refs"},
		{"an unknown profile is refused", []string{"score", "--demo", "--profile", "strict"}, "unknown profile"},
		{"an unknown embedder is refused", []string{"score", "--demo", "--embedder", "bert"}, "want lexical or onnx"},
		{"an unknown order is refused", []string{"score", "--demo", "--order", "tau"}, "want lis or kendall"},
		{"onnx without a model directory is refused", []string{"score", "--demo", "--embedder", "onnx"}, "--model-dir"},
		{"a missing references file names the file", []string{"score", "--refs", filepath.Join(dir, "nope.json"), "--preds", preds}, "nope.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := crystalRun(t, c.args...)
			if code != 2 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errOut, c.want)
			}
		})
	}
	if !embedder.ONNXSupported() {
		t.Run("onnx in a build without the tag says how to get it", func(t *testing.T) {
			_, errOut, code := crystalRun(t, "score", "--demo", "--embedder", "onnx", "--model-dir", dir)
			if code != 2 || !strings.Contains(errOut, "-tags onnx") {
				t.Errorf("exit %d, stderr %q", code, errOut)
			}
		})
	}
}
