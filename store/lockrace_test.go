package store

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestALockIsHeldByOneAtATime: writers of two handles of one store taking
// and releasing the same lock in a loop never hold it both at once (a
// release removes the file before unlocking it: a lock taken on a file
// opened just before that remove is not the path's lock, and tryLock then
// tries again). Found by a fresh-user test: 2 in 57,596 acquisitions
// overlapped before.
func TestALockIsHeldByOneAtATime(t *testing.T) {
	db, path := openFile(t)
	other, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var holders, overlaps, taken atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		d := db
		if g%2 == 1 {
			d = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3000 {
				lk, ok, err := d.tryLock("index", 7, true)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					continue
				}
				if holders.Add(1) > 1 {
					overlaps.Add(1)
				}
				taken.Add(1)
				for i := 0; i < 200; i++ { // hold it a moment
					_ = i
				}
				holders.Add(-1)
				lk.release()
			}
		}()
	}
	wg.Wait()
	if overlaps.Load() != 0 || taken.Load() == 0 {
		t.Fatalf("%d of %d acquisitions overlapped another holder; want none", overlaps.Load(), taken.Load())
	}
}
