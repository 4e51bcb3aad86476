package runstore

import (
	"context"
	"encoding/json"
	"fmt"

	"evident/persona/review"
	"evident/store"
)

// The review queues of a stored run without loading it (issue 13): one pass
// over the run's rows (store.EachQueueRow) through the accumulators of
// persona/review, the result kept in the store (migration 0009) so that
// later views, and a restart, read it instead of the run.

// ComputeQueues builds the run's three queues in one pass over its verdict
// rows, with memory bounded by what the queues show. The endings queue is
// built only for a run with a stored dataset whose profile ProfileOf
// rebuilds (Queues.Endings nil otherwise; the screen says why); its replies
// are the rows' reply_text, the judged turns' as the run stored them. It
// returns the queues and the number of rows read.
func ComputeQueues(ctx context.Context, db *store.DB, run store.RunInfo) (review.Queues, int, error) {
	var b *review.Builder
	if run.DatasetID != 0 {
		if p, err := ProfileOf(run); err == nil {
			b = review.NewBuilder(run.ID, p)
		}
	}
	if b == nil {
		b = review.NewBuilder(run.ID, nil)
	}
	n, err := db.EachQueueRow(ctx, run.ID, func(r *store.QueueRow) error {
		if r.Reply != nil {
			b.Add(&r.Record, *r.Reply, true)
		} else {
			b.Add(&r.Record, "", false)
		}
		return nil
	})
	if err != nil {
		return review.Queues{}, n, err
	}
	return b.Result(), n, nil
}

// StoreQueues keeps q, computed from records rows of the run, in the store
// (store.PutReviewQueues, one row per queue; the endings row only when q has
// one). This is what the judge should call once a run is committed (beside
// Summarize), so that even the first review view reads no run; the screen
// calls it on a first view otherwise.
func StoreQueues(ctx context.Context, db *store.DB, runID int64, records int, q review.Queues) error {
	bodies := map[store.Queue][]byte{}
	for queue, v := range map[store.Queue]any{store.QueueForbidden: q.Forbidden, store.QueueOffCanon: q.Names} {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("runstore: review queue %s of run %d: %w", queue, runID, err)
		}
		bodies[queue] = b
	}
	if q.Endings != nil {
		b, err := json.Marshal(q.Endings)
		if err != nil {
			return fmt.Errorf("runstore: review queue %s of run %d: %w", store.QueueEnding, runID, err)
		}
		bodies[store.QueueEnding] = b
	}
	return db.PutReviewQueues(ctx, runID, records, bodies)
}

// StoredQueues returns the queues StoreQueues kept for the run when they
// were computed from as many rows as the run has (run.Tally.Judged: a live
// run that grew since is computed again) and the run's endings queue is
// there when it should be; ok is false otherwise. A stored body that does
// not decode is an error naming the run and queue.
func StoredQueues(ctx context.Context, db *store.DB, run store.RunInfo) (q review.Queues, ok bool, err error) {
	stored, err := db.ReviewQueues(ctx, run.ID)
	if err != nil {
		return q, false, err
	}
	f, fok := stored[store.QueueForbidden]
	n, nok := stored[store.QueueOffCanon]
	e, eok := stored[store.QueueEnding]
	if !fok || !nok || f.Records != run.Tally.Judged || n.Records != run.Tally.Judged {
		return q, false, nil
	}
	if err := json.Unmarshal(f.Body, &q.Forbidden); err != nil {
		return q, false, fmt.Errorf("runstore: stored review queue %s of run %d: %w", store.QueueForbidden, run.ID, err)
	}
	if err := json.Unmarshal(n.Body, &q.Names); err != nil {
		return q, false, fmt.Errorf("runstore: stored review queue %s of run %d: %w", store.QueueOffCanon, run.ID, err)
	}
	wantEndings := false
	if run.DatasetID != 0 {
		_, perr := ProfileOf(run)
		wantEndings = perr == nil
	}
	if wantEndings != eok || (eok && e.Records != run.Tally.Judged) {
		return review.Queues{}, false, nil
	}
	if eok {
		q.Endings = new(review.EndingResult)
		if err := json.Unmarshal(e.Body, q.Endings); err != nil {
			return review.Queues{}, false, fmt.Errorf("runstore: stored review queue %s of run %d: %w", store.QueueEnding, run.ID, err)
		}
	}
	return q, true, nil
}

// Queues returns the run's review queues: the stored ones (StoredQueues),
// else computed now (ComputeQueues) and stored (StoreQueues). On a store
// the process may only read (store.DB.ReadOnly) the queues are computed and
// not kept; a failure to keep them is returned beside the queues (stored
// false), which the caller may log and use.
func Queues(ctx context.Context, db *store.DB, run store.RunInfo) (q review.Queues, keepErr error, err error) {
	q, ok, err := StoredQueues(ctx, db, run)
	if err != nil || ok {
		return q, nil, err
	}
	q, n, err := ComputeQueues(ctx, db, run)
	if err != nil {
		return q, nil, err
	}
	if db.ReadOnly() {
		return q, nil, nil
	}
	return q, StoreQueues(ctx, db, run.ID, n, q), nil
}
