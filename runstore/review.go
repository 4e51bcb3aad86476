package runstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"evident/persona"
	"evident/persona/review"
	"evident/persona/speech"
	"evident/store"
)

// The review queues (seed 000 "[수동 검증]"; spec persona.md "Evaluation
// runner and manual review"): what each one shows is computed here from a
// stored run, and what an active decision means for the next judgement is
// applied here. See the package doc, "Review queues".

// ErrNotReviewable: the queue needs the run's stored dataset (its turns to
// read, its cards to change), and the run has none.
var ErrNotReviewable = fmt.Errorf("%w: review needs it", ErrNoDataset)

// ApplyCanon makes the card of characterID in the run's dataset agree with
// the active off-canon decision for name (store.QueueOffCanon, key
// review.OffCanonKey): "add" puts the name in canon_entities, "block" or no active
// decision keeps it out. When the card had to change it is updated
// (store.UpdateCard) and the dataset is judged again with the run's profile
// into a new run, which is returned with true; otherwise run comes back
// unchanged with false.
func ApplyCanon(ctx context.Context, db *store.DB, run store.RunInfo, characterID, name string, o Options) (store.RunInfo, bool, error) {
	if run.DatasetID == 0 {
		return run, false, ErrNotReviewable
	}
	want, err := active(ctx, db, store.QueueOffCanon, review.OffCanonKey(characterID, name))
	if err != nil {
		return run, false, err
	}
	cards, err := db.Cards(ctx, run.DatasetID)
	if err != nil {
		return run, false, err
	}
	i := slices.IndexFunc(cards, func(c persona.Card) bool { return c.CharacterID == characterID })
	if i < 0 {
		return run, false, fmt.Errorf("%w: card %q in dataset %d", store.ErrNotFound, characterID, run.DatasetID)
	}
	card := cards[i]
	has := slices.Contains(card.CanonEntities, name)
	switch {
	case want == review.CanonAdd && !has:
		card.CanonEntities = append(slices.Clip(card.CanonEntities), name)
	case want != review.CanonAdd && has:
		card.CanonEntities = slices.DeleteFunc(slices.Clone(card.CanonEntities), func(n string) bool { return n == name })
	default:
		return run, false, nil
	}
	if err := db.UpdateCard(ctx, run.DatasetID, card); err != nil {
		return run, false, err
	}
	return rejudge(ctx, db, run, nil, o)
}

// ApplyEnding judges the run's dataset again when the run's profile
// disagrees with the active ending decisions (store.QueueEnding): "add"
// wants the ending in the list, "skip" or no active decision wants it out
// (only endings a review added can be taken out: a candidate is never one of
// the profile's own). The new profile is the run's (ProfileOf) without
// ending when it is no longer wanted, then ReviewedProfile of that (every
// accepted ending added, as import and judge --db do), stored on the new run
// as RunMeta.Endings. It returns the new run and true, or run and false when
// the profile did not change.
func ApplyEnding(ctx context.Context, db *store.DB, run store.RunInfo, ending string, o Options) (store.RunInfo, bool, error) {
	if run.DatasetID == 0 {
		return run, false, ErrNotReviewable
	}
	want, err := active(ctx, db, store.QueueEnding, ending)
	if err != nil {
		return run, false, err
	}
	old, err := ProfileOf(run)
	if err != nil {
		return run, false, err
	}
	p := old
	if want != review.EndingAdd && review.HasEnding(p, ending) {
		p = (&speech.Profile{Name: p.Name}).With(slices.DeleteFunc(slices.Clone(p.Endings), func(e string) bool { return e == ending }), p.Exceptions)
	}
	if p, err = ReviewedProfile(ctx, db, p); err != nil {
		return run, false, err
	}
	if slices.Equal(Endings(p), Endings(old)) {
		return run, false, nil
	}
	return rejudge(ctx, db, run, p, o)
}

// ReviewedProfile is base with every ending of an active "add" decision of
// the endings queue (AcceptedEndings) appended in the order decided, except
// those base already lists; base itself when there is none (spec persona.md
// "Evaluation runner and manual review": a reviewed ending is used by the
// next judgement). evident import, evident judge --db and the screen's
// re-judge (ApplyEnding) all build their profile with it, so a dataset
// judged after a review reads as the screen would. Decisions are global to
// the store, not per dataset (store.Decide). A nil base is the seed's.
func ReviewedProfile(ctx context.Context, db *store.DB, base *speech.Profile) (*speech.Profile, error) {
	if base == nil {
		base = speech.Seed()
	}
	accepted, err := AcceptedEndings(ctx, db)
	if err != nil {
		return nil, err
	}
	var add []string
	for _, e := range accepted {
		if !review.HasEnding(base, e) && !slices.Contains(add, e) {
			add = append(add, e)
		}
	}
	if len(add) == 0 {
		return base, nil
	}
	return base.With(add, nil), nil
}

// AcceptedEndings are the endings with an active "add" decision, in the
// order they were decided.
func AcceptedEndings(ctx context.Context, db *store.DB) ([]string, error) {
	ds, err := db.Decisions(ctx, store.QueueEnding)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range ds {
		if d.Value == review.EndingAdd {
			out = append(out, d.Key)
		}
	}
	return out, nil
}

// active is the value of the active decision for (queue, key), "" for none.
func active(ctx context.Context, db *store.DB, queue store.Queue, key string) (string, error) {
	ds, err := db.Decisions(ctx, queue)
	if err != nil {
		return "", err
	}
	for _, d := range ds {
		if d.Key == key {
			return d.Value, nil
		}
	}
	return "", nil
}

// rejudge judges the run's dataset into a new run with p (nil: the run's
// own profile).
func rejudge(ctx context.Context, db *store.DB, run store.RunInfo, p *speech.Profile, o Options) (store.RunInfo, bool, error) {
	if p == nil {
		var err error
		if p, err = ProfileOf(run); err != nil {
			return run, false, err
		}
	}
	o.Profile = p
	// The import's rejected rows stay on every run judged from it.
	rejects, err := db.Rejects(ctx, run.ID)
	if err != nil {
		return run, false, err
	}
	next, err := JudgeDataset(ctx, db, run.DatasetID, o, rejects)
	if err != nil {
		return run, false, errors.Join(errors.New("the decision is stored but judging again failed"), err)
	}
	return next, true, nil
}
