package web

import (
	"context"
	"sync"
	"time"
)

// searchIndexer writes, in the background, the search index of the runs
// that do not have one yet (store.IndexPending): a file store indexes a run
// after it commits, so an upload or a re-judge answers as soon as its run
// is stored, and the run's searches read rows (same answers, slower) until
// its index is written. One goroutine at a time; a kick while it works asks
// for one more pass after it (so a run committed during a pass is not
// missed). It starts on the first kick and ends with Server.Close.
type searchIndexer struct {
	s      *Server
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	running bool        // a pass goroutine is working
	again   bool        // kicked while running: one more pass
	retry   *time.Timer // a pass asked for after indexRetry; nil when none
	closed  bool
	wg      sync.WaitGroup
}

func newSearchIndexer(s *Server) *searchIndexer {
	ctx, cancel := context.WithCancel(context.Background())
	return &searchIndexer{s: s, ctx: ctx, cancel: cancel}
}

// IndexInBackground asks for the search index of every stored run that
// lacks one to be written in the background (store.IndexPending), one pass
// at a time, logging what it does on Options.Log. evident serve calls it at
// start (runs of a lost sidecar, an interrupted index, a run stored by
// evident judge --db that was stopped before its index); the screen calls
// it after each upload and re-judge. It returns at once; Close stops the
// pass (what it wrote stays: the next pass goes on from there).
func (s *Server) IndexInBackground() { s.indexer.kick() }

func (x *searchIndexer) kick() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return
	}
	if x.running {
		x.again = true
		return
	}
	x.running = true
	x.wg.Add(1)
	go x.loop()
}

func (x *searchIndexer) loop() {
	defer x.wg.Done()
	for {
		x.pass()
		x.mu.Lock()
		if !x.again || x.closed {
			x.running = false
			x.mu.Unlock()
			return
		}
		x.again = false
		x.mu.Unlock()
	}
}

// indexRetry is how long the indexer waits before it looks again at runs
// whose index another indexer was writing (store.ErrIndexBusy): that one
// finishes them, or, if it is stopped first (evident judge --db
// interrupted), this one does.
var indexRetry = 10 * time.Second

// pass indexes what is pending now, logging how many runs and how long;
// when another indexer holds some, it asks for a pass again after
// indexRetry.
func (x *searchIndexer) pass() {
	start := time.Now()
	log := x.s.opt.Log
	total := 0
	busy, err := x.s.db.IndexPending(x.ctx, func(_ int64, i, n int) {
		if i == 0 {
			total = n
			log.Printf("search index: indexing %d run(s) in the background (their searches read rows meanwhile, slower)", n)
		}
	})
	switch {
	case err != nil && x.ctx.Err() == nil:
		log.Printf("search index: %v (searches of the runs left read their rows)", err)
	case err != nil:
	case busy > 0:
		log.Printf("search index: %d run(s) indexed in %.1f s; %d being written by another evident (looked at again in %v)",
			total-busy, time.Since(start).Seconds(), busy, indexRetry)
		x.mu.Lock()
		if !x.closed && x.retry == nil {
			x.retry = time.AfterFunc(indexRetry, func() {
				x.mu.Lock()
				x.retry = nil
				x.mu.Unlock()
				x.kick()
			})
		}
		x.mu.Unlock()
	case total > 0:
		log.Printf("search index: %d run(s) indexed in %.1f s", total, time.Since(start).Seconds())
	}
}

// close stops the pass in progress and waits for it.
func (x *searchIndexer) close() {
	x.mu.Lock()
	x.closed = true
	if x.retry != nil {
		x.retry.Stop()
		x.retry = nil
	}
	x.mu.Unlock()
	x.cancel()
	x.wg.Wait()
}
