package store

import (
	"context"
	"errors"
	"testing"
)

// TestALiveRunHasNoStoredSummary: a live run grows after it is listed, so
// PutRunSummary refuses it (ErrInvalid) and a summary row stored for it
// anyway (by an older version) is not returned: the screen counts it.
func TestALiveRunHasNoStoredSummary(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	ds := liveDataset(t, db)
	_, runID := judgeLive(t, db, ds, liveJudge(t), liveTurn("T1", "도윤", false, "안녕", "도윤이가 왔어."))
	sum, err := db.CountRun(ctx, runID, false)
	if err != nil || sum.Records != 1 {
		t.Fatalf("CountRun = %+v, %v; want 1 record", sum, err)
	}
	if err := db.PutRunSummary(ctx, sum, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("PutRunSummary of a live run: %v, want ErrInvalid", err)
	}
	if _, err := db.sql.Exec("INSERT INTO run_summary (run_id, computed_at, summary) VALUES (?, '2026-01-01T00:00:00.000000000Z', '{}')", runID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StoredSummary(ctx, runID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("StoredSummary of a live run: %v, want ErrNotFound", err)
	}
	if err := db.IndexRunText(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.TextIndexed(ctx, runID); ok || err != nil {
		t.Fatalf("a live run after IndexRunText: TextIndexed = %v, %v; want false (its searches read its rows)", ok, err)
	}
}
