package web_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkLiveAPIOpenLoop is BenchmarkLiveAPISingleTurn's 50 clients
// (EVIDENT_BENCH_CLIENTS) sending at a fixed pace instead of as fast as
// answers come back: turn i of b.N is due at start + i/R for an offered
// rate R turns/s, client c sends turns c, c+50, c+100, … each at its due
// time (or at once when the previous answer came later), and a turn's
// latency is measured from its due time, so time spent queued behind a slow
// answer counts (no coordinated omission). One sub-benchmark per rate,
// rate=1000, 2000 and 4000 (EVIDENT_BENCH_RATES, comma-separated), each on a
// fresh server; it reports p50, p99 and the largest latency in ms, the
// rate achieved (turns/s: b.N over the span from start to the last answer)
// and CPU per turn (cpu-µs/turn: the clients' too). It tells at which load a
// single-turn request's p99 stays under issue 17's 5 ms; it does not replace
// the closed-loop figure, where 50 clients keep the server saturated.
//
// Before the schedule starts, each client opens its connection with one
// GET of an unknown turn (404), so no turn pays for a TCP handshake.
func BenchmarkLiveAPIOpenLoop(b *testing.B) {
	for _, rate := range openLoopRates(b) {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			db, base := benchServer(b)
			rows := benchTurns(b, db, b.N)
			postOpenLoop(b, base, rows, rate)
		})
	}
}

// openLoopRates is EVIDENT_BENCH_RATES (comma-separated turns/s), or
// 1,000, 2,000 and 4,000.
func openLoopRates(b *testing.B) []int {
	s := os.Getenv("EVIDENT_BENCH_RATES")
	if s == "" {
		return []int{1000, 2000, 4000}
	}
	var rates []int
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 {
			b.Fatalf("EVIDENT_BENCH_RATES=%q: %q is not a positive rate in turns/s", s, f)
		}
		rates = append(rates, r)
	}
	return rates
}

// postOpenLoop POSTs rows to base's /api/v1/turns on the schedule of
// BenchmarkLiveAPIOpenLoop at rate turns/s and reports its metrics.
func postOpenLoop(b *testing.B, base string, rows [][]byte, rate int) {
	clients := 50
	if n, err := strconv.Atoi(os.Getenv("EVIDENT_BENCH_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var warm sync.WaitGroup
	for range clients { // concurrently, so that each client has a connection of its own
		warm.Add(1)
		go func() {
			defer warm.Done()
			resp, err := hc.Get(base + "/api/v1/turns/warm-up")
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				b.Errorf("warm-up: %d, want 404", resp.StatusCode)
			}
		}()
	}
	warm.Wait()
	if b.Failed() {
		return
	}
	lat := make([]time.Duration, len(rows))
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := processCPU()
	start := time.Now().Add(time.Millisecond) // every client waiting before the first is due
	due := func(i int) time.Time { return start.Add(time.Duration(i) * time.Second / time.Duration(rate)) }
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < len(rows); i += clients {
				at := due(i)
				if d := time.Until(at); d > 0 {
					time.Sleep(d)
				}
				resp, err := hc.Post(base+"/api/v1/turns", "application/json", bytes.NewReader(rows[i]))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(at)
				if resp.StatusCode != http.StatusOK {
					b.Errorf("row %d: %d", i, resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	span := time.Since(start)
	b.StopTimer()
	cpu := processCPU() - cpu0
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	q := func(p float64) float64 { return ms(lat[int(p*float64(len(lat)-1))]) }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	b.ReportMetric(float64(len(rows))/span.Seconds(), "turns/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(rows)), "cpu-µs/turn")
	b.ReportMetric(0, "ns/op") // the span is the schedule's, not the work's
}
