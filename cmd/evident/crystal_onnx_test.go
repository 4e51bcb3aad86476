//go:build onnx

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"evident/crystal/embedder"
	"evident/internal/testenv"
)

// onnxMissing skips, or fails under EVIDENT_REQUIRE_ALL=1, like the embed
// package's onnx tests.
func onnxMissing(t *testing.T, msg string) {
	t.Helper()
	testenv.Missing(t, "%s (set up with: eval \"$(bash .ci/onnx-setup.sh | tail -n 1)\")", msg)
}

func TestCrystalScoreONNX(t *testing.T) {
	if os.Getenv(embedder.LibraryEnv) == "" {
		onnxMissing(t, embedder.LibraryEnv+" is not set")
	}
	py := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import onnx, numpy").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		onnxMissing(t, "no python3 with the onnx module (Debian package python3-onnx)")
	}
	dir := filepath.Join(t.TempDir(), "tiny-bert")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testdata := filepath.Join("..", "..", "crystal", "embedder", "testdata")
	tok, err := os.ReadFile(filepath.Join(testdata, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tok, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, filepath.Join(testdata, "tiny_model.py"), filepath.Join(dir, "model.onnx")).CombinedOutput(); err != nil {
		t.Fatalf("tiny_model.py: %v\n%s", err, out)
	}
	t.Run("the demo is scored with the model's cosine and names it", func(t *testing.T) {
		out, errOut, code := crystalRun(t, "score", "--demo", "--embedder", "onnx", "--model-dir", dir, "--batch-size", "8")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "similarity tiny-bert (embedding cosine), match at similarity ≥ 0.35") || strings.Contains(out, "lexical") {
			t.Errorf("table:\n%s", out)
		}
		if !strings.Contains(errOut, "embedded 49 distinct reference steps with tiny-bert") {
			t.Errorf("stderr: %s", errOut)
		}
	})
}
