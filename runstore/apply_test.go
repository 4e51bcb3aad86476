package runstore_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/review"
	"evident/runstore"
	"evident/store"
)

// TestApplyPlans: several decisions applied by one re-judge (the screen's
// background job coalesces decisions made while a re-judge of the run
// runs) give one run with all of them, and a retry judges again even when
// nothing is left to change.
func TestApplyPlans(t *testing.T) {
	ctx := context.Background()
	db, run := demoRun(t)
	decide := func(q store.Queue, key, value string) {
		t.Helper()
		if _, err := db.Decide(ctx, store.Decision{Queue: q, Key: key, Value: value, Who: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	both := runstore.Plan{Changes: []runstore.Change{
		{Queue: store.QueueOffCanon, CharacterID: "CHR-0100", Name: "나비"},
		{Queue: store.QueueEnding, Ending: "니까"},
	}}
	t.Run("nothing is pending before the decisions are stored", func(t *testing.T) {
		if p, err := runstore.Pending(ctx, db, run, both); err != nil || p {
			t.Errorf("Pending = %v, %v", p, err)
		}
		if next, judged, err := runstore.Apply(ctx, db, run, both, runstore.Options{}); err != nil || judged || next.ID != run.ID {
			t.Errorf("Apply = %d, %v, %v", next.ID, judged, err)
		}
	})
	var next store.RunInfo
	t.Run("adding 나비 and accepting 니까 in one plan is one run with the four changes of the two", func(t *testing.T) {
		decide(store.QueueOffCanon, review.OffCanonKey("CHR-0100", "나비"), review.CanonAdd)
		decide(store.QueueEnding, "니까", review.EndingAdd)
		if p, err := runstore.Pending(ctx, db, run, both); err != nil || !p {
			t.Fatalf("Pending = %v, %v", p, err)
		}
		var judged bool
		var err error
		next, judged, err = runstore.Apply(ctx, db, run, both, runstore.Options{})
		if err != nil || !judged {
			t.Fatalf("Apply = %v, %v", judged, err)
		}
		runs, _ := db.Runs(ctx)
		if len(runs) != 2 {
			t.Errorf("%d runs, want 2 (one re-judge)", len(runs))
		}
		if want := []string{"요", "죠", "니다", "십시오", "니까"}; !reflect.DeepEqual(next.Endings, want) {
			t.Errorf("endings %v", next.Endings)
		}
		if next.Tally.ByVerdict[persona.OffCanon] != 16 {
			t.Errorf("off-canon %d, want 16", next.Tally.ByVerdict[persona.OffCanon])
		}
		// The two single changes (review_test.go: 나비 → T-010206,
		// T-010244; 니까 → T-010033, T-020203), and T-010244, no longer
		// off-canon, now read with 니까: 말투 어긋남 ranks before 앞 회차를
		// 기억 못 함. The same as applying the two one after the other:
		want := []string{"T-010033 설정대로 말함 → 말투 어긋남", "T-010206 세계관 밖 고유명사 → 설정대로 말함",
			"T-010244 세계관 밖 고유명사 → 말투 어긋남", "T-020203 말투 어긋남 → 설정대로 말함"}
		if got := changed(t, db, run.ID, next.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("changed %v, want %v", got, want)
		}
		seq := openMem(t)
		sr, err := runstore.Run(ctx, seq, demoTables(), runstore.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []store.Decision{{Queue: store.QueueOffCanon, Key: review.OffCanonKey("CHR-0100", "나비"), Value: review.CanonAdd, Who: "test"},
			{Queue: store.QueueEnding, Key: "니까", Value: review.EndingAdd, Who: "test"}} {
			if _, err := seq.Decide(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		r2, _, err := runstore.ApplyCanon(ctx, seq, sr.Run, "CHR-0100", "나비", runstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r3, _, err := runstore.ApplyEnding(ctx, seq, r2, "니까", runstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := changed(t, seq, sr.Run.ID, r3.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("applied one after the other: %v", got)
		}
		cards, _ := db.Cards(ctx, run.DatasetID)
		if !slices.Contains(cards[0].CanonEntities, "나비") {
			t.Errorf("canon %v", cards[0].CanonEntities)
		}
	})
	t.Run("once applied nothing is pending, but a retry (Always) judges again into an equal run", func(t *testing.T) {
		if p, err := runstore.Pending(ctx, db, next, both); err != nil || p {
			t.Errorf("Pending = %v, %v", p, err)
		}
		retry := both
		retry.Always = true
		if p, err := runstore.Pending(ctx, db, next, retry); err != nil || !p {
			t.Errorf("Pending(Always) = %v, %v", p, err)
		}
		again, judged, err := runstore.Apply(ctx, db, next, retry, runstore.Options{})
		if err != nil || !judged || again.ID == next.ID {
			t.Fatalf("Apply(Always) = %d, %v, %v", again.ID, judged, err)
		}
		if got := changed(t, db, next.ID, again.ID); len(got) != 0 {
			t.Errorf("the retry changed %v", got)
		}
		if !reflect.DeepEqual(again.Endings, next.Endings) {
			t.Errorf("endings %v → %v", next.Endings, again.Endings)
		}
	})
	t.Run("a change of the forbidden queue or of an unknown character is refused before anything is written", func(t *testing.T) {
		runs, _ := db.Runs(ctx)
		_, _, err := runstore.Apply(ctx, db, run, runstore.Plan{Changes: []runstore.Change{{Queue: store.QueueForbidden}}, Always: true}, runstore.Options{})
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("forbidden: %v", err)
		}
		_, _, err = runstore.Apply(ctx, db, run, runstore.Plan{Changes: []runstore.Change{{Queue: store.QueueOffCanon, CharacterID: "CHR-9999", Name: "x"}}, Always: true}, runstore.Options{})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown card: %v", err)
		}
		if after, _ := db.Runs(ctx); len(after) != len(runs) {
			t.Errorf("%d runs after refused plans, want %d", len(after), len(runs))
		}
	})
}

// cancelSink cancels the judging after its first chunk of records.
type cancelSink struct{ cancel context.CancelFunc }

func (cancelSink) Wants() batch.Want { return batch.WantRecords }
func (c cancelSink) Records([]byte, []batch.Judged) error {
	c.cancel()
	return context.Canceled
}
func (cancelSink) Rejects([]persona.Reject) error { return nil }
func (cancelSink) Tally(persona.Tally) error      { return nil }

func TestApplyCancelledPutsTheCardBack(t *testing.T) {
	ctx := context.Background()
	db, run := demoRun(t)
	if _, err := db.Decide(ctx, store.Decision{Queue: store.QueueOffCanon, Key: review.OffCanonKey("CHR-0100", "나비"), Value: review.CanonAdd, Who: "test"}); err != nil {
		t.Fatal(err)
	}
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, judged, err := runstore.ApplyCanon(jctx, db, run, "CHR-0100", "나비", runstore.Options{Also: cancelSink{cancel}})
	if !errors.Is(err, context.Canceled) || judged {
		t.Fatalf("ApplyCanon = %v, %v; want context.Canceled", judged, err)
	}
	if runs, _ := db.Runs(ctx); len(runs) != 1 {
		t.Errorf("%d runs after a cancelled re-judge, want 1", len(runs))
	}
	cards, _ := db.Cards(ctx, run.DatasetID)
	if slices.Contains(cards[0].CanonEntities, "나비") {
		t.Errorf("the card kept 나비 after the re-judge failed: %v", cards[0].CanonEntities)
	}
	if ds, _ := db.Decisions(ctx, store.QueueOffCanon); len(ds) != 1 {
		t.Errorf("decisions %+v", ds)
	}
	t.Run("applying the decision again judges again", func(t *testing.T) {
		next, judged, err := runstore.ApplyCanon(ctx, db, run, "CHR-0100", "나비", runstore.Options{})
		if err != nil || !judged || next.Tally.ByVerdict[persona.OffCanon] != 16 {
			t.Errorf("ApplyCanon = %v (%d off-canon), %v", judged, next.Tally.ByVerdict[persona.OffCanon], err)
		}
	})
}
