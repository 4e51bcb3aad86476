package store

import (
	"context"
	"errors"
	"testing"

	"evident/persona"
)

// JudgeLiveKeyed stores a call only while its key is LiveJudgeKey's answer
// in the call's own transaction: after a card update (a new version), after
// a newer dataset becomes the latest (asked 0), and for a dataset that is
// not there, the call fails with a *LiveKeyError carrying the key now and
// stores nothing; with the key now it is stored. In one group, a stale call
// fails alone (no second pass: nothing of it was written).
func TestJudgeLiveKeyedChecksTheCardsVersionInItsTransaction(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	keyed := func(key LiveKey, lt LiveTurn) error {
		_, _, err := db.JudgeLiveKeyed(ctx, key, RunMeta{Profile: "seed"}, []LiveTurn{lt}, groupCall(key.ID, j, lt).step)
		return err
	}
	current := func(asked int64) LiveKey {
		id, v, err := db.LiveJudgeKey(ctx, asked)
		if err != nil {
			t.Fatal(err)
		}
		return LiveKey{Asked: asked, ID: id, Version: v}
	}
	stored := func(turnID string) bool {
		_, err := db.LiveRecord(ctx, turnID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	stale := func(err error, want LiveKey) {
		t.Helper()
		var ke *LiveKeyError
		if !errors.As(err, &ke) || ke.Err != nil || ke.Now != want {
			t.Fatalf("stale key: %v, want a *LiveKeyError with the key now %+v", err, want)
		}
	}

	k0 := current(0)
	if k0.ID != ds {
		t.Fatalf("latest dataset %d, want %d", k0.ID, ds)
	}
	if err := keyed(k0, liveTurn("T1", "", false, "응", "그래.")); err != nil || !stored("T1") {
		t.Fatalf("current key: %v, stored %v", err, stored("T1"))
	}

	card := persona.Card{CharacterID: "C1", Name: "하나", HonorificRule: persona.Jondaemal, FirstPerson: "저"}
	if err := db.UpdateCard(ctx, ds, card); err != nil {
		t.Fatal(err)
	}
	k1 := current(0)
	if k1.Version == k0.Version {
		t.Fatalf("card version %q unchanged by UpdateCard", k1.Version)
	}
	stale(keyed(k0, liveTurn("T2", "", false, "응", "그래.")), k1)
	if stored("T2") {
		t.Fatal("T2 stored under a stale key")
	}
	if err := keyed(k1, liveTurn("T2", "", false, "응", "그래.")); err != nil || !stored("T2") {
		t.Fatalf("the key now: %v", err)
	}

	ds2 := liveDataset(t, db)
	k2 := current(0)
	if k2.ID != ds2 {
		t.Fatalf("latest dataset %d, want %d", k2.ID, ds2)
	}
	stale(keyed(k1, liveTurn("T3", "", false, "응", "그래.")), k2)
	if err := keyed(current(ds), liveTurn("T3", "", false, "응", "그래.")); err != nil {
		t.Fatalf("the first dataset asked by id: %v", err)
	}

	var ke *LiveKeyError
	err := keyed(LiveKey{Asked: 99, ID: 99, Version: "1/x"}, liveTurn("T4", "", false, "응", "그래."))
	if !errors.As(err, &ke) || !errors.Is(err, ErrNotFound) || ke.Now.Asked != 99 || stored("T4") {
		t.Fatalf("a missing dataset: %v, want a *LiveKeyError wrapping ErrNotFound", err)
	}

	// One group: the stale call fails alone, the other is stored, once.
	q := liveQueueOf(db)
	before := q.retries.Load()
	good, bad := groupCall(ds2, j, liveTurn("G1", "", false, "응", "그래.")), groupCall(ds, j, liveTurn("G2", "", false, "응", "그래."))
	good.key, bad.key = &k2, &k1
	db.judgeLiveCalls(q, []*liveCall{bad, good})
	stale(bad.err, current(0))
	if good.err != nil || !stored("G1") || stored("G2") {
		t.Fatalf("group: %v / %v, G1 stored %v, G2 stored %v; want G1 alone", bad.err, good.err, stored("G1"), stored("G2"))
	}
	if n := q.retries.Load() - before; n != 0 {
		t.Fatalf("%d groups written again for a stale key, want 0", n)
	}
}
