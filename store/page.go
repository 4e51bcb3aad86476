package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"evident/persona"
)

// Lookups the screen makes per page instead of holding a run in memory
// (issue 13): each reads a bounded number of rows through an index.

// MaxLookup caps the ids one lookup (TurnsByID, GoldOf) accepts; callers ask
// for one page's worth.
const MaxLookup = 1000

// TurnsByID returns the dataset's chat_turn rows with the given turn_ids,
// keyed by turn_id, through the UNIQUE (dataset_id, turn_id) index; ids not
// in the dataset are absent. ErrInvalid for more than MaxLookup ids.
func (db *DB) TurnsByID(ctx context.Context, datasetID int64, ids []string) (map[string]persona.Turn, error) {
	out := map[string]persona.Turn{}
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > MaxLookup {
		return nil, fmt.Errorf("%w: %d turn ids (at most %d)", ErrInvalid, len(ids), MaxLookup)
	}
	q := "SELECT " + turnColumns + " FROM chat_turn WHERE dataset_id = ? AND turn_id IN (" + placeholders(len(ids)) + ")"
	args := append([]any{datasetID}, anys(ids)...)
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: turns of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t persona.Turn
		if _, err := scanTurn(rows, &t, false); err != nil {
			return nil, fmt.Errorf("store: turns of dataset %d: %w", datasetID, err)
		}
		out[t.TurnID] = t
	}
	return out, rows.Err()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// GoldOf returns the stored labels of the given turn_ids, keyed by turn_id
// (absent when unlabelled). ErrInvalid for more than MaxLookup ids.
func (db *DB) GoldOf(ctx context.Context, ids []string) (map[string]Gold, error) {
	out := map[string]Gold{}
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > MaxLookup {
		return nil, fmt.Errorf("%w: %d turn ids (at most %d)", ErrInvalid, len(ids), MaxLookup)
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT turn_id, verdict, note, source, labelled_at FROM gold WHERE turn_id IN ("+
		placeholders(len(ids))+")", anys(ids)...)
	if err != nil {
		return nil, fmt.Errorf("store: gold: %w", err)
	}
	defer rows.Close()
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

// GoldCount is the number of stored labels.
func (db *DB) GoldCount(ctx context.Context) (int, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM gold").Scan(&n); err != nil {
		return 0, fmt.Errorf("store: gold: %w", err)
	}
	return n, nil
}

// GoldRecords calls fn, in run order, with each record of the committed run
// whose turn_id has a gold label, and that label: the labels are read in
// turn_id order and each joined to the run by the UNIQUE (run_id, turn_id)
// index, so the cost grows with the labels, not the run; the matches (at
// most one per label) are then sorted by seq. ErrNotFound when the run does
// not exist.
func (db *DB) GoldRecords(ctx context.Context, runID int64, fn func(persona.Record, Gold) error) error {
	if _, err := db.Run(ctx, runID); err != nil {
		return err
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT v.record, g.turn_id, g.verdict, g.note, g.source, g.labelled_at
    FROM gold g JOIN verdict v ON v.run_id = ? AND v.turn_id = g.turn_id ORDER BY v.seq`, runID)
	if err != nil {
		return fmt.Errorf("store: gold of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var js, at string
		var g Gold
		if err := rows.Scan(&js, &g.TurnID, &g.Verdict, &g.Note, &g.Source, &at); err != nil {
			return fmt.Errorf("store: gold of run %d: %w", runID, err)
		}
		rec, err := decodeRecord([]byte(js))
		if err != nil {
			return fmt.Errorf("store: record %q of run %d: %w", g.TurnID, runID, err)
		}
		if g.LabelledAt, err = parseTime(at); err != nil {
			return err
		}
		if err := fn(rec, g); err != nil {
			return err
		}
	}
	return rows.Err()
}

// SeqAt returns the seq of the record at 0-based position offset among the
// run's records matching f (Limit, Offset, From and Until ignored), counted on the
// filter's index, so a "page N" link can start a keyset page; ok is false
// when fewer records match.
func (db *DB) SeqAt(ctx context.Context, runID int64, f Filter, offset int) (seq int, ok bool, err error) {
	f.Limit, f.Offset, f.From, f.Until = 0, 0, 0, 0
	where, args, pool, order, err := db.whereOf(ctx, runID, f)
	if err != nil {
		return 0, false, err
	}
	args = append(args, max(offset, 0))
	err = pool.QueryRowContext(ctx, "SELECT seq FROM verdict"+where+" ORDER BY "+order+" LIMIT 1 OFFSET ?", args...).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: records of run %d: %w", runID, err)
	}
	return seq, true, nil
}

// PromptEntries returns each model's first record (lowest seq) for one
// prompt_id (among the records of character, when not ""), in run order:
// the cells of one models-disagree prompt. The first seq per model is read
// from the verdict_by_prompt index (run_id, prompt_id, model_id, seq), so a
// prompt answered thousands of times costs one index range, not its
// records.
func (db *DB) PromptEntries(ctx context.Context, runID int64, promptID, character string) ([]Entry, error) {
	sub := "SELECT min(seq) FROM verdict WHERE run_id = ? AND prompt_id = ?"
	args := []any{runID, runID, promptID}
	if character != "" {
		sub += " AND character_id = ?"
		args = append(args, character)
	}
	q := "SELECT seq, record, summary_source, summary_rejected_by FROM verdict WHERE run_id = ? AND seq IN (" +
		sub + " GROUP BY model_id) ORDER BY seq"
	return db.scanEntries(ctx, runID, q, args)
}
