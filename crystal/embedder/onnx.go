//go:build onnx

package embedder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"
	ort "github.com/yalue/onnxruntime_go"
)

const onnxBuilt = true

// ortRuntime is the process-wide ONNX Runtime environment (onnxruntime_go keeps
// one): loaded by the first open embedder, destroyed when the last one closes.
var ortRuntime struct {
	mu   sync.Mutex
	refs int
	lib  string
}

func acquireRuntime(lib string) error {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	if ortRuntime.refs > 0 {
		if lib != ortRuntime.lib {
			return fmt.Errorf("embed: ONNX Runtime already loaded from %s, cannot also load %s", ortRuntime.lib, lib)
		}
		ortRuntime.refs++
		return nil
	}
	if _, err := os.Stat(lib); err != nil {
		return fmt.Errorf("embed: ONNX Runtime library: %w", err)
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("embed: loading ONNX Runtime from %s: %w", lib, err)
	}
	ortRuntime.refs, ortRuntime.lib = 1, lib
	return nil
}

func releaseRuntime() error {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	if ortRuntime.refs == 0 {
		return nil
	}
	ortRuntime.refs--
	if ortRuntime.refs > 0 {
		return nil
	}
	ortRuntime.lib = ""
	return ort.DestroyEnvironment()
}

// onnxEmbedder is the ONNX Runtime Embedder returned by OpenONNX.
type onnxEmbedder struct {
	mu     sync.Mutex // one Embed at a time; guards closed
	closed bool

	name   string
	tk     *tokenizer.Tokenizer
	padID  int64
	sess   *ort.DynamicAdvancedSession
	inputs []ort.InputOutputInfo // session order
	pooled bool                  // output is [batch, hidden] already
	batch  int
	maxLen int // tokens per text, special tokens included
}

// encoded is one tokenized text.
type encoded struct{ ids, types []int64 }

func openONNX(opts ONNXOptions) (m Model, err error) {
	lib := opts.Library
	if lib == "" {
		lib = os.Getenv(LibraryEnv)
	}
	if lib == "" {
		return nil, fmt.Errorf("embed: no ONNX Runtime library: set %s or pass its path", LibraryEnv)
	}
	if opts.ModelDir == "" {
		return nil, errors.New("embed: no model directory")
	}
	modelPath := filepath.Join(opts.ModelDir, "model.onnx")
	if _, err := os.Stat(modelPath); err != nil {
		alt := filepath.Join(opts.ModelDir, "onnx", "model.onnx")
		if _, err2 := os.Stat(alt); err2 != nil {
			return nil, fmt.Errorf("embed: model directory %s has no model.onnx (nor onnx/model.onnx)", opts.ModelDir)
		}
		modelPath = alt
	}
	e := &onnxEmbedder{name: opts.Name, batch: opts.BatchSize}
	if e.name == "" {
		e.name = filepath.Base(filepath.Clean(opts.ModelDir))
	}
	if e.batch <= 0 {
		e.batch = DefaultBatchSize
	}
	if err := e.loadTokenizer(opts); err != nil {
		return nil, err
	}

	if err := acquireRuntime(lib); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = releaseRuntime()
		}
	}()
	ins, outs, err := ort.GetInputOutputInfo(modelPath)
	if err != nil {
		return nil, fmt.Errorf("embed: reading %s: %w", modelPath, err)
	}
	hasIDs := false
	for _, in := range ins {
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
		default:
			return nil, fmt.Errorf("embed: %s: unsupported model input %q (want input_ids, attention_mask, token_type_ids)", modelPath, in.Name)
		}
		if in.DataType != ort.TensorElementDataTypeInt64 && in.DataType != ort.TensorElementDataTypeInt32 {
			return nil, fmt.Errorf("embed: %s: input %q is %v, want int64 or int32", modelPath, in.Name, in.DataType)
		}
		hasIDs = hasIDs || in.Name == "input_ids"
	}
	if !hasIDs {
		return nil, fmt.Errorf("embed: %s: the model has no input_ids input", modelPath)
	}
	out, err := pickOutput(outs)
	if err != nil {
		return nil, fmt.Errorf("embed: %s: %w", modelPath, err)
	}
	e.inputs = ins
	e.pooled = len(out.Dimensions) == 2

	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("embed: session options: %w", err)
	}
	defer so.Destroy()
	if opts.Threads > 0 {
		if err := so.SetIntraOpNumThreads(opts.Threads); err != nil {
			return nil, fmt.Errorf("embed: threads: %w", err)
		}
	}
	names := make([]string, len(ins))
	for k, in := range ins {
		names[k] = in.Name
	}
	e.sess, err = ort.NewDynamicAdvancedSession(modelPath, names, []string{out.Name}, so)
	if err != nil {
		return nil, fmt.Errorf("embed: loading %s: %w", modelPath, err)
	}
	return e, nil
}

