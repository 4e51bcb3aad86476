package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Queue names one of the seed's manual review queues.
type Queue string

// The three review queues (spec persona.md "Evaluation runner and manual
// review"). What Key and Value mean is the caller's convention, e.g.
// forbidden: turn_id → "confirm"|"reject"; offcanon: character_id/name →
// "add"|"block" (persona/runstore.OffCanonKey); ending: ending → "add"|"skip".
// The store only keeps them.
const (
	QueueForbidden Queue = "forbidden"
	QueueOffCanon  Queue = "offcanon"
	QueueEnding    Queue = "ending"
)

// Valid reports whether q is one of the three queues.
func (q Queue) Valid() bool {
	return q == QueueForbidden || q == QueueOffCanon || q == QueueEnding
}

// Decision is one review decision. Decide reads Queue, Key, Value, Who and
// Note and sets ID and At; Undo sets UndoneAt and UndoneBy. Its JSON form is
// one line of ExportDecisions.
type Decision struct {
	ID       int64      `json:"id"`
	Queue    Queue      `json:"queue"`
	Key      string     `json:"key"`
	Value    string     `json:"value"`
	Who      string     `json:"who"`
	Note     string     `json:"note,omitempty"`
	At       time.Time  `json:"at"`
	UndoneAt *time.Time `json:"undone_at"`
	UndoneBy string     `json:"undone_by,omitempty"`
}

// Decide stores a decision and returns its id. A later decision for the same
// (Queue, Key) supersedes it (see Decisions); nothing is overwritten. Fails
// with ErrInvalid for an unknown queue or an empty Key or Who, ErrReadOnly on
// a DB from OpenReadOnly. While an import or run writes, it waits for at
// most the batch being written, and SQLITE_BUSY is retried (inTxRetry).
func (db *DB) Decide(ctx context.Context, d Decision) (int64, error) {
	switch {
	case !d.Queue.Valid():
		return 0, fmt.Errorf("%w: review queue %q", ErrInvalid, d.Queue)
	case d.Key == "":
		return 0, fmt.Errorf("%w: decision without key", ErrInvalid)
	case d.Who == "":
		return 0, fmt.Errorf("%w: decision without who", ErrInvalid)
	}
	var id int64
	err := db.inTxRetry(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO decision (queue, key, value, who, note, decided_at)
    VALUES (?, ?, ?, ?, ?, ?)`, string(d.Queue), d.Key, d.Value, d.Who, d.Note, db.stamp())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: decide: %w", err)
	}
	return id, nil
}

// Undo marks decision id undone by who (never deletes it); the previous
// decision for its key, if any and not undone, becomes active again.
// ErrNotFound when there is no such decision, ErrAlreadyUndone when it was
// undone before, ErrInvalid when who is empty. Retried on SQLITE_BUSY as
// Decide is.
func (db *DB) Undo(ctx context.Context, id int64, who string) error {
	if who == "" {
		return fmt.Errorf("%w: undo without who", ErrInvalid)
	}
	return db.inTxRetry(ctx, func(tx *sql.Tx) error {
		var undone sql.NullString
		err := tx.QueryRowContext(ctx, "SELECT undone_at FROM decision WHERE id = ?", id).Scan(&undone)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: decision %d", ErrNotFound, id)
		}
		if err != nil {
			return fmt.Errorf("store: undo %d: %w", id, err)
		}
		if undone.Valid {
			return fmt.Errorf("%w: decision %d at %s", ErrAlreadyUndone, id, undone.String)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE decision SET undone_at = ?, undone_by = ? WHERE id = ?",
			db.stamp(), who, id); err != nil {
			return fmt.Errorf("store: undo %d: %w", id, err)
		}
		return nil
	})
}

const decisionColumns = "id, queue, key, value, who, note, decided_at, undone_at, undone_by"

// Decisions returns the active decisions of a queue ("" for all queues):
// for each (queue, key), the latest decision not undone. They come in the
// order they were made (id).
func (db *DB) Decisions(ctx context.Context, queue Queue) ([]Decision, error) {
	if queue != "" && !queue.Valid() {
		return nil, fmt.Errorf("%w: review queue %q", ErrInvalid, queue)
	}
	var out []Decision
	err := db.eachDecision(ctx, `SELECT `+decisionColumns+` FROM decision d
    WHERE (?1 = '' OR queue = ?1) AND undone_at IS NULL
      AND id = (SELECT max(id) FROM decision e WHERE e.queue = d.queue AND e.key = d.key AND e.undone_at IS NULL)
    ORDER BY id`, []any{string(queue)}, func(d Decision) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// ExportDecisions writes every decision ever made, undone ones included, as
// JSON Lines in the order they were made: one Decision object a line, with
// "at" and "undone_at" (null while active) as RFC 3339 timestamps.
func (db *DB) ExportDecisions(ctx context.Context, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return db.eachDecision(ctx, "SELECT "+decisionColumns+" FROM decision ORDER BY id", nil, func(d Decision) error {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("store: export decisions: %w", err)
		}
		return nil
	})
}

func (db *DB) eachDecision(ctx context.Context, q string, args []any, fn func(Decision) error) error {
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: decisions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d Decision
		var at string
		var undoneAt, undoneBy sql.NullString
		if err := rows.Scan(&d.ID, &d.Queue, &d.Key, &d.Value, &d.Who, &d.Note, &at, &undoneAt, &undoneBy); err != nil {
			return fmt.Errorf("store: decisions: %w", err)
		}
		if d.At, err = parseTime(at); err != nil {
			return err
		}
		if d.UndoneAt, err = parseNullTime(undoneAt); err != nil {
			return err
		}
		d.UndoneBy = undoneBy.String
		if err := fn(d); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Decision returns decision id as stored (undone or not), or ErrNotFound.
func (db *DB) Decision(ctx context.Context, id int64) (Decision, error) {
	var out *Decision
	err := db.eachDecision(ctx, "SELECT "+decisionColumns+" FROM decision WHERE id = ?", []any{id}, func(d Decision) error {
		out = &d
		return nil
	})
	if err != nil {
		return Decision{}, err
	}
	if out == nil {
		return Decision{}, fmt.Errorf("%w: decision %d", ErrNotFound, id)
	}
	return *out, nil
}

// DecisionLog returns every decision of a queue ("" for all queues), undone
// and superseded ones included, in the order they were made: the history
// behind Decisions.
func (db *DB) DecisionLog(ctx context.Context, queue Queue) ([]Decision, error) {
	if queue != "" && !queue.Valid() {
		return nil, fmt.Errorf("%w: review queue %q", ErrInvalid, queue)
	}
	var out []Decision
	err := db.eachDecision(ctx, "SELECT "+decisionColumns+" FROM decision WHERE (?1 = '' OR queue = ?1) ORDER BY id",
		[]any{string(queue)}, func(d Decision) error {
			out = append(out, d)
			return nil
		})
	return out, err
}
