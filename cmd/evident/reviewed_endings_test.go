package main

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"evident/persona/evalrun"
	"evident/persona/review"
	"evident/store"
)

// An ending accepted in the endings queue is read by evident import and
// evident judge --db as the screen's re-judge reads it (issue 14 item 4).
// Hand-checked on the demo (README): accepting 니까 changes exactly
// T-010033 (「동네니까」 is not polite) and T-020203 (「확인하셨습니까」 is).
func TestAcceptedEndingsReachImportAndJudgeDB(t *testing.T) {
	ctx := context.Background()
	want := []string{"T-010033 설정대로 말함 → 말투 어긋남", "T-020203 말투 어긋남 → 설정대로 말함"}
	for _, tc := range []struct {
		name string
		args func(db string) []string
		run  func(t *testing.T, args []string)
	}{
		{"import --demo after accepting 니까 judges with 니까", func(db string) []string { return []string{"import", "--demo", "--db", db} },
			func(t *testing.T, args []string) {
				if _, _, err := webCLI(ctx, t, args...); err != nil {
					t.Fatal(err)
				}
			}},
		{"judge --demo --db after accepting 니까 judges with 니까", func(db string) []string { return []string{"judge", "--demo", "--db", db} },
			func(t *testing.T, args []string) {
				if _, _, err := evident(t, args...); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "e.db")
			tc.run(t, tc.args(dbPath))
			db := openDB(t, dbPath)
			if _, err := db.Decide(ctx, store.Decision{Queue: store.QueueEnding, Key: "니까", Value: review.EndingAdd, Who: "test"}); err != nil {
				t.Fatal(err)
			}
			// A skipped ending is not added.
			if _, err := db.Decide(ctx, store.Decision{Queue: store.QueueEnding, Key: "어", Value: review.EndingSkip, Who: "test"}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			tc.run(t, tc.args(dbPath))
			db = openDB(t, dbPath)
			runs, err := db.Runs(ctx)
			if err != nil || len(runs) != 2 {
				t.Fatalf("runs %v, %v", runs, err)
			}
			first, second := runs[0], runs[1]
			if first.ID > second.ID {
				first, second = second, first
			}
			if got := []string{"요", "죠", "니다", "십시오", "니까"}; !reflect.DeepEqual(second.Endings, got) || second.Profile != "seed" {
				t.Errorf("second run %s %v, want seed %v", second.Profile, second.Endings, got)
			}
			if got := changedTurns(t, db, first.ID, second.ID); !reflect.DeepEqual(got, want) {
				t.Errorf("changed %v, want %v", got, want)
			}
		})
	}
}

// changedTurns lists the turns whose verdict differs between two runs.
func changedTurns(t *testing.T, db *store.DB, a, b int64) []string {
	t.Helper()
	ctx := context.Background()
	ra, err := db.Records(ctx, a, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := db.Records(ctx, b, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range evalrun.CompareRuns(ra, rb) {
		out = append(out, fmt.Sprintf("%s %s → %s", c.TurnID, c.Before, c.After))
	}
	return out
}
