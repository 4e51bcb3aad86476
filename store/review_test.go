package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"evident/persona"
)

func TestGold(t *testing.T) {
	ctx := context.Background()
	t.Run("labels read back keyed by turn_id with their source", func(t *testing.T) {
		db := openMem(t)
		at := time.Date(2026, 10, 2, 9, 0, 0, 0, time.UTC)
		fixedClock(db, at)
		labels := []Gold{{TurnID: "T1", Verdict: persona.Kept}, {TurnID: "T2", Verdict: persona.OffCanon, Note: "리안 is not canon"}}
		if err := db.PutGold(ctx, labels, "gold.csv"); err != nil {
			t.Fatal(err)
		}
		got, err := db.Gold(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]Gold{
			"T1": {TurnID: "T1", Verdict: persona.Kept, Source: "gold.csv", LabelledAt: at},
			"T2": {TurnID: "T2", Verdict: persona.OffCanon, Note: "리안 is not canon", Source: "gold.csv", LabelledAt: at},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("gold %+v", got)
		}
	})
	t.Run("a later label replaces the earlier one for the same turn", func(t *testing.T) {
		db := openMem(t)
		db.PutGold(ctx, []Gold{{TurnID: "T1", Verdict: persona.Kept}}, "a")
		db.PutGold(ctx, []Gold{{TurnID: "T1", Verdict: persona.SpeechOff}}, "b")
		got, _ := db.Gold(ctx)
		if len(got) != 1 || got["T1"].Verdict != persona.SpeechOff || got["T1"].Source != "b" {
			t.Fatalf("gold %+v", got)
		}
	})
	t.Run("a label with an invented verdict stores nothing of the batch", func(t *testing.T) {
		db := openMem(t)
		err := db.PutGold(ctx, []Gold{{TurnID: "T1", Verdict: persona.Kept}, {TurnID: "T2", Verdict: "애매함"}}, "x")
		if !errors.Is(err, ErrInvalid) {
			t.Fatal(err)
		}
		if got, _ := db.Gold(ctx); len(got) != 0 {
			t.Fatalf("gold %+v", got)
		}
	})
}

