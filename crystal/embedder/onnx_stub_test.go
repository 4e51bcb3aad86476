//go:build !onnx

package embedder

import (
	"errors"
	"testing"
)

func TestOpenONNXWithoutTheTag(t *testing.T) {
	t.Run("the default build reports that ONNX Runtime is not compiled in", func(t *testing.T) {
		if ONNXSupported() {
			t.Error("ONNXSupported() = true in a build without the onnx tag")
		}
		if _, err := OpenONNX(ONNXOptions{ModelDir: "x"}); !errors.Is(err, ErrNoONNX) {
			t.Errorf("err = %v, want ErrNoONNX", err)
		}
	})
}
