package web

import (
	"io"
	"net/http"
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
		if !f.s.api.bodies.take(max, max) { // other requests' bodies fill the budget
			t.Fatal("the budget refused what it has room for")
		}
		r := post()
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(r.body, "retry after 1 s") {
			t.Fatalf("a request over the budget: %d Retry-After %q %s; want 503 with Retry-After 1", r.status, r.header.Get("Retry-After"), r.body)
		}
		f.s.api.bodies.give(max)
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
}
