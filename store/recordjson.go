package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	"evident/persona"
)

// recordEncoder writes the record JSON a verdict row keeps (its record
// column): persona.AppendRecord's bytes, the batch output's, without the
// '\n'; for a record it declines (an evidence value of a type the judge
// never writes, a string that is not UTF-8) encoding/json without HTML
// escaping, which replaces bytes that are not UTF-8 with U+FFFD. Not safe
// for concurrent use; the zero value is ready.
//
// Why not encoding/json for all: a run's records are encoded in its
// writer's one goroutine, the pipeline's serial stage, where reflection
// cost about 1 µs of every turn's 70 (bench/prof -db, 300k turns).
type recordEncoder struct {
	b   []byte
	buf bytes.Buffer
	enc *json.Encoder
}

// encode returns rec's JSON as a string (the column's value).
func (e *recordEncoder) encode(rec *persona.Record) (string, error) {
	if b, ok := persona.AppendRecord(e.b[:0], rec); ok {
		e.b = b
		return string(b[:len(b)-1]), nil
	}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	if err := e.enc.Encode(rec); err != nil {
		return "", fmt.Errorf("encode record: %w", err)
	}
	return string(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))), nil
}
