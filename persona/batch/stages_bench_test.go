package batch

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"testing"

	"evident/persona"
	"evident/persona/demo"
	"evident/persona/ingest"
)

// The three stages of pass 2, benchmarked apart over the demo's turns
// (issue 18): decode (a JSON line to a persona.Turn), rules (Judge.Judge)
// and encode (a record to its JSON line). Each reports ns/turn and
// allocs/turn, so that a change to one stage shows in its own number.
//
//	go test ./persona/batch -run XXX -bench Stage -benchmem

// stageInput reads the demo's turn rows, decoded turns and their records.
func stageInput(b *testing.B) ([]ingest.Raw, []persona.Turn, []persona.Record, *persona.Judge) {
	b.Helper()
	j, rej, err := NewJudge(demo.Cards(), demo.Lexicon(), nil)
	if err != nil || len(rej) > 0 {
		b.Fatal(err, rej)
	}
	rows, err := demo.Turns().Open()
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	raws, err := rows.ReadRows(nil, 1<<20, 1<<30)
	if err != nil && err != io.EOF {
		b.Fatal(err)
	}
	var turns []persona.Turn
	var recs []persona.Record
	for i, raw := range raws {
		t, err := ingest.DecodeTurn(raw)
		if err != nil {
			b.Fatal(err)
		}
		rec, err := j.Judge(&t, i, nil)
		if err != nil {
			b.Fatal(err)
		}
		turns, recs = append(turns, t), append(recs, rec)
	}
	return raws, turns, recs, j
}

// perTurn runs each over n turns per b.Loop iteration and reports ns/turn
// and allocs/turn.
func perTurn(b *testing.B, n int, each func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		each()
	}
	runtime.ReadMemStats(&after)
	turns := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/turns, "ns/turn")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/turns, "allocs/turn")
}

// BenchmarkStageDecode: ingest.DecodeTurn (the one-pass scanner) against the
// encoding/json decode of the same rows into persona.Turn (the floor's).
func BenchmarkStageDecode(b *testing.B) {
	raws, _, _, _ := stageInput(b)
	b.Run("DecodeTurn", func(b *testing.B) {
		perTurn(b, len(raws), func() {
			for _, raw := range raws {
				if _, err := ingest.DecodeTurn(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("encoding-json", func(b *testing.B) {
		perTurn(b, len(raws), func() {
			for _, raw := range raws {
				var t persona.Turn
				if err := json.Unmarshal(raw.JSON, &t); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkStageRules: Judge.Judge on decoded turns (no history).
func BenchmarkStageRules(b *testing.B) {
	_, turns, _, j := stageInput(b)
	perTurn(b, len(turns), func() {
		for i := range turns {
			if _, err := j.Judge(&turns[i], i, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStageEncode: appendRecord into a reused buffer against
// json-iterator's encoder, the writer before issue 18.
func BenchmarkStageEncode(b *testing.B) {
	_, _, recs, _ := stageInput(b)
	b.Run("appendRecord", func(b *testing.B) {
		var out []byte
		perTurn(b, len(recs), func() {
			out = out[:0]
			for i := range recs {
				if err := encodeRecord(&out, &recs[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("json-iterator", func(b *testing.B) {
		var out bytes.Buffer
		enc := recordJSON.NewEncoder(&out)
		perTurn(b, len(recs), func() {
			out.Reset()
			for i := range recs {
				if err := enc.Encode(&recs[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
