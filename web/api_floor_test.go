package web_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkLoopbackFloor is BenchmarkLiveAPISingleTurn's client loop against
// a handler that judges and stores nothing: it reads the body and answers a
// record-sized (1.5 KB) JSON body. Its CPU per request and p99 are the
// floor of the live API's figures on the same machine — net/http on
// loopback with the 50 clients in the same process — which the judge and
// the store add to (bench/live.sh's header quotes both).
func BenchmarkLoopbackFloor(b *testing.B) {
	rec := append(bytes.Repeat([]byte("x"), 1500), '\n')
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(rec)
	}))
	b.Cleanup(ts.Close)
	row := bytes.Repeat([]byte("y"), 400) // a demo turn's JSON is 300-500 bytes
	rows := make([][]byte, b.N)
	for i := range rows {
		rows[i] = row
	}
	postConcurrently(b, ts.URL, rows)
}
