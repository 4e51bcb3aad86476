package web

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// A request that arrives while the judge-key query of another is running
// does not take that query's answer (the query started before it came, and
// may predate a card update it must see): it waits for the next query, which
// starts after the first ends, and gets that one's answer; the idle slot is
// dropped afterwards (ids come from requests).
func TestAJudgeKeyCheckArrivingMidQueryWaitsForTheNextQuery(t *testing.T) {
	var f keyFlight
	var started atomic.Int32
	release := []chan struct{}{make(chan struct{}), make(chan struct{})}
	query := func(id int64) (int64, string, error) {
		n := started.Add(1)
		<-release[n-1]
		return id, "v" + string(rune('0'+n)), nil
	}
	type answer struct {
		id      int64
		version string
	}
	first, second := make(chan answer, 1), make(chan answer, 1)
	go func() { id, v, _ := f.do(7, query); first <- answer{id, v} }()
	for started.Load() < 1 { // the first query is running
		runtime.Gosched()
	}
	go func() { id, v, _ := f.do(7, query); second <- answer{id, v} }()
	for queued := false; !queued; { // the second request queued behind it
		f.mu.Lock()
		queued = f.m[7] != nil && f.m[7].queued != nil
		f.mu.Unlock()
		runtime.Gosched()
	}
	close(release[0])
	if a := <-first; a != (answer{7, "v1"}) {
		t.Fatalf("first request: %+v, want {7 v1}", a)
	}
	close(release[1])
	if a := <-second; a != (answer{7, "v2"}) {
		t.Fatalf("second request: %+v, want {7 v2} (a query started after it arrived)", a)
	}
	if n := started.Load(); n != 2 {
		t.Fatalf("%d queries, want 2", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) != 0 {
		t.Fatalf("%d slots kept after the queries ended, want 0", len(f.m))
	}
}
