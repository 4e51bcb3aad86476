//go:build !onnx

package embed

const onnxBuilt = false

func openONNX(ONNXOptions) (Model, error) { return nil, ErrNoONNX }
