package web

import (
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// heldNow is the bytes the live API's bodies hold now.
func (b *bodyBudget) heldNow() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// The live API holds at most LiveBodyBudget × the body limit of request
// bodies at once, taken as each body's buffer grows: a request that does
// not fit is answered 503 with Retry-After, and a body that sends nothing
// holds only its first buffer.
func TestTheLiveAPIsBodiesInFlightAreBounded(t *testing.T) {
	f := newJobsFixture(t)
	max := LiveBodyBudget * f.s.opt.MaxLiveBody
	post := func() resp {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, f.base+"/api/v1/turns", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		return f.do(req)
	}
	// waitHeld waits until the budget holds what ok accepts (the handler
	// runs on the server's goroutines).
	waitHeld := func(ok func(int64) bool) int64 {
		for {
			if n := f.s.api.bodies.heldNow(); ok(n) {
				return n
			}
			time.Sleep(time.Millisecond)
		}
	}

	t.Run("a request that does not fit is 503 with Retry-After, and fits once bodies are given back", func(t *testing.T) {
		if !f.s.api.bodies.take(elsewhere, max, max, max) { // other requests' bodies fill the budget
			t.Fatal("the budget refused what it has room for")
		}
		r := post()
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(r.body, "retry after 1 s") {
			t.Fatalf("a request over the budget: %d Retry-After %q %s; want 503 with Retry-After 1", r.status, r.header.Get("Retry-After"), r.body)
		}
		f.s.api.bodies.give(elsewhere, max)
		if r := post(); r.status != http.StatusBadRequest || !strings.Contains(r.body, "not a JSON") {
			t.Fatalf("a request once the bodies were given back: %d %s; want its own answer (400, not JSON)", r.status, r.body)
		}
		waitHeld(func(n int64) bool { return n == 0 })
	})

	t.Run("a body of unknown length that sends nothing holds 64 KiB, and others are answered", func(t *testing.T) {
		pr, pw := io.Pipe()
		req, err := http.NewRequest(http.MethodPost, f.base+"/api/v1/turns", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		done := make(chan int, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		if n := waitHeld(func(n int64) bool { return n > 0 }); n > 64<<10 {
			t.Fatalf("an idle body holds %d bytes of the budget, want at most 64 KiB", n)
		}
		if r := post(); r.status != http.StatusBadRequest {
			t.Fatalf("another request while a body idles: %d %s; want its own answer (400)", r.status, r.body)
		}
		pw.Close() // the idle body ends, empty
		if st := <-done; st != http.StatusBadRequest {
			t.Fatalf("the idle request, once ended: %d, want 400", st)
		}
		waitHeld(func(n int64) bool { return n == 0 })
	})

	t.Run("one address holds at most one body limit, and another address is answered meanwhile", func(t *testing.T) {
		here := netip.MustParseAddr("127.0.0.1")
		if !f.s.api.bodies.take(here, f.s.opt.MaxLiveBody, max, f.s.opt.MaxLiveBody) { // its other requests' bodies
			t.Fatal("the budget refused what it has room for")
		}
		if r := post(); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
			t.Fatalf("a request past its address's share: %d Retry-After %q %s; want 503 with Retry-After 1", r.status, r.header.Get("Retry-After"), r.body)
		}
		other := dialFrom(t, "127.0.0.2")
		req, err := http.NewRequest(http.MethodPost, f.base+"/api/v1/turns", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := other.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "not a JSON") {
			t.Fatalf("another address's request: %d %s; want its own answer (400, not JSON)", resp.StatusCode, b)
		}
		f.s.api.bodies.give(here, f.s.opt.MaxLiveBody)
		waitHeld(func(n int64) bool { return n == 0 })
	})

	t.Run("a trickling body is cut with 408 at the end of its period and gives its bytes back", func(t *testing.T) {
		timers := newFakeTimers()
		f.s.uploadGate().after = timers.after
		defer func() { f.s.uploadGate().after = nil }()
		pr, pw := io.Pipe()
		defer pw.Close()
		req, err := http.NewRequest(http.MethodPost, f.base+"/api/v1/turns", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		done := make(chan resp, 1)
		go func() { done <- f.do(req) }()
		pw.Write([]byte("{"))
		endPeriod := <-timers.armed // its pace has started
		waitHeld(func(n int64) bool { return n > 0 })
		endPeriod() // under 320 KiB in the period
		r := <-done
		if r.status != http.StatusRequestTimeout || !strings.Contains(r.body, "body too slow: under 320 KiB in 10s (32 KiB/s averaged") {
			t.Fatalf("a trickling body: %d %s; want 408 naming the pace", r.status, r.body)
		}
		waitHeld(func(n int64) bool { return n == 0 })
	})
}

// elsewhere is a client address no test request comes from.
var elsewhere = netip.MustParseAddr("192.0.2.1")