// pickOutput chooses the model output to pool: last_hidden_state, else
// token_embeddings, else sentence_embedding, else the first; it must be a
// float tensor of rank 3 (token vectors) or 2 (sentence vectors).
func pickOutput(outs []ort.InputOutputInfo) (ort.InputOutputInfo, error) {
	if len(outs) == 0 {
		return ort.InputOutputInfo{}, errors.New("the model has no output")
	}
	out := outs[0]
	for _, want := range []string{"sentence_embedding", "token_embeddings", "last_hidden_state"} {
		for _, o := range outs {
			if o.Name == want {
				out = o
			}
		}
	}
	if out.DataType != ort.TensorElementDataTypeFloat {
		return out, fmt.Errorf("output %q is %v, want float", out.Name, out.DataType)
	}
	if r := len(out.Dimensions); r != 2 && r != 3 {
		return out, fmt.Errorf("output %q has rank %d, want 3 [batch, sequence, hidden] or 2 [batch, hidden]", out.Name, r)
	}
	return out, nil
}

// loadTokenizer reads tokenizer.json, turns its padding off (Embed pads each
// batch itself) and sets truncation to the model's limit.
func (e *onnxEmbedder) loadTokenizer(opts ONNXOptions) (err error) {
	path := filepath.Join(opts.ModelDir, "tokenizer.json")
	defer func() {
		// The tokenizer's JSON loader type-asserts freely; a malformed file
		// must be an error, not a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("embed: reading %s: %v", path, r)
		}
	}()
	tk, err := pretrained.FromFile(path)
	if err != nil {
		return fmt.Errorf("embed: reading %s: %w", path, err)
	}
	maxLen := opts.MaxLength
	if maxLen <= 0 {
		maxLen = sentenceBertMaxLength(opts.ModelDir)
	}
	if maxLen <= 0 && tk.GetTruncation() != nil {
		maxLen = tk.GetTruncation().MaxLength
	}
	if maxLen <= 0 {
		maxLen = DefaultMaxLength
	}
	e.padID = 0
	if p := tk.GetPadding(); p != nil {
		e.padID = int64(p.PadId)
	} else {
		for _, tok := range []string{"[PAD]", "<pad>"} {
			if id, ok := tk.TokenToId(tok); ok {
				e.padID = int64(id)
				break
			}
		}
	}
	tk.WithPadding(nil)
	tk.WithTruncation(&tokenizer.TruncationParams{MaxLength: maxLen, Strategy: tokenizer.LongestFirst})
	e.tk = tk
	e.maxLen = maxLen
	return nil
}

// sentenceBertMaxLength reads max_seq_length from the directory's
// sentence_bert_config.json; 0 when absent or unreadable.
func sentenceBertMaxLength(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "sentence_bert_config.json"))
	if err != nil {
		return 0
	}
	var c struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if json.Unmarshal(b, &c) != nil {
		return 0
	}
	return c.MaxSeqLength
}

func (e *onnxEmbedder) Name() string { return e.name }

// Close releases the session and, with the last open embedder, ONNX Runtime.
func (e *onnxEmbedder) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.sess.Destroy()
	if rerr := releaseRuntime(); err == nil {
		err = rerr
	}
	return err
}

func (e *onnxEmbedder) encode(text string) (enc encoded, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embed: tokenizing %q: %v", text, r)
		}
	}()
	en, err := e.tk.EncodeSingle(text, true)
	if err != nil {
		return enc, fmt.Errorf("embed: tokenizing %q: %w", text, err)
	}
	ids, types := en.GetIds(), en.GetTypeIds()
	enc.ids = make([]int64, len(ids))
	enc.types = make([]int64, len(ids))
	for k, id := range ids {
		enc.ids[k] = int64(id)
		if k < len(types) {
			enc.types[k] = int64(types[k])
		}
	}
	return enc, nil
}

