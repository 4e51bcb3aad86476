package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestTheScreenIndexesStoredRunsInTheBackground: on a file store a run is
// listed as soon as it commits, before its search index is written; its
// searches read rows meanwhile (same answers). IndexInBackground (serve
// calls it at start) writes the index of such runs, and a re-judge's new
// run is indexed the same way once the job has stored it. Close stops the
// indexer; a later kick starts nothing.
func TestTheScreenIndexesStoredRunsInTheBackground(t *testing.T) {
	ctx := context.Background()
	f := newJobsFixture(t)
	indexed := func(run int64) bool {
		t.Helper()
		ok, err := f.db.TextIndexed(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// 별이 is named by every even turn of jobTables: 600 of 1,200 rows.
	search := func(run string) string {
		t.Helper()
		r := f.get("/runs/" + run + "?q=%EB%B3%84%EC%9D%B4")
		if r.status != http.StatusOK {
			t.Fatalf("search on run %s: %d", run, r.status)
		}
		return r.body
	}
	if indexed(1) {
		t.Fatal("run 1 indexed at Commit; want its index written after")
	}
	before := search("1")
	if !strings.Contains(before, "600회차") || !strings.Contains(before, `J0000">`) || strings.Contains(before, `J0001">`) {
		t.Fatalf("search of run 1 before its index: want 600 turns found, J0000 listed and J0001 not")
	}
	f.s.IndexInBackground()
	f.s.indexer.wg.Wait()
	if !indexed(1) {
		t.Fatal("run 1 not indexed after IndexInBackground's pass")
	}
	if after := search("1"); after != before {
		t.Error("the search page of run 1 differs once it is indexed")
	}

	j := f.jobOf(f.addName("별이"))
	<-j.done
	if v := f.state(j.id); v.State != jobDone || v.NewRun != 2 {
		t.Fatalf("re-judge: %+v", v)
	}
	f.s.indexer.wg.Wait()
	if !indexed(2) {
		t.Fatal("the re-judge's run 2 is not indexed after the pass it asked for")
	}

	f.s.Close()
	f.s.IndexInBackground() // after Close: starts nothing
	f.s.indexer.mu.Lock()
	running := f.s.indexer.running
	f.s.indexer.mu.Unlock()
	if running {
		t.Fatal("a kick after Close started a pass")
	}
}
