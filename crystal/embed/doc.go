// Package embed owns how CRYSTAL compares one reasoning step with another:
// the Embedder interface (texts → vectors), the Similarity interface (two step
// lists → a similarity matrix), the Cosine adapter from the first to the
// second, and the model-free Lexical similarity (spec crystal.md "CPR" and
// "Embeddings — what can be had").
//
// It must not touch scoring: thresholds are applied, pairs matched and F1
// computed by package evident/crystal. No model runtime lives here yet: the
// ONNX Runtime embedder the spec describes (a user-supplied model.onnx +
// tokenizer.json) is a later slice and will implement Embedder.
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
package embed
