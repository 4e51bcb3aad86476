package web

import (
	"net/http"
	"strings"
	"testing"
)

// The live API holds at most APIBodyBudget × the body limit of request
// bodies at once: a request that does not fit is answered 503 with
// Retry-After before its body is read, and fits again once the bodies
// before it have been answered.
func TestTheLiveAPIsBodiesInFlightAreBounded(t *testing.T) {
	f := newJobsFixture(t)
	limit := f.s.opt.MaxUpload
	post := func() resp {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, f.base+"/api/v1/turns", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		return f.do(req)
	}
	// Two bodies of unknown length being read hold the whole budget.
	var held []func()
	for range APIBodyBudget {
		release, ok := f.s.api.bodies.take(limit, APIBodyBudget*limit)
		if !ok {
			t.Fatal("the budget refused a body it has room for")
		}
		held = append(held, release)
	}
	r := post()
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(r.body, "retry after 1 s") {
		t.Fatalf("a request over the budget: %d Retry-After %q %s; want 503 with Retry-After 1", r.status, r.header.Get("Retry-After"), r.body)
	}
	held[0]()
	if r := post(); r.status != http.StatusBadRequest || !strings.Contains(r.body, "not a JSON") {
		t.Fatalf("a request once a body was answered: %d %s; want its own answer (400, not JSON)", r.status, r.body)
	}
	held[1]()
	if f.s.api.bodies.held != 0 {
		t.Fatalf("%d bytes still held after every request was answered", f.s.api.bodies.held)
	}
}
