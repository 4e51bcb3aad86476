//go:build !onnx

package embedder

const onnxBuilt = false

func openONNX(ONNXOptions) (Model, error) { return nil, ErrNoONNX }
