package runstore_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"evident/persona"
	"evident/persona/evalrun"
	"evident/persona/review"
	"evident/persona/speech"
	"evident/runstore"
	"evident/store"
)

func TestReviewQueues(t *testing.T) {
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

	t.Run("the forbidden sample is all 15 forbidden-topic turns of the demo", func(t *testing.T) {
		pos := review.ForbiddenSample(run.ID, recs)
		if len(pos) != 15 {
			t.Fatalf("%d picked", len(pos))
		}
		for _, p := range pos {
			if recs[p].Verdict != persona.ForbiddenTopic {
				t.Errorf("%s is %s", recs[p].TurnID, recs[p].Verdict)
			}
		}
	})
	t.Run("off-canon names are grouped per character, most turns first", func(t *testing.T) {
		gs := review.OffCanonNames(recs)
		if len(gs) != 21 {
			t.Fatalf("%d groups", len(gs))
		}
		var top []string
		for _, g := range gs[:4] {
			top = append(top, fmt.Sprintf("%s/%s:%d", g.CharacterID, g.Name, len(g.Turns)))
		}
		want := []string{"CHR-0100/이순신:2", "CHR-0100/갈매기섬:2", "CHR-0100/순이:2", "CHR-0100/나비:2"}
		if !reflect.DeepEqual(top, want) {
			t.Errorf("top %v, want %v", top, want)
		}
	})
	t.Run("nine demo replies mix styles and only polite-shaped endings are ranked", func(t *testing.T) {
		er := review.ReviewEndings(run.ID, speech.Seed(), recs, reply)
		if len(er.Mixed) != 9 || len(er.Sample) != 9 {
			t.Fatalf("mixed %d, sample %d", len(er.Mixed), len(er.Sample))
		}
		if got := len(er.Candidates); got != 2 {
			t.Errorf("%d candidates: %+v", got, er.Candidates)
		}
		first := er.Candidates[0]
		if first.Ending != "ㅂ니까" || first.Sentences != 1 || first.Flips != 1 {
			t.Errorf("first candidate %+v", first)
		}
		if len(er.Unknown) != 7 {
			t.Errorf("%d unknown finals", len(er.Unknown))
		}
		i := slices.IndexFunc(er.Candidates, func(c review.Candidate) bool { return c.Ending == "니까" })
		if i < 0 || er.Candidates[i].Sentences != 1 || er.Candidates[i].Flips != 4 ||
			!reflect.DeepEqual(er.Candidates[i].Words, []string{"준비되셨습니까"}) {
			t.Errorf("니까: %+v", er.Candidates)
		}
	})

	decide := func(q store.Queue, key, value string) int64 {
		t.Helper()
		id, err := db.Decide(ctx, store.Decision{Queue: q, Key: key, Value: value, Who: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	offCanon := func(r store.RunInfo) int { return r.Tally.ByVerdict[persona.OffCanon] }

	var added store.RunInfo
	t.Run("adding 나비 to 도담's canon judges again with two fewer off-canon turns", func(t *testing.T) {
		decide(store.QueueOffCanon, review.OffCanonKey("CHR-0100", "나비"), review.CanonAdd)
		next, judged, err := runstore.ApplyCanon(ctx, db, run, "CHR-0100", "나비", runstore.Options{})
		if err != nil || !judged || next.ID == run.ID {
			t.Fatalf("ApplyCanon = %d, %v, %v", next.ID, judged, err)
		}
		if offCanon(run) != 18 || offCanon(next) != 16 {
			t.Errorf("세계관 밖 고유명사 %d → %d", offCanon(run), offCanon(next))
		}
		if next.Profile != run.Profile || !reflect.DeepEqual(next.Endings, run.Endings) {
			t.Errorf("profile %s %v → %s %v", run.Profile, run.Endings, next.Profile, next.Endings)
		}
		added = next
		again, judged, err := runstore.ApplyCanon(ctx, db, next, "CHR-0100", "나비", runstore.Options{})
		if err != nil || judged || again.ID != next.ID {
			t.Errorf("applying the same decision again judged: %d, %v, %v", again.ID, judged, err)
		}
	})
	t.Run("blocking the same name takes it out of canon and judges again", func(t *testing.T) {
		decide(store.QueueOffCanon, review.OffCanonKey("CHR-0100", "나비"), review.CanonBlock)
		next, judged, err := runstore.ApplyCanon(ctx, db, added, "CHR-0100", "나비", runstore.Options{})
		if err != nil || !judged || offCanon(next) != 18 {
			t.Fatalf("ApplyCanon = %d (%d off-canon), %v, %v", next.ID, offCanon(next), judged, err)
		}
		cards, _ := db.Cards(ctx, run.DatasetID)
		if slices.Contains(cards[0].CanonEntities, "나비") {
			t.Errorf("canon %v", cards[0].CanonEntities)
		}
	})
	t.Run("a blocked name with no card change judges nothing", func(t *testing.T) {
		decide(store.QueueOffCanon, review.OffCanonKey("CHR-0100", "순이"), review.CanonBlock)
		if _, judged, err := runstore.ApplyCanon(ctx, db, run, "CHR-0100", "순이", runstore.Options{}); err != nil || judged {
			t.Errorf("judged %v, %v", judged, err)
		}
	})
	t.Run("accepting 니까 changes exactly T-010033 and T-020203", func(t *testing.T) {
		id := decide(store.QueueEnding, "니까", review.EndingAdd)
		next, judged, err := runstore.ApplyEnding(ctx, db, run, "니까", runstore.Options{})
		if err != nil || !judged {
			t.Fatalf("ApplyEnding = %v, %v", judged, err)
		}
		if want := []string{"요", "죠", "니다", "십시오", "니까"}; !reflect.DeepEqual(next.Endings, want) || next.Profile != "seed" {
			t.Errorf("run endings %s %v", next.Profile, next.Endings)
		}
		got := changed(t, db, run.ID, next.ID)
		want := []string{"T-010033 설정대로 말함 → 말투 어긋남", "T-020203 말투 어긋남 → 설정대로 말함"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("changed %v, want %v", got, want)
		}
		if err := db.Undo(ctx, id, "test"); err != nil {
			t.Fatal(err)
		}
		back, judged, err := runstore.ApplyEnding(ctx, db, next, "니까", runstore.Options{})
		if err != nil || !judged || !reflect.DeepEqual(back.Endings, run.Endings) {
			t.Fatalf("undo: %v %v, %v", back.Endings, judged, err)
		}
		if got := changed(t, db, run.ID, back.ID); len(got) != 0 {
			t.Errorf("after undo still changed: %v", got)
		}
		accepted, err := runstore.AcceptedEndings(ctx, db)
		if err != nil || len(accepted) != 0 {
			t.Errorf("accepted %v, %v", accepted, err)
		}
	})
	t.Run("accepting ㅂ니까 instead changes T-020203 alone (험하니까 and 동네니까 stay 반말)", func(t *testing.T) {
		id := decide(store.QueueEnding, "ㅂ니까", review.EndingAdd)
		next, judged, err := runstore.ApplyEnding(ctx, db, run, "ㅂ니까", runstore.Options{})
		if err != nil || !judged {
			t.Fatalf("ApplyEnding = %v, %v", judged, err)
		}
		got := changed(t, db, run.ID, next.ID)
		if want := []string{"T-020203 말투 어긋남 → 설정대로 말함"}; !reflect.DeepEqual(got, want) {
			t.Errorf("changed %v, want %v", got, want)
		}
		if err := db.Undo(ctx, id, "test"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a seen mark on an unknown final is no accepted ending and judges nothing", func(t *testing.T) {
		decide(store.QueueEnding, review.SeenKey("T-010032"), review.EndingSeen)
		if accepted, err := runstore.AcceptedEndings(ctx, db); err != nil || len(accepted) != 0 {
			t.Errorf("accepted %v, %v", accepted, err)
		}
		if _, judged, err := runstore.ApplyEnding(ctx, db, run, review.SeenKey("T-010032"), runstore.Options{}); err != nil || judged {
			t.Errorf("judged %v, %v", judged, err)
		}
	})
}

// changed lists the turns whose verdict differs between two runs.
func changed(t *testing.T, db *store.DB, a, b int64) []string {
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
