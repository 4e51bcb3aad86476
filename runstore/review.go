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
// unchanged with false. It is Apply of that one change.
func ApplyCanon(ctx context.Context, db *store.DB, run store.RunInfo, characterID, name string, o Options) (store.RunInfo, bool, error) {
	return Apply(ctx, db, run, Plan{Changes: []Change{{Queue: store.QueueOffCanon, CharacterID: characterID, Name: name}}}, o)
}

// ApplyEnding judges the run's dataset again when the run's profile
// disagrees with the active ending decisions (store.QueueEnding): "add"
// wants the ending in the list, "skip" or no active decision wants it out
// (only endings a review added can be taken out: a candidate is never one of
// the profile's own). The new profile is the run's (ProfileOf) without
// ending when it is no longer wanted, then ReviewedProfile of that (every
// accepted ending added, as import and judge --db do), stored on the new run
// as RunMeta.Endings. It returns the new run and true, or run and false when
// the profile did not change. It is Apply of that one change.
func ApplyEnding(ctx context.Context, db *store.DB, run store.RunInfo, ending string, o Options) (store.RunInfo, bool, error) {
	return Apply(ctx, db, run, Plan{Changes: []Change{{Queue: store.QueueEnding, Ending: ending}}}, o)
}

// Change names one review decision whose consequence a re-judge applies
// (package doc, "Review queues"): an off-canon name (Queue
// store.QueueOffCanon with CharacterID and Name) or an ending (Queue
// store.QueueEnding with Ending). What it asks for is read from the active
// decision for its key when the plan is applied, not stored in the Change,
// so a plan applied late does what the store says then.
type Change struct {
	Queue             store.Queue
	CharacterID, Name string
	Ending            string
}

// Plan is what one re-judge of a run applies: its Changes, in the order
// decided (several decisions made while a re-judge of the run was running
// are applied together, web's background jobs). Always judges again even
// when the cards and the profile already agree with the decisions: a retry
// after a failed re-judge, whose card update may have landed before the
// judging failed.
type Plan struct {
	Changes []Change
	Always  bool
}

// Apply makes the run's dataset and profile agree with the active decision
// of every change of the plan, then judges the dataset again into one new
// run: each off-canon change as ApplyCanon describes (cards updated with
// store.UpdateCard before judging and put back when the judging fails or is
// cancelled before its run commits, so a failed re-judge leaves the dataset
// as it was and applying the plan again judges again), each ending change as ApplyEnding describes. With ending changes
// the new run's profile is the run's without the endings no longer wanted,
// then ReviewedProfile of that; without any, or when that profile reads as
// the run's, it is the run's own (ProfileOf). It returns the new run and
// true, or run and false when nothing changed and the plan is not Always.
// Errors: ErrNotReviewable for a run without a dataset, store.ErrNotFound for
// a character the dataset has no card for, store.ErrInvalid for a change of
// another queue; a failed judging is wrapped with "the decision is stored but
// judging again failed".
func Apply(ctx context.Context, db *store.DB, run store.RunInfo, plan Plan, o Options) (store.RunInfo, bool, error) {
	pr, err := prepare(ctx, db, run, plan)
	if err != nil {
		return run, false, err
	}
	if !pr.changed && !plan.Always {
		return run, false, nil
	}
	var updated []persona.Card // the originals of the cards updated so far
	for i, c := range pr.cards {
		if err = db.UpdateCard(ctx, run.DatasetID, c); err != nil {
			break
		}
		updated = append(updated, pr.orig[i])
	}
	var next store.RunInfo
	if err == nil {
		next, err = judgeAgain(ctx, db, run, pr.profile, o)
	}
	if err == nil {
		return next, true, nil
	}
	if next.ID == 0 { // no run committed: the cards go back as they were
		back := context.WithoutCancel(ctx) // also when ctx was what ended the judging
		for _, c := range updated {
			if uerr := db.UpdateCard(back, run.DatasetID, c); uerr != nil {
				err = errors.Join(err, fmt.Errorf("card %q of dataset %d was not put back: %w", c.CharacterID, run.DatasetID, uerr))
			}
		}
	}
	return run, false, err
}

// Pending reports whether Apply of the plan would judge again now: some
// card or the profile disagrees with the active decisions, or the plan is
// Always. It only reads the store (the screen asks it in the request, before
// deciding whether a background re-judge is needed). Errors are Apply's
// before judging.
func Pending(ctx context.Context, db *store.DB, run store.RunInfo, plan Plan) (bool, error) {
	pr, err := prepare(ctx, db, run, plan)
	return err == nil && (pr.changed || plan.Always), err
}

// prepared is what a plan changes: the cards to update, the profile to judge
// with (nil: the run's own) and whether anything changed.
type prepared struct {
	cards   []persona.Card // the cards to update
	orig    []persona.Card // the same cards as they are now
	profile *speech.Profile
	changed bool
}

