// Package embedder owns how CRYSTAL compares one reasoning step with another:
// the Embedder interface (texts → vectors), the Similarity interface (two step
// lists → a similarity matrix), the Cosine adapter from the first to the
// second, the model-free Lexical similarity, the Cache of reference-step
// vectors, and the ONNX Runtime embedder (spec crystal.md "CPR" and
// "Embeddings — what can be had").
//
// It must not touch scoring: thresholds are applied, pairs matched and F1
// computed by package evident/crystal.
//
// # ONNX Runtime
//
// OpenONNX loads a sentence-transformer the user exported to ONNX (a
// directory with model.onnx and tokenizer.json, e.g. all-distilroberta-v1)
// and embeds like sentence-transformers' encode: tokenize (pure Go,
// github.com/sugarme/tokenizer), run in batches (github.com/yalue/onnxruntime_go,
// cgo, loading libonnxruntime.so from ONNXOptions.Library or
// $ONNXRUNTIME_LIB), mean-pool over the attention mask, L2-normalise. It is
// compiled only with the build tag `onnx`; the default build stays free of
// cgo and OpenONNX returns ErrNoONNX there. Tests (tag onnx) run it on a
// small random BERT-shaped model written at test time by
// testdata/tiny_model.py (Debian python3-onnx) with the hand-written WordPiece
// testdata/tokenizer.json; .ci/onnx-setup.sh fetches the runtime library
// from the npm package sherpa-onnx-linux-x64.
//
// Decisions:
//   - Lexical is a Similarity, not an Embedder: its score (common token
//     multiset size ÷ √(len1·len2)) is not a cosine of fixed vectors, so it
//     cannot be precomputed per step the way embeddings can.
//   - `\w+` tokens follow Python's Unicode `re` semantics (letters, numbers and
//     underscore), lowercased with Go's Unicode lowering; combining marks end a
//     token, as in Python.
//   - A step without any word token scores 0 against everything, unless
//     Lexical.EmptyStepsMatch is set (the reference package's behaviour,
//     used by the `paper` profile): then two such steps score 1.0.
//   - Cosine computes norms itself and does not trust the embedder to
//     L2-normalise; a zero vector scores 0 against everything.
//   - Cache keys are (Embedder.Name, text); Cosine stores only reference
//     steps in it (they repeat across models and runs; predicted steps rarely
//     do, and keeping them would grow without bound over many models).
//   - The ONNX embedder sorts texts by token count before batching, so a
//     batch pads little; each text's vector does not depend on its batch
//     (the attention mask hides padding), which the tests check.
//   - Truncation: ONNXOptions.MaxLength, else sentence_bert_config.json's
//     max_seq_length, else tokenizer.json's truncation, else 512 tokens.
//     The tokenizer's own padding is turned off; batches are padded with its
//     [PAD]/<pad> id (or its padding id, or 0) under attention mask 0.
//   - Model inputs are recognised by name (input_ids, attention_mask,
//     token_type_ids, int64 or int32); any other input is refused rather than
//     fed zeros. The output used is last_hidden_state (else
//     token_embeddings, else sentence_embedding, which is only normalised,
//     else the first).
//   - Preparer (issue 16 item 4): Lexical and Cosine prepare a reference
//     list once for many predictions. Prepared results equal the plain
//     ones bit for bit: Lexical numbers the reference tokens (a predicted
//     token outside them only counts towards the step's length); Cosine
//     widens the reference vectors to float64 once (exact) and sums the
//     same float64 products in the same order — four partial sums per dot,
//     products never fused with the sums — four references at a time, in
//     SSE2 assembly on amd64 (dot_amd64.s; the tag purego, or another
//     architecture, uses the same loop in Go). Pre-normalised float32
//     vectors would be faster still but change the last digits.
//   - ONNX Runtime is one per process: the first embedder loads it, the last
//     Close unloads it; a second library path meanwhile is an error.
package embedder
