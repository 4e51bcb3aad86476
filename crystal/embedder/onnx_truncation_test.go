//go:build onnx

package embedder

import (
	"context"
	"strings"
	"testing"
)

// Issue 16 item 2: truncation to the model's token limit is reported, never
// silent.
func TestONNXTokenCountsReportTruncation(t *testing.T) {
	ctx := context.Background()
	dir, _ := modelDir(t, nil)
	short := open(t, ONNXOptions{ModelDir: dir, MaxLength: 8, Name: "tiny-8"})
	wide := open(t, ONNXOptions{ModelDir: dir, MaxLength: 512, Name: "tiny-512"})
	long := strings.Repeat("the red bar is taller than the blue bar ", 3)
	texts := []string{"red", long}

	full, err := wide.(TokenCounter).TokenCounts(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := short.(TokenCounter).TokenCounts(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a step within the limit keeps all its tokens", func(t *testing.T) {
		if got[0].Kept != got[0].Total || got[0].Total != full[0].Total {
			t.Errorf("short step %+v, untruncated %+v", got[0], full[0])
		}
	})
	t.Run("a long step keeps 8 tokens of as many as the 512-token model sees", func(t *testing.T) {
		if got[1].Kept != 8 || got[1].Total != full[1].Kept || full[1].Total <= 8 {
			t.Errorf("long step %+v, at 512 tokens %+v", got[1], full[1])
		}
	})
	t.Run("Cosine lists only the cut step", func(t *testing.T) {
		cuts, err := Cosine{Embedder: short}.Truncations(ctx, texts)
		if err != nil || len(cuts) != 1 || cuts[0].Index != 1 || cuts[0].Kept != 8 {
			t.Errorf("cuts = %+v, %v", cuts, err)
		}
	})
}
