package ingest

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// benchTurn is a realistic chat_turn row of about 300 bytes.
const benchTurn = `{"turn_id":"t-000123","session_id":"s-0042","character_id":"ria","model_id":"model-a","user_message":"어제 어디 갔었지?","reply_text":"하늘이랑 아카데미에 갔었잖아.","first_person":"나","named_entities":["하늘","아카데미"],"honorific_level":"반말","user_asked_recall":true,"created_at":"2024-05-01T10:00:00+09:00","prompt_id":"p-7"}`

func BenchmarkDecodeTurnJSONL(b *testing.B) {
	raw := Raw{Line: 1, JSON: []byte(benchTurn)}
	b.SetBytes(int64(len(benchTurn)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTurn(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRowsAndDecodeTurnJSONL includes cutting the lines with Rows.
func BenchmarkRowsAndDecodeTurnJSONL(b *testing.B) {
	const n = 1000
	data := []byte(strings.Repeat(benchTurn+"\n", n))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rows, err := NewRows(bytes.NewReader(data), JSONL)
		if err != nil {
			b.Fatal(err)
		}
		for {
			raw, err := rows.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := DecodeTurn(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDecodeTurnJSONLEncodingJSON is the same row through the
// encoding/json reference path, for comparison with the fast path.
func BenchmarkDecodeTurnJSONLEncodingJSON(b *testing.B) {
	raw := Raw{Line: 1, JSON: []byte(benchTurn)}
	b.SetBytes(int64(len(benchTurn)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeTurnJSONStd(raw); err != nil {
			b.Fatal(err)
		}
	}
}
