package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

func TestEachQueueRowAcrossPages(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	n := QueuePage + 37
	turns, recs := synthSet(n)
	recs[QueuePage].OffCanonEntities = []string{"나비", "갈매기섬"} // the first row of the second page
	turns[5].ReplyText = nil
	info := writeRun(t, db, testMeta, recs, turns)
	var seqs []int
	var names []string
	nulls := 0
	got, err := db.EachQueueRow(ctx, info.ID, func(r *QueueRow) error {
		if r.Record.TurnID != recs[r.Seq].TurnID || r.Record.Verdict != recs[r.Seq].Verdict || r.Record.CharacterID != recs[r.Seq].CharacterID {
			t.Fatalf("row %d: %+v", r.Seq, r.Record)
		}
		if r.Reply == nil {
			nulls++
		} else if *r.Reply != *turns[r.Seq].ReplyText {
			t.Fatalf("row %d reply %q", r.Seq, *r.Reply)
		}
		seqs = append(seqs, r.Seq)
		names = append(names, r.Record.OffCanonEntities...)
		return nil
	})
	if err != nil || got != n || len(seqs) != n || seqs[0] != 0 || seqs[n-1] != n-1 {
		t.Fatalf("%d rows (%d seen), %v", got, len(seqs), err)
	}
	if nulls != 1 || !reflect.DeepEqual(names, []string{"나비", "갈매기섬"}) {
		t.Errorf("%d null replies, names %v", nulls, names)
	}
	t.Run("fn's error stops the pass and comes back", func(t *testing.T) {
		stop := errors.New("stop")
		k, err := db.EachQueueRow(ctx, info.ID, func(*QueueRow) error { return stop })
		if err != stop || k != 1 {
			t.Errorf("%d, %v", k, err)
		}
	})
	t.Run("an unknown run is ErrNotFound", func(t *testing.T) {
		if _, err := db.EachQueueRow(ctx, info.ID+1, func(*QueueRow) error { return nil }); !errors.Is(err, ErrNotFound) {
			t.Errorf("%v", err)
		}
	})
	t.Run("records by turn_id are the run's, absent ids absent, at most MaxLookup", func(t *testing.T) {
		es, err := db.EntriesByTurnID(ctx, info.ID, []string{recs[3].TurnID, "nope", recs[QueuePage].TurnID})
		if err != nil || len(es) != 2 || es[recs[QueuePage].TurnID].Seq != QueuePage ||
			!reflect.DeepEqual(es[recs[QueuePage].TurnID].Record.OffCanonEntities, []string{"나비", "갈매기섬"}) {
			t.Fatalf("%v, %v", es, err)
		}
		if _, err := db.EntriesByTurnID(ctx, info.ID, make([]string, MaxLookup+1)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v", err)
		}
	})
	t.Run("stored queues come back as put, replaced by a later put", func(t *testing.T) {
		if qs, err := db.ReviewQueues(ctx, info.ID); err != nil || len(qs) != 0 {
			t.Fatalf("%v, %v", qs, err)
		}
		put := func(records int, body string) {
			t.Helper()
			if err := db.PutReviewQueues(ctx, info.ID, records, map[Queue][]byte{QueueForbidden: []byte(body)}); err != nil {
				t.Fatal(err)
			}
		}
		put(1, `{"total":1}`)
		put(n, `{"total":2}`)
		qs, err := db.ReviewQueues(ctx, info.ID)
		if err != nil || len(qs) != 1 || qs[QueueForbidden].Records != n || string(qs[QueueForbidden].Body) != `{"total":2}` {
			t.Errorf("%+v, %v", qs, err)
		}
		for _, bad := range []map[Queue][]byte{{"nope": []byte("{}")}, {QueueEnding: []byte("{")}} {
			if err := db.PutReviewQueues(ctx, info.ID, 1, bad); !errors.Is(err, ErrInvalid) {
				t.Errorf("%v stored: %v", bad, err)
			}
		}
		if err := db.PutReviewQueues(ctx, info.ID+1, 1, map[Queue][]byte{QueueForbidden: []byte("{}")}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown run: %v", err)
		}
	})
}
