package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"evident/persona"
)

// Gold is one hand label: the verdict a creator gave a turn. Source says
// where the labels came from (a file name, a reviewer); LabelledAt is when
// PutGold stored it (ignored on input).
type Gold struct {
	TurnID     string          `json:"turn_id"`
	Verdict    persona.Verdict `json:"verdict"`
	Note       string          `json:"note,omitempty"`
	Source     string          `json:"source,omitempty"`
	LabelledAt time.Time       `json:"labelled_at"`
}

// PutGold stores labels in one transaction, replacing any earlier label of
// the same turn_id; each label's Source is set to source. Gold is keyed by
// turn_id alone (not per dataset or run). Fails with ErrInvalid, storing
// nothing, when a label has an empty TurnID or a verdict that is not one of
// the five. Retried on SQLITE_BUSY as Decide is.
func (db *DB) PutGold(ctx context.Context, labels []Gold, source string) error {
	for _, g := range labels {
		if g.TurnID == "" {
			return fmt.Errorf("%w: gold label without turn_id", ErrInvalid)
		}
		if !g.Verdict.Valid() {
			return fmt.Errorf("%w: gold label %q: verdict %q is not one of the five", ErrInvalid, g.TurnID, g.Verdict)
		}
	}
	now := db.stamp()
	return db.inTxRetry(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO gold (turn_id, verdict, note, source, labelled_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (turn_id) DO UPDATE SET verdict = excluded.verdict, note = excluded.note,
    source = excluded.source, labelled_at = excluded.labelled_at`)
		if err != nil {
			return fmt.Errorf("store: put gold: %w", err)
		}
		defer stmt.Close()
		for _, g := range labels {
			if _, err := stmt.ExecContext(ctx, g.TurnID, string(g.Verdict), g.Note, source, now); err != nil {
				return fmt.Errorf("store: put gold %q: %w", g.TurnID, err)
			}
		}
		return nil
	})
}

// Gold returns every stored label keyed by turn_id (an empty map when none).
func (db *DB) Gold(ctx context.Context) (map[string]Gold, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT turn_id, verdict, note, source, labelled_at FROM gold")
	if err != nil {
		return nil, fmt.Errorf("store: gold: %w", err)
	}
	defer rows.Close()
	out := map[string]Gold{}
	for rows.Next() {
		var g Gold
		var at string
		if err := rows.Scan(&g.TurnID, &g.Verdict, &g.Note, &g.Source, &at); err != nil {
			return nil, fmt.Errorf("store: gold: %w", err)
		}
		if g.LabelledAt, err = parseTime(at); err != nil {
			return nil, err
		}
		out[g.TurnID] = g
	}
	return out, rows.Err()
}
