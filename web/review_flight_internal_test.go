package web

import (
	"errors"
	"runtime"
	"sync"
	"testing"
)

func TestFlightRunsOneCallPerKey(t *testing.T) {
	f := flight[int]{calls: map[string]*flightCall[int]{}}
	release := make(chan struct{})
	started := make(chan struct{})
	calls := 0
	var wg sync.WaitGroup
	results := make([]int, 5)
	wg.Add(1)
	go func() {
		defer wg.Done()
		results[0], _ = f.do("run 1", func() (int, error) {
			calls++
			close(started)
			<-release
			return 42, nil
		})
	}()
	<-started // the first call is in flight: the others join it
	for i := 1; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = f.do("run 1", func() (int, error) { calls++; return -1, nil })
		}()
	}
	for { // wait until the four have joined (state, not time)
		f.mu.Lock()
		n := f.calls["run 1"].joined
		f.mu.Unlock()
		if n == 4 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if calls != 1 {
		t.Errorf("%d calls", calls)
	}
	for i, r := range results {
		if r != 42 {
			t.Errorf("caller %d got %d", i, r)
		}
	}
	t.Run("a failed call is not remembered: the next caller calls again", func(t *testing.T) {
		boom := errors.New("boom")
		if _, err := f.do("run 2", func() (int, error) { return 0, boom }); err != boom {
			t.Fatal(err)
		}
		if v, err := f.do("run 2", func() (int, error) { return 7, nil }); v != 7 || err != nil {
			t.Errorf("%d, %v", v, err)
		}
	})
}
