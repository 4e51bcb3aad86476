package store

import (
	"bytes"
	"encoding/json"

	"evident/persona"
)

// recordEncoder writes the record JSON a verdict row keeps (its record
// column; one line, no newline): persona.AppendRecord's bytes, the batch
// output's; for a record it declines (an evidence value of a type the
// judge never writes, a string that is not UTF-8) encoding/json without
// HTML escaping, which replaces bytes that are not UTF-8 with U+FFFD. The
// run writer and the live queue use it. Not safe for concurrent use: one
// per goroutine; the zero value is ready.
//
// Why not encoding/json for all: a run's records are encoded in its
// writer's one goroutine, the pipeline's serial stage, where reflection
// cost about 1 µs of every turn's 70 (bench/prof -db, 300k turns).
type recordEncoder struct {
	rec  []byte
	enc  *json.Encoder // the fallback, into encB
	encB bytes.Buffer
}

// encode returns r's stored JSON, valid until the next call.
func (e *recordEncoder) encode(r *persona.Record) ([]byte, error) {
	if e.rec == nil {
		e.rec = make([]byte, 0, 4<<10) // a demo record is 1-2 KiB: no regrowth
	}
	var ok bool
	if e.rec, ok = persona.AppendRecord(e.rec[:0], r); ok {
		return e.rec[:len(e.rec)-1], nil
	}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.encB)
		e.enc.SetEscapeHTML(false)
	}
	e.encB.Reset()
	if err := e.enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.encB.Bytes(), []byte("\n")), nil
}
