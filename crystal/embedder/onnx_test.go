//go:build onnx

package embedder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/internal/testenv"
)

// The tests need two things from outside the module: ONNX Runtime's shared
// library ($ONNXRUNTIME_LIB) and Debian's python3-onnx, which writes a small
// random BERT-shaped model at test time (testdata/tiny_model.py). Both come
// from .ci/onnx-setup.sh:
//
//	eval "$(bash .ci/onnx-setup.sh | tail -n 1)"
//	go test -tags onnx ./crystal/embedder/
//
// Without them the tests skip, or fail when EVIDENT_REQUIRE_ALL=1.

func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	testenv.Missing(t, "%s (set up with: eval \"$(bash .ci/onnx-setup.sh | tail -n 1)\")", fmt.Sprintf(format, args...))
}

// python returns a Python 3 interpreter that can import onnx and numpy.
func python(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import onnx, numpy").Run() == nil {
			return p
		}
	}
	missing(t, "no python3 with the onnx module (Debian package python3-onnx)")
	return ""
}

func library(t testing.TB) string {
	t.Helper()
	lib := os.Getenv(LibraryEnv)
	if lib == "" {
		missing(t, "%s is not set", LibraryEnv)
	}
	if _, err := os.Stat(lib); err != nil {
		missing(t, "%s=%s: %v", LibraryEnv, lib, err)
	}
	return lib
}

