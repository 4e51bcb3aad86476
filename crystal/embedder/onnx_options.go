package embedder

import (
	"errors"
	"io"
)

// LibraryEnv is the environment variable naming the ONNX Runtime shared
// library (libonnxruntime.so) when ONNXOptions.Library is empty.
const LibraryEnv = "ONNXRUNTIME_LIB"

// DefaultBatchSize is the number of texts the ONNX embedder runs through the
// model at once when ONNXOptions.BatchSize is 0 (sentence-transformers'
// encode default).
const DefaultBatchSize = 32

// DefaultMaxLength is the token limit (special tokens included) when neither
// ONNXOptions.MaxLength, the model directory's sentence_bert_config.json nor
// the tokenizer's own truncation gives one. Reasoning steps are single
// clauses, far shorter.
const DefaultMaxLength = 512

// ErrNoONNX is returned by OpenONNX in a binary built without the `onnx`
// build tag, which keeps the default build free of cgo.
var ErrNoONNX = errors.New("embed: built without ONNX Runtime support (rebuild with -tags onnx, cgo enabled)")

// ONNXOptions configure OpenONNX.
type ONNXOptions struct {
	// ModelDir holds the user's sentence-transformer export: model.onnx (or
	// onnx/model.onnx, the layout of Hugging Face repositories) and
	// tokenizer.json; optionally sentence_bert_config.json, whose
	// max_seq_length is used when MaxLength is 0.
	ModelDir string
	// Library is the path of libonnxruntime.so; "" means $ONNXRUNTIME_LIB.
	// ONNX Runtime is loaded once per process: every embedder open at the
	// same time must name the same library.
	Library string
	// Name identifies the model in reports; "" means the base name of
	// ModelDir (e.g. "all-distilroberta-v1").
	Name string
	// BatchSize: texts per model run; 0 means DefaultBatchSize.
	BatchSize int
	// MaxLength: tokens per text, special tokens included; longer texts are
	// truncated. 0 means sentence_bert_config.json's max_seq_length, else the
	// tokenizer's truncation, else DefaultMaxLength.
	MaxLength int
	// Threads: ONNX Runtime intra-op threads; 0 lets the runtime choose.
	Threads int
}

// Model is an Embedder backed by a loaded model; Close releases it. Close is
// idempotent; Embed after Close is an error.
type Model interface {
	Embedder
	io.Closer
}

// OpenONNX loads a sentence-transformer exported to ONNX and returns an
// Embedder that tokenizes with the directory's tokenizer.json (pure Go),
// runs the model with ONNX Runtime in batches of BatchSize texts (sorted by
// length to limit padding), mean-pools the token vectors over the attention
// mask and L2-normalises the result — sentence-transformers' encode for the
// all-* models (spec crystal.md "Match F1": mean pooling, L2-normalised).
//
// The model's inputs must be among input_ids, attention_mask and
// token_type_ids (int64 or int32); its output is last_hidden_state (or
// token_embeddings, or else the first output) of shape [batch, sequence,
// hidden], which is pooled, or a [batch, hidden] sentence_embedding, which is
// only normalised.
//
// In the default build OpenONNX returns ErrNoONNX; build with -tags onnx.
func OpenONNX(opts ONNXOptions) (Model, error) { return openONNX(opts) }

// ONNXSupported reports whether this binary was built with the onnx tag.
func ONNXSupported() bool { return onnxBuilt }
