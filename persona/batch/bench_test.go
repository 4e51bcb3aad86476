package batch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"evident/persona/batch"
	"evident/persona/demo"
	"evident/persona/ingest"
)

const benchRows = 20000

// benchTurns returns a JSONL chat_turn table of n rows: the demo's turns
// repeated, each repetition with its own turn and session ids (suffix -rNNN),
// so sessions, recall and duplicates behave as in the demo. The rows are
// otherwise the demo's bytes.
func benchTurns(b *testing.B, n int) []byte {
	rc, err := demo.Turns().OpenBytes()
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	type row struct {
		line      []byte
		turn, ses []byte // `"T-…"` and `"S-…"`, quoted as in the line
	}
	var rows []row
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ids struct {
			TurnID    string `json:"turn_id"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ids); err != nil {
			b.Fatal(err)
		}
		rows = append(rows, row{line: bytes.Clone(sc.Bytes()),
			turn: []byte(`"` + ids.TurnID + `"`), ses: []byte(`"` + ids.SessionID + `"`)})
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for i := range n {
		rep, r := i/len(rows), rows[i%len(rows)]
		suffix := fmt.Sprintf(`-r%03d"`, rep)
		line := bytes.Replace(r.line, r.turn, append(r.turn[:len(r.turn)-1:len(r.turn)-1], suffix...), 1)
		line = bytes.Replace(line, r.ses, append(r.ses[:len(r.ses)-1:len(r.ses)-1], suffix...), 1)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkJudgeFile runs a batch.Run, both passes on all cores, over an
// in-memory 20,000-row JSONL table into io.Discard.
func BenchmarkJudgeFile(b *testing.B) {
	j, rej, err := batch.NewJudge(demo.Cards(), demo.Lexicon(), nil)
	if err != nil || len(rej) > 0 {
		b.Fatal(err, rej)
	}
	data := benchTurns(b, benchRows)
	run := batch.Run{Judge: j, Turns: ingest.NewTable("bench.jsonl", ingest.JSONL,
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tally, err := run.Do(context.Background(), batch.Outputs{Lines: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if tally.Judged+tally.Rejected != benchRows || tally.Rejected != 0 {
			b.Fatalf("tally %v: want %d judged, none rejected", tally, benchRows)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}
