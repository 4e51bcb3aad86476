package store

// CRYSTAL score runs (spec crystal.md; issue 16 item 3): a scored table of
// crystal/report saved whole, so `crystal score --db` and the screen's
// upload survive a restart, and its per-item evidence paged with
// LIMIT/OFFSET. Tables crystal_run and crystal_evidence (migration 0003).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"evident/crystal"
	"evident/crystal/report"
)

// CrystalRunMeta names a CRYSTAL run being saved: Name is a title for lists
// (required, non-blank); Source says where the references and predictions
// came from (file names, "embedded sample"); may be empty.
type CrystalRunMeta struct {
	Name   string
	Source string
}

// CrystalRunInfo is a saved CRYSTAL run's summary: its id (1, 2, … in save
// order), meta, the time it was saved (UTC, the store's clock), the table's
// profile and similarity name, how many items and models, and the table's
// JSON form (report.Table.Summary, as `crystal score --json` prints it).
type CrystalRunInfo struct {
	ID         int64
	Name       string
	Source     string
	Created    time.Time
	Profile    crystal.Profile
	Similarity string
	Items      int
	Models     int
	Report     report.Summary
}

// crystalInputs is the JSON of crystal_run.inputs.
type crystalInputs struct {
	Items []crystal.Item `json:"items"`
	Runs  []report.Run   `json:"runs"`
}

// SaveCrystalRun saves table t, scored from items and runs (the ones passed
// to report.Score), in one transaction: the run row (meta, t's summary JSON,
// t itself and the inputs) and one evidence row per model × item
// (t.Evidence, models in table order, items in input order). It returns the
// saved run's summary. ErrInvalid for a blank name; nothing is saved on any
// error.
func (db *DB) SaveCrystalRun(ctx context.Context, meta CrystalRunMeta, items []crystal.Item, runs []report.Run, t report.Table) (CrystalRunInfo, error) {
	if strings.TrimSpace(meta.Name) == "" {
		return CrystalRunInfo{}, fmt.Errorf("%w: a CRYSTAL run needs a name", ErrInvalid)
	}
	sum := t.Summary()
	rep, err := json.Marshal(sum)
	if err != nil {
		return CrystalRunInfo{}, fmt.Errorf("store: crystal run report: %w", err)
	}
	tab, err := json.Marshal(t)
	if err != nil {
		return CrystalRunInfo{}, fmt.Errorf("store: crystal run table: %w", err)
	}
	in, err := json.Marshal(crystalInputs{Items: items, Runs: runs})
	if err != nil {
		return CrystalRunInfo{}, fmt.Errorf("store: crystal run inputs: %w", err)
	}
	created := db.stamp()
	var id int64
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO crystal_run (name, source, created_at, profile, similarity, items, models, report, tables, inputs)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, meta.Name, meta.Source, created, string(t.Profile), t.Similarity,
			t.Items, len(t.Rows), string(rep), string(tab), string(in))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, "INSERT INTO crystal_evidence (run_id, seq, model, item_id, evidence) VALUES (?, ?, ?, ?, ?)")
		if err != nil {
			return err
		}
		defer st.Close()
		for seq, e := range t.Evidence(items, runs) {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, id, seq, e.Model, e.ID, string(b)); err != nil {
				return fmt.Errorf("model %s item %s: %w", e.Model, e.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return CrystalRunInfo{}, fmt.Errorf("store: save crystal run: %w", err)
	}
	return db.CrystalRun(ctx, id)
}

const crystalRunColumns = "id, name, source, created_at, profile, similarity, items, models, report"

func scanCrystalRun(s scanner) (CrystalRunInfo, error) {
	var r CrystalRunInfo
	var created, rep, profile string
	if err := s.Scan(&r.ID, &r.Name, &r.Source, &created, &profile, &r.Similarity, &r.Items, &r.Models, &rep); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return r, err
		}
		return r, fmt.Errorf("store: crystal run: %w", err)
	}
	r.Profile = crystal.Profile(profile)
	var err error
	if r.Created, err = parseTime(created); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(rep), &r.Report); err != nil {
		return r, fmt.Errorf("store: crystal run %d report: %w", r.ID, err)
	}
	return r, nil
}

// CrystalRuns lists the saved CRYSTAL runs, newest first.
func (db *DB) CrystalRuns(ctx context.Context) ([]CrystalRunInfo, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+crystalRunColumns+" FROM crystal_run ORDER BY id DESC")
	if err != nil {
		return nil, fmt.Errorf("store: crystal runs: %w", err)
	}
	defer rows.Close()
	var out []CrystalRunInfo
	for rows.Next() {
		r, err := scanCrystalRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// CrystalRun returns one saved CRYSTAL run's summary, or ErrNotFound.
func (db *DB) CrystalRun(ctx context.Context, id int64) (CrystalRunInfo, error) {
	r, err := scanCrystalRun(db.sql.QueryRowContext(ctx, "SELECT "+crystalRunColumns+" FROM crystal_run WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return CrystalRunInfo{}, fmt.Errorf("%w: crystal run %d", ErrNotFound, id)
	}
	return r, err
}

// CrystalEvidence returns up to limit evidence rows of run id from offset
// (0-based, in table order: every item of the first model, then the next),
// and the run's total number of rows. A page past the end is empty.
// ErrNotFound when the run does not exist; ErrInvalid for limit < 1 or
// offset < 0. A skipped item's null step scores read back as zeros (read
// Skipped).
func (db *DB) CrystalEvidence(ctx context.Context, id int64, limit, offset int) ([]report.Evidence, int, error) {
	if limit < 1 || offset < 0 {
		return nil, 0, fmt.Errorf("%w: crystal evidence page limit %d offset %d", ErrInvalid, limit, offset)
	}
	var total int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM crystal_evidence WHERE run_id = ?", id).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: crystal evidence of run %d: %w", id, err)
	}
	if total == 0 {
		if _, err := db.CrystalRun(ctx, id); err != nil {
			return nil, 0, err
		}
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT seq, evidence FROM crystal_evidence WHERE run_id = ? ORDER BY seq LIMIT ? OFFSET ?", id, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: crystal evidence of run %d: %w", id, err)
	}
	defer rows.Close()
	out := []report.Evidence{}
	for rows.Next() {
		var seq int
		var b string
		if err := rows.Scan(&seq, &b); err != nil {
			return nil, 0, fmt.Errorf("store: crystal evidence of run %d: %w", id, err)
		}
		var e report.Evidence
		if err := json.Unmarshal([]byte(b), &e); err != nil {
			return nil, 0, fmt.Errorf("store: crystal run %d evidence row %d: %w", id, seq, err)
		}
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// CrystalTable returns what run id was scored from and the full table
// (every model's per-item scores), as saved: enough to show the run again
// without rescoring. ErrNotFound when the run does not exist.
func (db *DB) CrystalTable(ctx context.Context, id int64) ([]crystal.Item, []report.Run, report.Table, error) {
	var tab, in string
	err := db.sql.QueryRowContext(ctx, "SELECT tables, inputs FROM crystal_run WHERE id = ?", id).Scan(&tab, &in)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, report.Table{}, fmt.Errorf("%w: crystal run %d", ErrNotFound, id)
	}
	if err != nil {
		return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d: %w", id, err)
	}
	var t report.Table
	if err := json.Unmarshal([]byte(tab), &t); err != nil {
		return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d table: %w", id, err)
	}
	var ci crystalInputs
	if err := json.Unmarshal([]byte(in), &ci); err != nil {
		return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d inputs: %w", id, err)
	}
	return ci.Items, ci.Runs, t, nil
}
