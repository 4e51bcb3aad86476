package runstore_test

import (
	"context"
	"slices"
	"testing"

	"evident/persona"
	"evident/persona/review"
	"evident/runstore"
	"evident/store"
)

// TestARejudgeKilledAfterItsCardUpdateIsStillDue: a re-judge killed
// between updating the card and committing its run (kill -9 of the server)
// leaves a card that agrees with the decision and a latest run that does
// not; accepting the decision again is then still pending (the dataset's
// cards are not those any run of it was judged with), and applying it
// judges the demo's 세계관 밖 고유명사 18 → 16, as the uninterrupted accept
// does. Once that run exists, the older run's plan is not pending.
func TestARejudgeKilledAfterItsCardUpdateIsStillDue(t *testing.T) {
	ctx := context.Background()
	db, run := demoRun(t)
	key := review.OffCanonKey("CHR-0100", "나비")
	if _, err := db.Decide(ctx, store.Decision{Queue: store.QueueOffCanon, Key: key, Value: review.CanonAdd, Who: "test"}); err != nil {
		t.Fatal(err)
	}
	// what the killed job left: the card updated, no run judged from it
	cards, err := db.Cards(ctx, run.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cards, func(c persona.Card) bool { return c.CharacterID == "CHR-0100" })
	cards[i].CanonEntities = append(cards[i].CanonEntities, "나비")
	if err := db.UpdateCard(ctx, run.DatasetID, cards[i]); err != nil {
		t.Fatal(err)
	}
	plan := runstore.Plan{Changes: []runstore.Change{{Queue: store.QueueOffCanon, CharacterID: "CHR-0100", Name: "나비"}}}
	if p, err := runstore.Pending(ctx, db, run, plan); err != nil || !p {
		t.Fatalf("Pending = %v, %v; want the re-judge still due", p, err)
	}
	next, judged, err := runstore.Apply(ctx, db, run, plan, runstore.Options{})
	if err != nil || !judged {
		t.Fatalf("Apply = %v, %v", judged, err)
	}
	if n := next.Tally.ByVerdict[persona.OffCanon]; n != 16 {
		t.Errorf("세계관 밖 고유명사 in the new run: %d, want 16", n)
	}
	if p, err := runstore.Pending(ctx, db, run, plan); err != nil || p {
		t.Errorf("Pending of the old run's plan once a run judges the cards as they are = %v, %v; want false", p, err)
	}
}