// prepare reads the active decisions of the plan's changes and computes the
// cards and profile that agree with them; it writes nothing.
func prepare(ctx context.Context, db *store.DB, run store.RunInfo, plan Plan) (prepared, error) {
	var out prepared
	if run.DatasetID == 0 {
		return out, ErrNotReviewable
	}
	var cards, orig []persona.Card
	touched := map[int]bool{}
	var endings []string
	for _, ch := range plan.Changes {
		switch ch.Queue {
		case store.QueueOffCanon:
			want, err := active(ctx, db, store.QueueOffCanon, review.OffCanonKey(ch.CharacterID, ch.Name))
			if err != nil {
				return out, err
			}
			if cards == nil {
				if cards, err = db.Cards(ctx, run.DatasetID); err != nil {
					return out, err
				}
				orig = slices.Clone(cards)
			}
			i := slices.IndexFunc(cards, func(c persona.Card) bool { return c.CharacterID == ch.CharacterID })
			if i < 0 {
				return out, fmt.Errorf("%w: card %q in dataset %d", store.ErrNotFound, ch.CharacterID, run.DatasetID)
			}
			card := &cards[i]
			has := slices.Contains(card.CanonEntities, ch.Name)
			switch {
			case want == review.CanonAdd && !has:
				card.CanonEntities = append(slices.Clip(card.CanonEntities), ch.Name)
			case want != review.CanonAdd && has:
				card.CanonEntities = slices.DeleteFunc(slices.Clone(card.CanonEntities), func(n string) bool { return n == ch.Name })
			default:
				continue
			}
			touched[i] = true
		case store.QueueEnding:
			endings = append(endings, ch.Ending)
		default:
			return out, fmt.Errorf("%w: a %q decision changes no judgement", store.ErrInvalid, ch.Queue)
		}
	}
	for i := range cards {
		if touched[i] {
			out.cards, out.orig = append(out.cards, cards[i]), append(out.orig, orig[i])
		}
	}
	out.changed = len(out.cards) > 0
	if !out.changed {
		// The dataset's cards are not those the run was judged with (a
		// re-judge killed after it updated a card: the card agrees with
		// the decisions, the run does not): judging again is still due.
		stale, err := cardsChangedSince(ctx, db, run)
		if err != nil {
			return out, err
		}
		out.changed = stale
	}
	if len(endings) == 0 {
		return out, nil
	}
	old, err := ProfileOf(run)
	if err != nil {
		return out, err
	}
	p := old
	for _, e := range endings {
		want, err := active(ctx, db, store.QueueEnding, e)
		if err != nil {
			return out, err
		}
		if want != review.EndingAdd && review.HasEnding(p, e) {
			p = (&speech.Profile{Name: p.Name}).With(slices.DeleteFunc(slices.Clone(p.Endings), func(x string) bool { return x == e }), p.Exceptions)
		}
	}
	if p, err = ReviewedProfile(ctx, db, p); err != nil {
		return out, err
	}
	if !slices.Equal(Endings(p), Endings(old)) {
		out.profile, out.changed = p, true
	}
	return out, nil
}

// cardsChangedSince reports whether the run's dataset's character_card
// table is not the one the run, or any later committed run of the dataset,
// was judged with (their fingerprints): no run judges the cards as they
// are. A run without that fingerprint counts as current.
func cardsChangedSince(ctx context.Context, db *store.DB, run store.RunInfo) (bool, error) {
	was, ok := run.Fingerprints[store.TableCards]
	if !ok {
		return false, nil
	}
	now, ok, err := storedFingerprint(ctx, db, run.DatasetID, store.TableCards)
	if err != nil || !ok || now == was {
		return false, err
	}
	runs, err := db.Runs(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range runs {
		if r.DatasetID == run.DatasetID && r.ID > run.ID && r.Fingerprints[store.TableCards] == now {
			return false, nil
		}
	}
	return true, nil
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

// judgeAgain judges the run's dataset into a new run with p (nil: the run's
// own profile). On an error after the run committed (its summary) the run
// comes back with the error.
func judgeAgain(ctx context.Context, db *store.DB, run store.RunInfo, p *speech.Profile, o Options) (store.RunInfo, error) {
	if p == nil {
		var err error
		if p, err = ProfileOf(run); err != nil {
			return store.RunInfo{}, err
		}
	}
	o.Profile = p
	// The import's rejected rows stay on every run judged from it.
	rejects, err := db.Rejects(ctx, run.ID)
	if err != nil {
		return store.RunInfo{}, err
	}
	next, err := JudgeDataset(ctx, db, run.DatasetID, o, rejects)
	if err != nil {
		return next, errors.Join(errors.New("the decision is stored but judging again failed"), err)
	}
	return next, nil
}