// TokenCounts tokenizes each text without truncation (Total) and with it
// (Kept, what Embed feeds the model), so truncation is never silent
// (embedder.TokenCounter; issue 16).
func (e *onnxEmbedder) TokenCounts(ctx context.Context, texts []string) ([]Cut, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("embed: TokenCounts after Close")
	}
	out := make([]Cut, len(texts))
	for k, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kept, err := e.encode(t)
		if err != nil {
			return nil, err
		}
		out[k] = Cut{Index: k, Kept: len(kept.ids), Total: len(kept.ids)}
		if len(kept.ids) < e.maxLen {
			continue // not at the limit: nothing was cut
		}
		e.tk.WithTruncation(nil)
		full, err := e.encode(t)
		e.tk.WithTruncation(&tokenizer.TruncationParams{MaxLength: e.maxLen, Strategy: tokenizer.LongestFirst})
		if err != nil {
			return nil, err
		}
		out[k].Total = len(full.ids)
	}
	return out, nil
}

// Embed tokenizes texts, runs them in batches sorted by token count, and
// returns one mean-pooled, L2-normalised vector per text in input order.
func (e *onnxEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("embed: Embed after Close")
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, ctx.Err()
	}
	encs := make([]encoded, len(texts))
	for k, t := range texts {
		var err error
		if encs[k], err = e.encode(t); err != nil {
			return nil, err
		}
	}
	order := make([]int, len(texts))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return len(encs[order[a]].ids) > len(encs[order[b]].ids) })
	for start := 0; start < len(order); start += e.batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := order[start:min(start+e.batch, len(order))]
		vecs, err := e.run(encs, idx)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			out[i] = vecs[k]
		}
	}
	return out, nil
}

// run feeds the texts encs[idx...] as one padded batch and pools the output.
func (e *onnxEmbedder) run(encs []encoded, idx []int) ([][]float32, error) {
	b := len(idx)
	seq := 1 // a batch of empty encodings still needs one (masked) column
	for _, i := range idx {
		seq = max(seq, len(encs[i].ids))
	}
	ids := make([]int64, b*seq)
	mask := make([]int64, b*seq)
	types := make([]int64, b*seq)
	for r, i := range idx {
		row := encs[i]
		for t := 0; t < seq; t++ {
			if t < len(row.ids) {
				ids[r*seq+t], mask[r*seq+t], types[r*seq+t] = row.ids[t], 1, row.types[t]
			} else {
				ids[r*seq+t] = e.padID
			}
		}
	}
	shape := ort.NewShape(int64(b), int64(seq))
	inputs := make([]ort.Value, len(e.inputs))
	defer func() {
		for _, v := range inputs {
			if v != nil {
				_ = v.Destroy()
			}
		}
	}()
	for k, in := range e.inputs {
		data := ids
		switch in.Name {
		case "attention_mask":
			data = mask
		case "token_type_ids":
			data = types
		}
		v, err := intTensor(in.DataType, shape, data)
		if err != nil {
			return nil, fmt.Errorf("embed: input %s: %w", in.Name, err)
		}
		inputs[k] = v
	}
	outputs := []ort.Value{nil}
	if err := e.sess.Run(inputs, outputs); err != nil {
		return nil, fmt.Errorf("embed: running %s: %w", e.name, err)
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("%w: output is not a float tensor", ErrEmbedding)
	}
	data, sh := t.GetData(), t.GetShape()
	vecs := make([][]float32, b)
	switch {
	case e.pooled && len(sh) == 2 && sh[0] == int64(b):
		dim := int(sh[1])
		for r := range vecs {
			vecs[r] = append([]float32(nil), data[r*dim:(r+1)*dim]...)
			l2Normalize(vecs[r])
		}
	case !e.pooled && len(sh) == 3 && sh[0] == int64(b) && sh[1] == int64(seq):
		dim := int(sh[2])
		for r := range vecs {
			vecs[r] = meanPool(data[r*seq*dim:(r+1)*seq*dim], mask[r*seq:(r+1)*seq], seq, dim)
			l2Normalize(vecs[r])
		}
	default:
		return nil, fmt.Errorf("%w: output shape %v for a batch of %d × %d tokens", ErrEmbedding, sh, b, seq)
	}
	return vecs, nil
}

// intTensor makes an int64 or int32 tensor of data.
func intTensor(dt ort.TensorElementDataType, shape ort.Shape, data []int64) (ort.Value, error) {
	if dt == ort.TensorElementDataTypeInt32 {
		d32 := make([]int32, len(data))
		for k, x := range data {
			d32[k] = int32(x)
		}
		return ort.NewTensor(shape, d32)
	}
	return ort.NewTensor(shape, data)
}
