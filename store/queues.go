package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"evident/persona"
)

// What the review screen reads of a run without loading it (issue 13): the
// rows its queues are computed from, a page at a time; the queues once
// computed (migration 0009); the records one queue page shows, by turn_id;
// and the turns two runs judged differently, a page at a time.

// QueuePage is how many verdict rows one EachQueueRow query reads.
const QueuePage = 2000

// MaxQueueBody caps one stored queue's JSON (PutReviewQueues): a queue is
// bounded by what it shows, so a larger one is a bug, not a big run.
const MaxQueueBody = 16 << 20

// QueueRow is what the review queues read of one verdict row: its seq and a
// record with only TurnID, CharacterID, Verdict and OffCanonEntities set
// (from the row's columns and the record's off_canon_entities), and the
// row's reply_text column — the judged turn's reply_text as RunWriter.Add
// stored it, nil for NULL.
type QueueRow struct {
	Seq    int
	Record persona.Record
	Reply  *string
}

// EachQueueRow calls fn with every row of the committed run in run order,
// read in keyset pages of QueuePage rows (no cursor stays open between
// pages, as for RunRecords). fn's row is reused: it must not keep it. It
// returns the number of rows read, stops at fn's first error and returns
// it; ErrNotFound when the run does not exist or is not committed.
func (db *DB) EachQueueRow(ctx context.Context, runID int64, fn func(*QueueRow) error) (int, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return 0, err
	}
	n, after := 0, -1
	var row QueueRow
	for {
		rows, err := db.sql.QueryContext(ctx, `SELECT seq, turn_id, character_id, verdict,
    json_extract(record, '$.off_canon_entities'), reply_text FROM verdict WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
			runID, after, QueuePage)
		if err != nil {
			return n, fmt.Errorf("store: queue rows of run %d: %w", runID, err)
		}
		got := 0
		for rows.Next() {
			var names, reply sql.NullString
			var verdict string
			row.Record = persona.Record{}
			if err := rows.Scan(&row.Seq, &row.Record.TurnID, &row.Record.CharacterID, &verdict, &names, &reply); err != nil {
				rows.Close()
				return n, fmt.Errorf("store: queue rows of run %d: %w", runID, err)
			}
			row.Record.Verdict = persona.Verdict(verdict)
			if names.Valid && names.String != "[]" {
				if err := json.Unmarshal([]byte(names.String), &row.Record.OffCanonEntities); err != nil {
					rows.Close()
					return n, fmt.Errorf("store: record %d of run %d: off_canon_entities: %w", row.Seq, runID, err)
				}
			}
			row.Reply = nil
			if reply.Valid {
				row.Reply = &reply.String
			}
			after = row.Seq
			got++
			n++
			if err := fn(&row); err != nil {
				rows.Close()
				return n, err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return n, fmt.Errorf("store: queue rows of run %d: %w", runID, err)
		}
		if got < QueuePage {
			return n, nil
		}
	}
}

// PutReviewQueues stores, replacing, the JSON of each queue of a run (one
// row per store.Queue), computed from its first records verdict rows, in
// one transaction (retried when busy, as decisions are). ErrInvalid for a
// queue that is not one of the three, a body that is not JSON or one over
// MaxQueueBody; ErrNotFound when the run does not exist.
func (db *DB) PutReviewQueues(ctx context.Context, runID int64, records int, bodies map[Queue][]byte) error {
	for q, b := range bodies {
		switch {
		case !q.Valid():
			return fmt.Errorf("%w: review queue %q", ErrInvalid, q)
		case len(b) > MaxQueueBody:
			return fmt.Errorf("%w: review queue %s of run %d: %d bytes (at most %d)", ErrInvalid, q, runID, len(b), MaxQueueBody)
		case !json.Valid(b):
			return fmt.Errorf("%w: review queue %s of run %d: not JSON", ErrInvalid, q, runID)
		}
	}
	return db.inTxRetry(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM run WHERE id = ?", runID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: run %d", ErrNotFound, runID)
		} else if err != nil {
			return fmt.Errorf("store: review queues of run %d: %w", runID, err)
		}
		for q, b := range bodies {
			if _, err := tx.ExecContext(ctx, `INSERT INTO review_queue (run_id, queue, records, computed_at, body) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (run_id, queue) DO UPDATE SET records = excluded.records, computed_at = excluded.computed_at, body = excluded.body`,
				runID, string(q), records, db.stamp(), string(b)); err != nil {
				return fmt.Errorf("store: review queue %s of run %d: %w", q, runID, err)
			}
		}
		return nil
	})
}

// StoredQueue is one queue PutReviewQueues kept.
type StoredQueue struct {
	Records int    // verdict rows it was computed from
	Body    []byte // its JSON
}

// ReviewQueues returns the queues PutReviewQueues kept for a committed run
// (an empty map when none; a store older than migration 0009 has none).
// ErrNotFound when the run does not exist or is not committed.
func (db *DB) ReviewQueues(ctx context.Context, runID int64) (map[Queue]StoredQueue, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	out := map[Queue]StoredQueue{}
	if v, err := db.SchemaVersion(ctx); err != nil || v < 9 {
		return out, err
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT queue, records, body FROM review_queue WHERE run_id = ?", runID)
	if err != nil {
		return nil, fmt.Errorf("store: review queues of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var q, body string
		var sq StoredQueue
		if err := rows.Scan(&q, &sq.Records, &body); err != nil {
			return nil, fmt.Errorf("store: review queues of run %d: %w", runID, err)
		}
		sq.Body = []byte(body)
		out[Queue(q)] = sq
	}
	return out, rows.Err()
}

// EntriesByTurnID returns the run's records with the given turn_ids, keyed
// by turn_id, through the UNIQUE (run_id, turn_id) index: the records one
// queue page shows. Ids the run lacks are absent. ErrInvalid for more than
// MaxLookup ids; the run is not checked (an unknown run has no records).
// The rows come in no order (an ORDER BY seq would make SQLite walk the
// run's seq index instead of looking the ids up: 114 ms instead of 0.4 ms
// for 150 ids in a 100k-turn run).
func (db *DB) EntriesByTurnID(ctx context.Context, runID int64, ids []string) (map[string]Entry, error) {
	out := map[string]Entry{}
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > MaxLookup {
		return nil, fmt.Errorf("%w: %d turn ids (at most %d)", ErrInvalid, len(ids), MaxLookup)
	}
	es, err := db.scanEntries(ctx, runID, "SELECT seq, record, summary_source, summary_rejected_by FROM verdict WHERE run_id = ? AND turn_id IN ("+
		placeholders(len(ids))+")", append([]any{runID}, anys(ids)...))
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		out[e.Record.TurnID] = e
	}
	return out, nil
}

// VerdictChange is one turn two runs judged differently (VerdictChanges):
// the later run's seq, the verdicts before and after, and the later
// record's character, model and summary.
type VerdictChange struct {
	Seq                           int
	TurnID                        string
	Before, After                 persona.Verdict
	CharacterID, ModelID, Summary string
}

// VerdictChanges returns up to limit turns (by turn_id) that both runs
// judged and whose verdicts differ, in the later run's order from seq >
// after on (keyset: the next page starts after the last Seq; -1 is the
// start). A stored run has one record per turn_id (UNIQUE), so this is
// evalrun.CompareRuns over the two runs' records; each of the later run's
// rows is joined to the earlier run's by the (run_id, turn_id) index, so a
// page reads the later run up to its last change and nothing of either run
// is held. Neither run is checked (an unknown run has no records).
func (db *DB) VerdictChanges(ctx context.Context, earlier, later int64, after, limit int) ([]VerdictChange, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT b.seq, b.turn_id, a.verdict, b.verdict, b.character_id, b.model_id, b.summary
    FROM verdict b JOIN verdict a ON a.run_id = ? AND a.turn_id = b.turn_id
    WHERE b.run_id = ? AND b.seq > ? AND a.verdict <> b.verdict ORDER BY b.seq LIMIT ?`, earlier, later, after, max(limit, 0))
	if err != nil {
		return nil, fmt.Errorf("store: changes from run %d to %d: %w", earlier, later, err)
	}
	defer rows.Close()
	var out []VerdictChange
	for rows.Next() {
		var c VerdictChange
		var before, after string
		if err := rows.Scan(&c.Seq, &c.TurnID, &before, &after, &c.CharacterID, &c.ModelID, &c.Summary); err != nil {
			return nil, fmt.Errorf("store: changes from run %d to %d: %w", earlier, later, err)
		}
		c.Before, c.After = persona.Verdict(before), persona.Verdict(after)
		out = append(out, c)
	}
	return out, rows.Err()
}

// CountVerdictChanges counts VerdictChanges' turns, up to atMost: the count
// is exact when below atMost, else atMost ("atMost or more").
func (db *DB) CountVerdictChanges(ctx context.Context, earlier, later int64, atMost int) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM verdict b JOIN verdict a ON a.run_id = ? AND a.turn_id = b.turn_id
    WHERE b.run_id = ? AND a.verdict <> b.verdict LIMIT ?)`, earlier, later, max(atMost, 0)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: changes from run %d to %d: %w", earlier, later, err)
	}
	return n, nil
}