func TestDecisions(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	start := time.Date(2026, 10, 3, 10, 0, 0, 0, time.UTC)
	fixedClock(db, start)
	decide := func(d Decision) int64 {
		t.Helper()
		id, err := db.Decide(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	active := func(q Queue) []string {
		t.Helper()
		ds, err := db.Decisions(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, string(d.Queue)+":"+d.Key+"="+d.Value)
		}
		return out
	}
	add := decide(Decision{Queue: QueueOffCanon, Key: "리안", Value: "add", Who: "creator"})
	block := decide(Decision{Queue: QueueOffCanon, Key: "리안", Value: "block", Who: "editor", Note: "spoiler"})
	decide(Decision{Queue: QueueOffCanon, Key: "서울", Value: "block", Who: "creator"})
	ending := decide(Decision{Queue: QueueEnding, Key: "쇼", Value: "add", Who: "creator"})

	t.Run("the latest decision per key wins", func(t *testing.T) {
		got := active(QueueOffCanon)
		want := []string{"offcanon:리안=block", "offcanon:서울=block"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("active %v, want %v", got, want)
		}
		if got := active(""); len(got) != 3 {
			t.Fatalf("all queues: %v", got)
		}
	})
	t.Run("undo brings back the decision before it", func(t *testing.T) {
		if err := db.Undo(ctx, block, "editor"); err != nil {
			t.Fatal(err)
		}
		want := []string{"offcanon:리안=add", "offcanon:서울=block"}
		if got := active(QueueOffCanon); !reflect.DeepEqual(got, want) {
			t.Fatalf("active %v, want %v", got, want)
		}
		if err := db.Undo(ctx, add, "creator"); err != nil {
			t.Fatal(err)
		}
		if got := active(QueueOffCanon); !reflect.DeepEqual(got, []string{"offcanon:서울=block"}) {
			t.Fatalf("active %v", got)
		}
	})
	t.Run("undo twice, undo of nothing and bad input are errors", func(t *testing.T) {
		if err := db.Undo(ctx, block, "editor"); !errors.Is(err, ErrAlreadyUndone) {
			t.Error(err)
		}
		if err := db.Undo(ctx, 999, "editor"); !errors.Is(err, ErrNotFound) {
			t.Error(err)
		}
		if err := db.Undo(ctx, ending, ""); !errors.Is(err, ErrInvalid) {
			t.Error(err)
		}
		for _, d := range []Decision{{Queue: "later", Key: "k", Who: "w"}, {Queue: QueueEnding, Who: "w"}, {Queue: QueueEnding, Key: "k"}} {
			if _, err := db.Decide(ctx, d); !errors.Is(err, ErrInvalid) {
				t.Errorf("Decide(%+v): %v", d, err)
			}
		}
		if _, err := db.Decisions(ctx, "later"); !errors.Is(err, ErrInvalid) {
			t.Error(err)
		}
	})
	t.Run("the export lists every decision, undone ones too, with times", func(t *testing.T) {
		var buf bytes.Buffer
		if err := db.ExportDecisions(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 4 {
			t.Fatalf("%d lines:\n%s", len(lines), buf.String())
		}
		var got []Decision
		for _, l := range lines {
			var d Decision
			if err := json.Unmarshal([]byte(l), &d); err != nil {
				t.Fatal(err)
			}
			got = append(got, d)
		}
		if got[0].ID != add || got[1].ID != block || got[3].ID != ending {
			t.Fatalf("order %+v", got)
		}
		if got[1].UndoneAt == nil || got[1].UndoneBy != "editor" || !got[1].UndoneAt.After(got[1].At) {
			t.Fatalf("undone decision %+v", got[1])
		}
		if got[2].UndoneAt != nil || got[1].Note != "spoiler" || !got[0].At.Equal(start) {
			t.Fatalf("decisions %+v", got)
		}
		if !strings.Contains(lines[2], `"undone_at":null`) || !strings.Contains(lines[0], `"at":"2026-10-03T10:00:00Z"`) {
			t.Fatalf("lines:\n%s", buf.String())
		}
		t.Log(lines[1])
	})
}

func TestDecisionLookup(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	fixedClock(db, time.Date(2026, 10, 4, 8, 0, 0, 0, time.UTC))
	first, err := db.Decide(ctx, Decision{Queue: QueueForbidden, Key: "T1", Value: "confirm", Who: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	second, _ := db.Decide(ctx, Decision{Queue: QueueForbidden, Key: "T1", Value: "reject", Who: "editor"})
	db.Decide(ctx, Decision{Queue: QueueEnding, Key: "니까", Value: "add", Who: "creator"})
	if err := db.Undo(ctx, second, "creator"); err != nil {
		t.Fatal(err)
	}
	t.Run("one decision reads back by id, undone or not", func(t *testing.T) {
		d, err := db.Decision(ctx, second)
		if err != nil || d.Value != "reject" || d.Who != "editor" || d.UndoneAt == nil || d.UndoneBy != "creator" {
			t.Fatalf("%+v, %v", d, err)
		}
		if _, err := db.Decision(ctx, 99); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing decision: %v", err)
		}
	})
	t.Run("the log of a queue keeps superseded and undone decisions in order", func(t *testing.T) {
		log, err := db.DecisionLog(ctx, QueueForbidden)
		if err != nil || len(log) != 2 || log[0].ID != first || log[1].ID != second || log[1].UndoneAt == nil {
			t.Fatalf("%+v, %v", log, err)
		}
		all, _ := db.DecisionLog(ctx, "")
		if len(all) != 3 {
			t.Errorf("all queues: %d", len(all))
		}
		if _, err := db.DecisionLog(ctx, "later"); !errors.Is(err, ErrInvalid) {
			t.Error(err)
		}
	})
}
