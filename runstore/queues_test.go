package runstore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"evident/persona"
	"evident/persona/evalrun"
	"evident/persona/review"
	"evident/persona/speech"
	"evident/runstore"
	"evident/store"
)

func TestQueuesFromTheStore(t *testing.T) {
	ctx := context.Background()
	db, run := demoRun(t)
	recs, err := db.Records(ctx, run.ID, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := db.Turns(ctx, run.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	replies := map[string]string{}
	for _, tu := range turns {
		if tu.ReplyText != nil {
			replies[tu.TurnID] = *tu.ReplyText
		}
	}
	reply := func(id string) (string, bool) { s, ok := replies[id]; return s, ok }

	// The judge kept the queues it built while storing the run; q is
	// computed again from the stored rows alone.
	kept, ok, err := runstore.StoredQueues(ctx, db, run)
	if err != nil || !ok {
		t.Fatalf("queues not kept by the judge: %v, %v", ok, err)
	}
	q, n, err := runstore.ComputeQueues(ctx, db, run)
	if err != nil || n != run.Tally.Judged {
		t.Fatal(n, err)
	}
	t.Run("the streamed forbidden sample is the batch's 15 turns", func(t *testing.T) {
		var want []review.Item
		for _, p := range review.ForbiddenSample(run.ID, recs) {
			want = append(want, review.Item{Pos: p, TurnID: recs[p].TurnID})
		}
		if q.Forbidden.Total != 15 || len(want) != 15 || !reflect.DeepEqual(q.Forbidden.Sample, want) {
			t.Errorf("total %d %v\nwant %v", q.Forbidden.Total, q.Forbidden.Sample, want)
		}
	})
	t.Run("the streamed names are the batch's 21 groups, 22 turns", func(t *testing.T) {
		batch := review.OffCanonNames(recs)
		var got, want []string
		for k, g := range q.Names.Groups {
			got = append(got, fmt.Sprintf("%s/%s:%d", g.CharacterID, g.Name, g.Count))
			want = append(want, fmt.Sprintf("%s/%s:%d", batch[k].CharacterID, batch[k].Name, len(batch[k].Turns)))
		}
		if len(got) != 21 || q.Names.Turns != 22 || !reflect.DeepEqual(got, want) {
			t.Errorf("%d turns %v\nwant %v", q.Names.Turns, got, want)
		}
		if g := q.Names.Groups[3]; g.Name != "나비" || g.ByVerdict[persona.OffCanon] != 2 || len(g.Examples) != 2 {
			t.Errorf("나비: %+v", g)
		}
	})
	t.Run("the streamed endings queue is the batch's: 9 mixed, 7 unknown finals, ㅂ니까 then 니까", func(t *testing.T) {
		er := review.ReviewEndings(run.ID, speech.Seed(), recs, reply)
		e := q.Endings
		if e == nil || e.Mixed != 9 || e.Unknown != 7 || len(e.MixedSample) != 9 || len(e.UnknownSample) != 7 {
			t.Fatalf("%+v", e)
		}
		if !reflect.DeepEqual(e.Candidates, er.Candidates) {
			t.Errorf("candidates %+v\nbatch %+v", e.Candidates, er.Candidates)
		}
		var unknown []string
		for _, u := range e.UnknownSample {
			unknown = append(unknown, u.TurnID)
		}
		want := []string{"T-010032", "T-010033", "T-010122", "T-010133", "T-010244", "T-010252", "T-020203"}
		if !reflect.DeepEqual(unknown, want) {
			t.Errorf("unknown finals %v", unknown)
		}
	})
	t.Run("the queues the judge kept equal those computed from the store", func(t *testing.T) {
		got := kept
		want := q
		for i := range want.Endings.MixedSample { // readings are not stored
			want.Endings.MixedSample[i].Reading = speech.Reading{}
		}
		for i := range want.Endings.UnknownSample {
			want.Endings.UnknownSample[i].Reading = speech.Reading{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("stored %+v\ncomputed %+v", got, want)
		}
	})
	t.Run("queues stored from fewer rows than the run has are computed again", func(t *testing.T) {
		if err := runstore.StoreQueues(ctx, db, run.ID, run.Tally.Judged-1, q); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := runstore.StoredQueues(ctx, db, run); ok || err != nil {
			t.Errorf("stale queues used: %v, %v", ok, err)
		}
	})
	t.Run("a stored queue that is not JSON is refused when stored", func(t *testing.T) {
		err := db.PutReviewQueues(ctx, run.ID, 1, map[store.Queue][]byte{store.QueueForbidden: []byte("{")})
		if err == nil {
			t.Error("stored")
		}
	})
}

func TestVerdictChangesPaged(t *testing.T) {
	ctx := context.Background()
	db, run := demoRun(t)
	if _, err := db.Decide(ctx, store.Decision{Queue: store.QueueOffCanon, Key: review.OffCanonKey("CHR-0100", "나비"),
		Value: review.CanonAdd, Who: "test"}); err != nil {
		t.Fatal(err)
	}
	next, judged, err := runstore.ApplyCanon(ctx, db, run, "CHR-0100", "나비", runstore.Options{})
	if err != nil || !judged {
		t.Fatal(judged, err)
	}
	ra, _ := db.Records(ctx, run.ID, store.Filter{})
	rb, _ := db.Records(ctx, next.ID, store.Filter{})
	var want []string
	for _, c := range evalrun.CompareRuns(ra, rb) {
		want = append(want, fmt.Sprintf("%d %s %s→%s", c.To, c.TurnID, c.Before, c.After))
	}
	if len(want) != 2 {
		t.Fatalf("the demo's 나비 decision changes %v", want)
	}
	t.Run("pages of one change follow each other by seq and end empty", func(t *testing.T) {
		var got []string
		after := -1
		for range 3 {
			page, err := db.VerdictChanges(ctx, run.ID, next.ID, after, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page {
				got = append(got, fmt.Sprintf("%d %s %s→%s", c.Seq, c.TurnID, c.Before, c.After))
				after = c.Seq
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("paged %v, CompareRuns %v", got, want)
		}
	})
	t.Run("the count is exact below its cap and the cap above", func(t *testing.T) {
		if n, err := db.CountVerdictChanges(ctx, run.ID, next.ID, 100); n != 2 || err != nil {
			t.Errorf("%d, %v", n, err)
		}
		if n, err := db.CountVerdictChanges(ctx, run.ID, next.ID, 1); n != 1 || err != nil {
			t.Errorf("capped %d, %v", n, err)
		}
	})
}
