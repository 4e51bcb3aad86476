package store

import (
	"context"
	"database/sql"
	"testing"
)

// TestBusyRetry: a decision that meets SQLITE_BUSY (another process held
// the write lock past the busy timeout) is tried again and saved; one that
// stays busy returns the busy error after busyRetries retries.
func TestBusyRetry(t *testing.T) {
	ctx := context.Background()
	_, path := openFile(t)
	// A handle whose busy timeout is 1 ms, so the lock held below makes
	// its writes fail with SQLITE_BUSY at once.
	raw, err := sql.Open("sqlite", path+"?_txlock=immediate&_busy_timeout=1&_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	impatient := newDB(raw, path)
	defer impatient.Close()
	holder, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	hold := func() *sql.Conn {
		c, err := holder.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("a decision that found the database busy is retried once the lock is free and saved", func(t *testing.T) {
		c := hold()
		var retries []int
		impatient.onBusyRetry = func(n int) {
			retries = append(retries, n)
			if n == 0 {
				c.ExecContext(ctx, "ROLLBACK") // the other writer finishes
				c.Close()
			}
		}
		id, err := impatient.Decide(ctx, Decision{Queue: QueueEnding, Key: "쇼", Value: "add", Who: "editor"})
		if err != nil {
			t.Fatalf("Decide: %v", err)
		}
		if len(retries) != 1 {
			t.Fatalf("retries %v, want one", retries)
		}
		if d, err := holder.Decision(ctx, id); err != nil || d.Key != "쇼" {
			t.Fatalf("saved decision %+v, %v", d, err)
		}
	})

	t.Run("a lock that is never freed gives the busy error after the last retry", func(t *testing.T) {
		c := hold()
		defer func() {
			c.ExecContext(ctx, "ROLLBACK")
			c.Close()
		}()
		var retries []int
		impatient.onBusyRetry = func(n int) { retries = append(retries, n) }
		err := impatient.PutGold(ctx, []Gold{{TurnID: "T1", Verdict: "설정대로 말함"}}, "g")
		if !isBusy(err) {
			t.Fatalf("PutGold: %v, want SQLITE_BUSY", err)
		}
		if len(retries) != busyRetries {
			t.Fatalf("retries %v, want %d", retries, busyRetries)
		}
	})
}
