package web_test

import (
	"bytes"
	"fmt"
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

// BenchmarkLoopbackFloorOpenLoop is BenchmarkLiveAPIOpenLoop's schedule
// against BenchmarkLoopbackFloor's handler (GET answers 404, as the live
// API does for an unknown turn): the p99 that net/http on loopback, with
// the clients in the same process, gets at each offered rate on the same
// machine.
func BenchmarkLoopbackFloorOpenLoop(b *testing.B) {
	rec := append(bytes.Repeat([]byte("x"), 1500), '\n')
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(rec)
	}))
	b.Cleanup(ts.Close)
	row := bytes.Repeat([]byte("y"), 400)
	for _, rate := range openLoopRates(b) {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			rows := make([][]byte, b.N)
			for i := range rows {
				rows[i] = row
			}
			postOpenLoop(b, ts.URL, rows, rate)
		})
	}
}
