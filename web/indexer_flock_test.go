//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package web

import (
	"context"
	"log"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lineLog is a log writer that hands each line to lines.
type lineLog struct{ lines chan string }

func (l lineLog) Write(p []byte) (int, error) {
	l.lines <- strings.TrimSpace(string(p))
	return len(p), nil
}

// TestARunAnotherIndexerHoldsIsLookedAtAgain: when another process holds a
// run's index lock (evident judge --db still indexing it), the pass says
// so instead of calling it indexed, and asks again later; once the lock is
// free (that process ended, or was interrupted) a later pass indexes it.
func TestARunAnotherIndexerHoldsIsLookedAtAgain(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	old := indexRetry
	indexRetry = time.Millisecond
	defer func() { indexRetry = old }()
	lines := make(chan string, 64)
	f.s.opt.Log = log.New(lineLog{lines}, "", 0)
	lock, err := os.OpenFile(f.db.Path()+"-index-1.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	f.s.IndexInBackground()
	want := "search index: 0 run(s) indexed in "
	for l := range lines {
		if strings.HasPrefix(l, want) {
			if !strings.Contains(l, "; 1 being written by another evident") {
				t.Fatalf("log %q, want it to say the run is another's", l)
			}
			break
		}
	}
	if ok, _ := f.db.TextIndexed(ctx, 1); ok {
		t.Fatal("run 1 indexed while another held its lock")
	}
	lock.Close() // releases the flock, as a process that ends does
	for l := range lines {
		if strings.HasPrefix(l, "search index: 1 run(s) indexed in ") {
			break
		}
	}
	f.s.Close()
	if ok, err := f.db.TextIndexed(ctx, 1); !ok || err != nil {
		t.Fatalf("run 1 after the lock was freed: TextIndexed = %v, %v", ok, err)
	}
}