var (
	modelsMu sync.Mutex
	models   = map[string]string{}
	tempDirs []string // removed by TestMain
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// modelDir writes (once per process and argument list) a model directory with
// tiny_model.py's model.onnx and testdata/tokenizer.json. With expect, the
// script also writes numpy's sentence vectors for those token-id lists,
// returned as want.
func modelDir(t testing.TB, expect [][]int64, args ...string) (dir string, want [][]float64) {
	t.Helper()
	py := python(t)
	key := strings.Join(args, " ")
	modelsMu.Lock()
	defer modelsMu.Unlock()
	dir, ok := models[key]
	if !ok || expect != nil {
		base, err := os.MkdirTemp("", "evident-onnx-")
		if err != nil {
			t.Fatal(err)
		}
		tempDirs = append(tempDirs, base)
		dir = filepath.Join(base, "tiny-bert")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		tok, err := os.ReadFile("testdata/tokenizer.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tok, 0o644); err != nil {
			t.Fatal(err)
		}
		cmdArgs := append([]string{"testdata/tiny_model.py", filepath.Join(dir, "model.onnx")}, args...)
		if expect != nil {
			ids, _ := json.Marshal(expect)
			if err := os.WriteFile(filepath.Join(base, "ids.json"), ids, 0o644); err != nil {
				t.Fatal(err)
			}
			cmdArgs = append(cmdArgs, "--expect", filepath.Join(base, "ids.json"), filepath.Join(base, "want.json"))
		}
		if out, err := exec.Command(py, cmdArgs...).CombinedOutput(); err != nil {
			t.Fatalf("tiny_model.py %v: %v\n%s", args, err, out)
		}
		if expect != nil {
			b, err := os.ReadFile(filepath.Join(base, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
		} else {
			models[key] = dir
		}
	}
	return dir, want
}

func open(t testing.TB, opts ONNXOptions) Model {
	t.Helper()
	if opts.Library == "" {
		opts.Library = library(t)
	}
	m, err := OpenONNX(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

var steps = []string{
	"The chart has four bars.",
	"The blue bar is the tallest.",
	"The blue bar reaches seven units.",
	"There are three red dots and four blue dots, so blue has more dots than red in the image.",
	"a",
	"",
	"The red bar is shorter than the green bar.",
	"The triangle is on the left.",
	"Each gridline marks one unit.",
	"The answer is B.",
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestONNXEmbedder(t *testing.T) {
	ctx := context.Background()
	dir, _ := modelDir(t, nil)
	m := open(t, ONNXOptions{ModelDir: dir})

	t.Run("the embedder is named after its model directory", func(t *testing.T) {
		if m.Name() != "tiny-bert" {
			t.Errorf("Name() = %q", m.Name())
		}
	})

	t.Run("each text gets one unit vector of the model's hidden size", func(t *testing.T) {
		vecs, err := m.Embed(ctx, steps)
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != len(steps) {
			t.Fatalf("%d vectors for %d texts", len(vecs), len(steps))
		}
		for k, v := range vecs {
			if len(v) != 16 {
				t.Errorf("vector %d has %d dimensions, want 16", k, len(v))
			}
			if n := norm(v); math.Abs(n-1) > 1e-5 {
				t.Errorf("vector %d (%q) has norm %v", k, steps[k], n)
			}
		}
	})

	t.Run("vectors match numpy's mean pooling and normalisation of the same model", func(t *testing.T) {
		e := m.(*onnxEmbedder)
		var ids [][]int64
		for _, s := range steps[:4] {
			enc, err := e.encode(s)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, enc.ids)
		}
		refDir, want := modelDir(t, ids)
		ref := open(t, ONNXOptions{ModelDir: refDir})
		got, err := ref.Embed(ctx, steps[:4])
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			for d := range want[k] {
				if math.Abs(float64(got[k][d])-want[k][d]) > 1e-4 {
					t.Fatalf("text %d dim %d: got %v, numpy %v", k, d, got[k][d], want[k][d])
				}
			}
		}
	})

	t.Run("batching gives the same vectors as one text at a time", func(t *testing.T) {
		one := open(t, ONNXOptions{ModelDir: dir, BatchSize: 1})
		three := open(t, ONNXOptions{ModelDir: dir, BatchSize: 3})
		all, err := three.Embed(ctx, steps)
		if err != nil {
			t.Fatal(err)
		}
		for k, s := range steps {
			single, err := one.Embed(ctx, []string{s})
			if err != nil {
				t.Fatal(err)
			}
			for d := range single[0] {
				if math.Abs(float64(single[0][d]-all[k][d])) > 1e-5 {
					t.Fatalf("text %d (%q) dim %d: batched %v, alone %v", k, s, d, all[k][d], single[0][d])
				}
			}
		}
	})

	t.Run("different texts get different vectors and equal texts equal ones", func(t *testing.T) {
		vecs, err := m.Embed(ctx, []string{steps[0], steps[1], steps[0]})
		if err != nil {
			t.Fatal(err)
		}
		if norm(sub(vecs[0], vecs[1])) < 1e-3 {
			t.Error("two different steps got the same vector")
		}
		if norm(sub(vecs[0], vecs[2])) > 1e-6 {
			t.Error("the same step got two vectors")
		}
	})

	t.Run("texts longer than MaxLength are truncated", func(t *testing.T) {
		short := open(t, ONNXOptions{ModelDir: dir, MaxLength: 6})
		vecs, err := short.Embed(ctx, []string{"the red bar is the tallest bar of the chart", "the red bar is"})
		if err != nil {
			t.Fatal(err)
		}
		// [CLS] the red bar is [SEP]: both texts keep the same six tokens.
		if norm(sub(vecs[0], vecs[1])) > 1e-5 {
			t.Error("the long text was not cut to its first four words")
		}
	})

	t.Run("an empty input gives no vectors", func(t *testing.T) {
		vecs, err := m.Embed(ctx, nil)
		if err != nil || len(vecs) != 0 {
			t.Errorf("Embed(nil) = %d vectors, %v", len(vecs), err)
		}
	})

	t.Run("a cancelled context stops Embed", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := m.Embed(c, steps); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func sub(a, b []float32) []float32 {
	out := make([]float32, len(a))
	for k := range a {
		out[k] = a[k] - b[k]
	}
	return out
}

func TestONNXModelInputs(t *testing.T) {
	ctx := context.Background()
	t.Run("a model that takes token_type_ids is given them", func(t *testing.T) {
		dir, _ := modelDir(t, nil, "--token-type-ids")
		m := open(t, ONNXOptions{ModelDir: dir, Name: "with-types"})
		vecs, err := m.Embed(ctx, steps[:3])
		if err != nil {
			t.Fatal(err)
		}
		if m.Name() != "with-types" || len(vecs) != 3 || math.Abs(norm(vecs[0])-1) > 1e-5 {
			t.Errorf("name %q, %d vectors, norm %v", m.Name(), len(vecs), norm(vecs[0]))
		}
	})
	t.Run("a model in an onnx subdirectory is found", func(t *testing.T) {
		dir, _ := modelDir(t, nil)
		hf := filepath.Join(t.TempDir(), "hf-layout")
		if err := os.MkdirAll(filepath.Join(hf, "onnx"), 0o755); err != nil {
			t.Fatal(err)
		}
		for from, to := range map[string]string{"model.onnx": "onnx/model.onnx", "tokenizer.json": "tokenizer.json"} {
			if err := os.Symlink(filepath.Join(dir, from), filepath.Join(hf, to)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := open(t, ONNXOptions{ModelDir: hf}).Embed(ctx, steps[:1]); err != nil {
			t.Fatal(err)
		}
	})
}

func TestONNXErrors(t *testing.T) {
	lib := library(t)
	dir, _ := modelDir(t, nil)
	t.Run("a directory without model.onnx is an error", func(t *testing.T) {
		if _, err := OpenONNX(ONNXOptions{ModelDir: t.TempDir(), Library: lib}); err == nil || !strings.Contains(err.Error(), "model.onnx") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a malformed tokenizer.json is an error, not a panic", func(t *testing.T) {
		bad := t.TempDir()
		if err := os.Symlink(filepath.Join(dir, "model.onnx"), filepath.Join(bad, "model.onnx")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, "tokenizer.json"), []byte(`{"model": {"type": "WordPiece", "vocab": 3}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenONNX(ONNXOptions{ModelDir: bad, Library: lib}); err == nil {
			t.Error("want an error")
		}
	})
	t.Run("no library path and no environment variable is an error", func(t *testing.T) {
		t.Setenv(LibraryEnv, "")
		if _, err := OpenONNX(ONNXOptions{ModelDir: dir}); err == nil || !strings.Contains(err.Error(), LibraryEnv) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a second library path while the runtime is loaded is an error", func(t *testing.T) {
		m := open(t, ONNXOptions{ModelDir: dir, Library: lib})
		_ = m
		if _, err := OpenONNX(ONNXOptions{ModelDir: dir, Library: lib + ".other"}); err == nil {
			t.Error("want an error")
		}
	})
	t.Run("Embed after Close is an error and Close twice is not", func(t *testing.T) {
		m, err := OpenONNX(ONNXOptions{ModelDir: dir, Library: lib})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := m.Embed(context.Background(), steps[:1]); err == nil {
			t.Error("want an error")
		}
	})
	t.Run("the runtime can be loaded again after every embedder closed", func(t *testing.T) {
		m, err := OpenONNX(ONNXOptions{ModelDir: dir, Library: lib})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if _, err := m.Embed(context.Background(), steps[:2]); err != nil {
			t.Fatal(err)
		}
	})
}

// countingEmbedder records how many texts reach the model.
type countingEmbedder struct {
	Embedder
	texts int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts += len(texts)
	return c.Embedder.Embed(ctx, texts)
}

func TestONNXCache(t *testing.T) {
	ctx := context.Background()
	dir, _ := modelDir(t, nil)
	m := open(t, ONNXOptions{ModelDir: dir})
	ce := &countingEmbedder{Embedder: m}
	cache := NewCache()
	cos := Cosine{Embedder: ce, Cache: cache}
	pred, ref := steps[:2], steps[2:6]

	first, err := cos.Similarities(ctx, pred, ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the first call embeds predicted and reference steps and stores the references", func(t *testing.T) {
		if ce.texts != 6 || cache.Len() != 4 {
			t.Errorf("embedded %d texts, cached %d", ce.texts, cache.Len())
		}
	})
	second, err := cos.Similarities(ctx, []string{steps[6], steps[7]}, ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the second call embeds only the predicted steps and hits the cache for every reference", func(t *testing.T) {
		if ce.texts != 8 {
			t.Errorf("embedded %d texts in all, want 8", ce.texts)
		}
		if s := cache.Stats(); s.Hits != 4 || s.Misses != 4 || s.Entries != 4 {
			t.Errorf("stats %+v, want 4 hits, 4 misses, 4 entries", s)
		}
	})
	again, err := cos.Similarities(ctx, pred, ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("cached vectors give the same similarities as fresh ones", func(t *testing.T) {
		for i := range first {
			for j := range first[i] {
				if math.Abs(first[i][j]-again[i][j]) > 1e-12 {
					t.Fatalf("m[%d][%d]: %v then %v", i, j, first[i][j], again[i][j])
				}
			}
		}
		_ = second
	})
	t.Run("a warmed cache holds each distinct reference once, keyed by model", func(t *testing.T) {
		c := NewCache()
		n, err := c.Warm(ctx, m, append(append([]string{}, ref...), ref...))
		if err != nil || n != 4 || c.Len() != 4 {
			t.Fatalf("Warm = %d, %v; %d entries", n, err, c.Len())
		}
		if _, ok := c.Get(m.Name(), ref[0]); !ok {
			t.Error("a warmed reference is missing")
		}
		if _, ok := c.Get("another-model", ref[0]); ok {
			t.Error("a vector of one model was served for another")
		}
	})
}

// BenchmarkONNXEmbed measures embedding throughput (sentences/s) on reasoning
// steps of typical length, batch 32. The tiny model is always run; with
// EVIDENT_BENCH_DISTILROBERTA=1 a random model of all-distilroberta-v1's
// shape (≈330 MB, written at first use) is run too.
func BenchmarkONNXEmbed(b *testing.B) {
	texts := make([]string, 256)
	for k := range texts {
		texts[k] = steps[k%len(steps)] + strings.Repeat(" the bar is tall", k%5)
	}
	shapes := []struct{ name, shape string }{{"tiny", "tiny"}}
	if os.Getenv("EVIDENT_BENCH_DISTILROBERTA") == "1" {
		shapes = append(shapes, struct{ name, shape string }{"distilroberta-shape", "distilroberta"})
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			dir, _ := modelDir(b, nil, "--shape", s.shape)
			m := open(b, ONNXOptions{ModelDir: dir, BatchSize: 32})
			ctx := context.Background()
			if _, err := m.Embed(ctx, texts[:32]); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			n := 0
			for i := 0; i < b.N; i++ {
				if _, err := m.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
				n += len(texts)
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "sentences/s")
		})
	}
}
