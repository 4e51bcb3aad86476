package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"evident/runstore"
	"evident/store"
)

// A live run's page does not compute the run's summary (runstore.Summarize
// runs the checks over the dataset's whole turn table, and a live run's
// summary is never stored, so every view did it again: 3 s of CPU a view
// with a 300,000-turn dataset); a run without a stored summary that is not
// live still gets it on its first view. The live run's panels say it is
// not summarized; its rows show.
func TestALiveRunPageDoesNotSummarizeTheRun(t *testing.T) {
	f := newJobsFixture(t)
	calls := 0
	summarizeRun = func(ctx context.Context, db *store.DB, run store.RunInfo) (store.RunSummary, error) {
		calls++
		return runstore.Summarize(ctx, db, run)
	}
	t.Cleanup(func() { summarizeRun = runstore.Summarize })
	for i, reply := range []string{"나비랑 같이 가자.", "내일 보자.", "그래, 가자."} {
		body := fmt.Sprintf(`{"turn_id":"LS%d","session_id":"LS","character_id":"C1","model_id":"m","reply_text":%q,"named_entities":[]}`, i, reply)
		res, err := http.Post(f.base+"/api/v1/turns", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("live turn %d: %d", i, res.StatusCode)
		}
	}
	runID, ok, err := f.db.LiveRunID(context.Background(), f.run.DatasetID)
	if err != nil || !ok {
		t.Fatalf("no live run: %v", err)
	}
	for range 2 {
		page := f.get(fmt.Sprintf("/runs/%d", runID))
		if page.status != http.StatusOK || !strings.Contains(page.body, "LS2") {
			t.Fatalf("live run page: %d, its row LS2 shown: %v", page.status, strings.Contains(page.body, "LS2"))
		}
		if !strings.Contains(page.body, "라이브 실행은 턴이 올 때마다 자라므로 채워지지 않습니다") {
			t.Fatal("the live run's panels do not say it is not summarized")
		}
	}
	if calls != 0 {
		t.Fatalf("two views of the live run summarized it %d times, want 0", calls)
	}
}
