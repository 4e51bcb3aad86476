package store

// CRYSTAL score runs (spec crystal.md; issue 16 item 3): a scored table of
// crystal/report saved whole, so `crystal score --db` and the screen's
// upload survive a restart, and its per-item evidence paged with
// LIMIT/OFFSET. Tables crystal_run and crystal_evidence (migration 0003).

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
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
	// Images are the run's image files keyed by the item image reference
	// they stand for (crystal.Item.Image, trimmed): the files uploaded with
	// the run, or read by `crystal score --db`. Saved in crystal_image
	// (schema 0007) with their type (report.ImageType, which must accept
	// them) and SHA-256; ignored under an older schema. May be nil.
	Images map[string][]byte
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
	// Paged: the run's items and scores are kept one row each (schema 0007),
	// so CrystalItems and CrystalItem read it page by page; false for runs
	// saved under an older schema, which only CrystalTable reads whole.
	Paged bool
}

// crystalInputs is the JSON of crystal_run.inputs.
type crystalInputs struct {
	Items []crystal.Item `json:"items"`
	Runs  []report.Run   `json:"runs"`
}

// SaveCrystalRun saves table t, scored from items and runs (the ones passed
// to report.Score), in one transaction: the run row (meta and t's summary
// JSON) and one evidence row per model × item (t.Evidence, models in table
// order, items in input order). Under schema 0007 it also saves one row per
// item and per model × item (CrystalItems, CrystalItem) and meta.Images,
// and keeps t without its per-item scores instead of the whole table and
// inputs; under an older schema it keeps t and the inputs whole. It returns
// the saved run's summary. ErrInvalid for a blank name or an image that
// report.ImageType refuses; nothing is saved on any error.
func (db *DB) SaveCrystalRun(ctx context.Context, meta CrystalRunMeta, items []crystal.Item, runs []report.Run, t report.Table) (CrystalRunInfo, error) {
	if strings.TrimSpace(meta.Name) == "" {
		return CrystalRunInfo{}, fmt.Errorf("%w: a CRYSTAL run needs a name", ErrInvalid)
	}
	paged, err := db.crystalPagesSchema(ctx)
	if err != nil {
		return CrystalRunInfo{}, err
	}
	sum := t.Summary()
	rep, err := json.Marshal(sum)
	if err != nil {
		return CrystalRunInfo{}, fmt.Errorf("store: crystal run report: %w", err)
	}
	kept, inputs := t, crystalInputs{Items: items, Runs: runs}
	if paged {
		kept.Rows = slices.Clone(t.Rows)
		for k := range kept.Rows {
			kept.Rows[k].Report.PerItem = nil
		}
	}
	tab, err := json.Marshal(kept)
	if err != nil {
		return CrystalRunInfo{}, fmt.Errorf("store: crystal run table: %w", err)
	}
	in := ""
	if !paged {
		b, err := json.Marshal(inputs)
		if err != nil {
			return CrystalRunInfo{}, fmt.Errorf("store: crystal run inputs: %w", err)
		}
		in = string(b)
	}
	for ref, b := range meta.Images {
		if ct, ok := report.ImageType(b); !ok {
			return CrystalRunInfo{}, fmt.Errorf("%w: image %q reads as %s, not PNG, JPEG, GIF or WebP", ErrInvalid, ref, ct)
		}
	}
	created := db.stamp()
	var id int64
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO crystal_run (name, source, created_at, profile, similarity, items, models, report, tables, inputs)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, meta.Name, meta.Source, created, string(t.Profile), t.Similarity,
			t.Items, len(t.Rows), string(rep), string(tab), in)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		if paged {
			// The evidence rows are rebuilt from the item and score rows
			// (CrystalEvidence), not kept twice.
			if _, err := tx.ExecContext(ctx, "UPDATE crystal_run SET paged = 1 WHERE id = ?", id); err != nil {
				return err
			}
			return saveCrystalPages(ctx, tx, id, meta.Images, items, runs, t)
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

// Outcome bits of crystal_score.outcome (migration 0007).
const (
	crystalMissing     = 1
	crystalCorrect     = 2
	crystalUnparseable = 4
	crystalUnmatched   = 8
)

// saveCrystalPages writes run id's crystal_item, crystal_score and
// crystal_image rows.
func saveCrystalPages(ctx context.Context, tx *sql.Tx, id int64, images map[string][]byte, items []crystal.Item, runs []report.Run, t report.Table) error {
	ist, err := tx.PrepareContext(ctx, "INSERT INTO crystal_item (run_id, pos, item_id, search, item) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer ist.Close()
	for pos, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return err
		}
		if _, err := ist.ExecContext(ctx, id, pos, it.ID, crystalSearchText(it), string(b)); err != nil {
			return fmt.Errorf("item %s: %w", it.ID, err)
		}
	}
	replies := make(map[string]map[string]crystal.Reply, len(runs))
	for _, r := range runs {
		replies[r.Model] = r.Replies
	}
	sst, err := tx.PrepareContext(ctx, "INSERT INTO crystal_score (run_id, pos, model_pos, outcome, f1, rule, score, reply) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer sst.Close()
	for k, row := range t.Rows {
		if len(row.Report.PerItem) != len(items) {
			return fmt.Errorf("model %s: %d item scores for %d items", row.Model, len(row.Report.PerItem), len(items))
		}
		for pos, sc := range row.Report.PerItem {
			b, err := json.Marshal(sc)
			if err != nil {
				return err
			}
			rb := []byte("null")
			if rep, ok := replies[row.Model][sc.ID]; ok && !sc.Missing {
				if rb, err = json.Marshal(rep); err != nil {
					return err
				}
			}
			if _, err := sst.ExecContext(ctx, id, pos, k, crystalOutcome(sc), sc.Match.F1, string(sc.Verdict.Rule), string(b), string(rb)); err != nil {
				return fmt.Errorf("model %s item %s: %w", row.Model, sc.ID, err)
			}
		}
	}
	refs := make([]string, 0, len(images))
	for ref := range images {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		b := images[ref]
		ct, _ := report.ImageType(b)
		sum := sha256.Sum256(b)
		if _, err := tx.ExecContext(ctx, "INSERT INTO crystal_image (run_id, name, sha256, content_type, data) VALUES (?, ?, ?, ?, ?)",
			id, ref, hex.EncodeToString(sum[:]), ct, b); err != nil {
			return fmt.Errorf("image %q: %w", ref, err)
		}
	}
	return nil
}

// crystalSearchText is what the screen's q filter searches in an item:
// id, question and gold answer, lower-cased (as the in-memory index does).
func crystalSearchText(it crystal.Item) string {
	return strings.ToLower(it.ID + "\n" + it.Question + "\n" + it.Answer)
}

func crystalOutcome(s crystal.ItemScore) int {
	o := 0
	if s.Missing {
		o |= crystalMissing
	}
	if s.Verdict.Correct {
		o |= crystalCorrect
	}
	if s.Unparseable {
		o |= crystalUnparseable
	}
	if !s.Missing && (len(s.Match.UnmatchedPred) > 0 || len(s.Match.UnmatchedRef) > 0) {
		o |= crystalUnmatched
	}
	return o
}

// crystalPagesSchema reports whether the store has migration 0007's tables.
func (db *DB) crystalPagesSchema(ctx context.Context) (bool, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'crystal_item'").Scan(&n); err != nil {
		return false, fmt.Errorf("store: crystal schema: %w", err)
	}
	return n == 1, nil
}

const crystalRunColumns = "id, name, source, created_at, profile, similarity, items, models, report"

// crystalRunSelect is the SELECT of crystal_run's summary columns, with
// paged read as 0 under a schema before 0007.
func (db *DB) crystalRunSelect(ctx context.Context) (string, error) {
	paged, err := db.crystalPagesSchema(ctx)
	if err != nil {
		return "", err
	}
	if paged {
		return "SELECT " + crystalRunColumns + ", paged FROM crystal_run", nil
	}
	return "SELECT " + crystalRunColumns + ", 0 FROM crystal_run", nil
}

func scanCrystalRun(s scanner) (CrystalRunInfo, error) {
	var r CrystalRunInfo
	var created, rep, profile string
	if err := s.Scan(&r.ID, &r.Name, &r.Source, &created, &profile, &r.Similarity, &r.Items, &r.Models, &rep, &r.Paged); err != nil {
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
	q, err := db.crystalRunSelect(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.sql.QueryContext(ctx, q+" ORDER BY id DESC")
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
	q, err := db.crystalRunSelect(ctx)
	if err != nil {
		return CrystalRunInfo{}, err
	}
	r, err := scanCrystalRun(db.sql.QueryRowContext(ctx, q+" WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return CrystalRunInfo{}, fmt.Errorf("%w: crystal run %d", ErrNotFound, id)
	}
	return r, err
}

// CrystalEvidence returns up to limit evidence rows of run id from offset
// (0-based, in table order: every item of the first model, then the next),
// and the run's total number of rows. A paged run's rows are built from its
// item and score rows (report.Table.Evidence on the page's items), the
// same records as when they were saved. A page past the end is empty.
// ErrNotFound when the run does not exist; ErrInvalid for limit < 1 or
// offset < 0. A skipped item's null step scores read back as zeros (read
// Skipped).
func (db *DB) CrystalEvidence(ctx context.Context, id int64, limit, offset int) ([]report.Evidence, int, error) {
	if limit < 1 || offset < 0 {
		return nil, 0, fmt.Errorf("%w: crystal evidence page limit %d offset %d", ErrInvalid, limit, offset)
	}
	if paged, err := db.crystalPagesSchema(ctx); err != nil {
		return nil, 0, err
	} else if paged {
		info, err := db.CrystalRun(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		if info.Paged {
			return db.crystalEvidencePaged(ctx, info, limit, offset)
		}
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
// without rescoring. A paged run (schema 0007) is rebuilt from its item and
// score rows; prefer CrystalItems and CrystalItem, which read one page.
// ErrNotFound when the run does not exist.
func (db *DB) CrystalTable(ctx context.Context, id int64) ([]crystal.Item, []report.Run, report.Table, error) {
	info, err := db.CrystalRun(ctx, id)
	if err != nil {
		return nil, nil, report.Table{}, err
	}
	var tab, in string
	if err := db.sql.QueryRowContext(ctx, "SELECT tables, inputs FROM crystal_run WHERE id = ?", id).Scan(&tab, &in); err != nil {
		return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d: %w", id, err)
	}
	var t report.Table
	if err := json.Unmarshal([]byte(tab), &t); err != nil {
		return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d table: %w", id, err)
	}
	if !info.Paged {
		var ci crystalInputs
		if err := json.Unmarshal([]byte(in), &ci); err != nil {
			return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d inputs: %w", id, err)
		}
		return ci.Items, ci.Runs, t, nil
	}
	items, err := db.crystalItemRows(ctx, id, "", 0, math.MaxInt)
	if err != nil {
		return nil, nil, report.Table{}, err
	}
	runs := make([]report.Run, len(t.Rows))
	for k := range t.Rows {
		runs[k] = report.Run{Model: t.Rows[k].Model, Replies: map[string]crystal.Reply{}}
		t.Rows[k].Report.PerItem = make([]crystal.ItemScore, len(items))
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT pos, model_pos, score, reply FROM crystal_score WHERE run_id = ? ORDER BY pos, model_pos", id)
	if err != nil {
		return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d scores: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		pos, k, sc, rep, err := scanCrystalScore(rows, id, len(items), len(t.Rows))
		if err != nil {
			return nil, nil, report.Table{}, err
		}
		t.Rows[k].Report.PerItem[pos] = sc
		if rep != nil {
			runs[k].Replies[sc.ID] = *rep
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, report.Table{}, fmt.Errorf("store: crystal run %d scores: %w", id, err)
	}
	out := make([]crystal.Item, len(items))
	for k, r := range items {
		out[k] = r.Item
	}
	return out, runs, t, nil
}

// scanCrystalScore reads one crystal_score row (pos, model_pos, score,
// reply), checking the positions against the run's sizes; the reply is
// nil for a missing prediction.
func scanCrystalScore(s scanner, id int64, items, models int) (int, int, crystal.ItemScore, *crystal.Reply, error) {
	var pos, k int
	var sb, rb string
	var sc crystal.ItemScore
	if err := s.Scan(&pos, &k, &sb, &rb); err != nil {
		return 0, 0, sc, nil, fmt.Errorf("store: crystal run %d scores: %w", id, err)
	}
	if pos < 0 || pos >= items || k < 0 || k >= models {
		return 0, 0, sc, nil, fmt.Errorf("store: crystal run %d: score row item %d model %d outside %d items × %d models", id, pos, k, items, models)
	}
	if err := json.Unmarshal([]byte(sb), &sc); err != nil {
		return 0, 0, sc, nil, fmt.Errorf("store: crystal run %d item %d model %d score: %w", id, pos, k, err)
	}
	var rep *crystal.Reply
	if err := json.Unmarshal([]byte(rb), &rep); err != nil {
		return 0, 0, sc, nil, fmt.Errorf("store: crystal run %d item %d model %d reply: %w", id, pos, k, err)
	}
	return pos, k, sc, rep, nil
}

// CrystalItemQuery selects one page of a paged run's items (the screen's
// index, issue 16 item 3). Model is a model's position in the table (-1:
// any model); Outcome one of "", "correct", "wrong", "missing",
// "unparseable", "unmatched" (an item matches when one of the chosen
// models' cells has it; "wrong" is answered but not correct, "unmatched"
// answered with some step unmatched); Q a text the item's id, question or
// gold answer contains (case-insensitive, as strings.ToLower folds).
// After and Before are keyset cursors (item positions, -1 when unset):
// the page holds the first Limit matching items after After, or the last
// Limit before Before; neither set: the first page.
type CrystalItemQuery struct {
	Model         int
	Outcome       string
	Q             string
	After, Before int
	Limit         int
}

// CrystalItemRow is one item of a page: its position in the run's items,
// the item, and one cell per model in table order.
type CrystalItemRow struct {
	Pos   int
	Item  crystal.Item
	Cells []CrystalCell
}

// CrystalCell is one model's outcome on an item, as the index shows it:
// the outcome flags, Match F1 and the judge's rule.
type CrystalCell struct {
	Missing, Correct, Unparseable, Unmatched bool
	F1                                       float64
	Rule                                     crystal.Rule
}

// CrystalItemsPage is one page of CrystalItems: Rows in item order,
// Matching the number of items the filter matches in all, Before how many
// of them come before Rows[0] (so the page number is Before/Limit + 1),
// and whether matching items exist past the page's ends.
type CrystalItemsPage struct {
	Rows             []CrystalItemRow
	Matching, Before int
	HasPrev, HasNext bool
}

// crystalOutcomeSQL is the condition on crystal_score.outcome for each
// filter value.
var crystalOutcomeSQL = map[string]string{
	"correct":     "s.outcome & 2 != 0",
	"wrong":       "s.outcome & 3 = 0",
	"missing":     "s.outcome & 1 != 0",
	"unparseable": "s.outcome & 4 != 0",
	"unmatched":   "s.outcome & 8 != 0",
}

// CrystalItems returns one page of paged run id's items (see
// CrystalItemQuery), read with a keyset query on the item position.
// ErrNotFound when the run does not exist; ErrInvalid for a run saved
// before schema 0007 (not paged: read it with CrystalTable), a Limit < 1, an
// unknown Outcome or a Model outside the table.
func (db *DB) CrystalItems(ctx context.Context, id int64, q CrystalItemQuery) (CrystalItemsPage, error) {
	info, err := db.CrystalRun(ctx, id)
	if err != nil {
		return CrystalItemsPage{}, err
	}
	if !info.Paged {
		return CrystalItemsPage{}, fmt.Errorf("%w: crystal run %d was saved before its items were kept page by page", ErrInvalid, id)
	}
	cond, ok := crystalOutcomeSQL[q.Outcome]
	if q.Limit < 1 || (!ok && q.Outcome != "") || q.Model < -1 || q.Model >= info.Models {
		return CrystalItemsPage{}, fmt.Errorf("%w: crystal items page limit %d outcome %q model %d", ErrInvalid, q.Limit, q.Outcome, q.Model)
	}
	where := "i.run_id = ?"
	args := []any{id}
	if q.Q != "" {
		where += " AND instr(i.search, ?) > 0"
		args = append(args, strings.ToLower(q.Q))
	}
	if q.Outcome != "" {
		sub := "EXISTS (SELECT 1 FROM crystal_score s WHERE s.run_id = i.run_id AND s.pos = i.pos AND " + cond
		if q.Model >= 0 {
			sub += " AND s.model_pos = ?"
			args = append(args, q.Model)
		}
		where += " AND " + sub + ")"
	}
	count := func(extra string, xargs ...any) (int, error) {
		var n int
		err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM crystal_item i WHERE "+where+extra, append(slices.Clone(args), xargs...)...).Scan(&n)
		if err != nil {
			return 0, fmt.Errorf("store: crystal run %d items: %w", id, err)
		}
		return n, nil
	}
	var p CrystalItemsPage
	if p.Matching, err = count(""); err != nil {
		return p, err
	}
	page := "SELECT i.pos, i.item FROM crystal_item i WHERE " + where
	pargs := slices.Clone(args)
	backward := q.Before >= 0 && q.After < 0
	switch {
	case backward:
		page += " AND i.pos < ? ORDER BY i.pos DESC LIMIT ?"
		pargs = append(pargs, q.Before, q.Limit+1)
	case q.After >= 0:
		page += " AND i.pos > ? ORDER BY i.pos LIMIT ?"
		pargs = append(pargs, q.After, q.Limit+1)
	default:
		page += " ORDER BY i.pos LIMIT ?"
		pargs = append(pargs, q.Limit+1)
	}
	rows, err := db.sql.QueryContext(ctx, page, pargs...)
	if err != nil {
		return p, fmt.Errorf("store: crystal run %d items: %w", id, err)
	}
	for rows.Next() {
		var r CrystalItemRow
		var b string
		if err := rows.Scan(&r.Pos, &b); err != nil {
			rows.Close()
			return p, fmt.Errorf("store: crystal run %d items: %w", id, err)
		}
		if err := json.Unmarshal([]byte(b), &r.Item); err != nil {
			rows.Close()
			return p, fmt.Errorf("store: crystal run %d item %d: %w", id, r.Pos, err)
		}
		p.Rows = append(p.Rows, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("store: crystal run %d items: %w", id, err)
	}
	more := len(p.Rows) > q.Limit
	if more {
		p.Rows = p.Rows[:q.Limit]
	}
	if backward {
		slices.Reverse(p.Rows)
		p.HasPrev, p.HasNext = more, true
	} else {
		p.HasPrev, p.HasNext = q.After >= 0 && len(p.Rows) > 0, more
	}
	if len(p.Rows) == 0 {
		return p, nil
	}
	if p.Before, err = count(" AND i.pos < ?", p.Rows[0].Pos); err != nil {
		return p, err
	}
	p.HasPrev = p.Before > 0
	if err := db.crystalCells(ctx, id, info.Models, p.Rows); err != nil {
		return p, err
	}
	return p, nil
}

// crystalCells fills the cells of rows (at most a page, non-empty) from
// crystal_score.
func (db *DB) crystalCells(ctx context.Context, id int64, models int, rows []CrystalItemRow) error {
	at := make(map[int]int, len(rows))
	for k := range rows {
		at[rows[k].Pos] = k
		rows[k].Cells = make([]CrystalCell, models)
	}
	// The page's positions only: a filtered page may spread over the whole
	// run.
	args := []any{id}
	for _, r := range rows {
		args = append(args, r.Pos)
	}
	rs, err := db.sql.QueryContext(ctx, "SELECT pos, model_pos, outcome, f1, rule FROM crystal_score WHERE run_id = ? AND pos IN (?"+
		strings.Repeat(", ?", len(rows)-1)+")", args...)
	if err != nil {
		return fmt.Errorf("store: crystal run %d cells: %w", id, err)
	}
	defer rs.Close()
	for rs.Next() {
		var pos, k, o int
		var c CrystalCell
		var rule string
		if err := rs.Scan(&pos, &k, &o, &c.F1, &rule); err != nil {
			return fmt.Errorf("store: crystal run %d cells: %w", id, err)
		}
		r, ok := at[pos]
		if !ok || k < 0 || k >= models {
			continue
		}
		c.Missing, c.Correct, c.Unparseable, c.Unmatched = o&crystalMissing != 0, o&crystalCorrect != 0, o&crystalUnparseable != 0, o&crystalUnmatched != 0
		c.Rule = crystal.Rule(rule)
		rows[r].Cells[k] = c
	}
	return rs.Err()
}

// crystalItemRows reads run id's items from position from on, at most
// limit, or the one with itemID when itemID is not "".
func (db *DB) crystalItemRows(ctx context.Context, id int64, itemID string, from, limit int) ([]CrystalItemRow, error) {
	q, args := "SELECT pos, item FROM crystal_item WHERE run_id = ? AND pos >= ? ORDER BY pos LIMIT ?", []any{id, from, limit}
	if itemID != "" {
		q, args = "SELECT pos, item FROM crystal_item WHERE run_id = ? AND item_id = ?", []any{id, itemID}
	}
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: crystal run %d items: %w", id, err)
	}
	defer rows.Close()
	var out []CrystalItemRow
	for rows.Next() {
		var r CrystalItemRow
		var b string
		if err := rows.Scan(&r.Pos, &b); err != nil {
			return nil, fmt.Errorf("store: crystal run %d items: %w", id, err)
		}
		if err := json.Unmarshal([]byte(b), &r.Item); err != nil {
			return nil, fmt.Errorf("store: crystal run %d item %d: %w", id, r.Pos, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// CrystalItemDetail is one item of a paged run with every model's score
// and reply (table order): what the screen's item page shows. Replies[k]
// is nil when model k has no prediction. PrevID and NextID are the
// neighbouring items' ids ("" at the ends).
type CrystalItemDetail struct {
	Pos            int
	Item           crystal.Item
	PrevID, NextID string
	Scores         []crystal.ItemScore
	Replies        []*crystal.Reply
}

// CrystalItem reads one item of paged run id by its id: the item row, its
// models' score rows and its neighbours' ids. ErrNotFound when the run or
// the item does not exist; ErrInvalid for a run that is not paged.
func (db *DB) CrystalItem(ctx context.Context, id int64, itemID string) (CrystalItemDetail, error) {
	info, err := db.CrystalRun(ctx, id)
	if err != nil {
		return CrystalItemDetail{}, err
	}
	if !info.Paged {
		return CrystalItemDetail{}, fmt.Errorf("%w: crystal run %d was saved before its items were kept page by page", ErrInvalid, id)
	}
	rows, err := db.crystalItemRows(ctx, id, itemID, 0, 1)
	if err != nil {
		return CrystalItemDetail{}, err
	}
	if len(rows) == 0 {
		return CrystalItemDetail{}, fmt.Errorf("%w: crystal run %d item %q", ErrNotFound, id, itemID)
	}
	d := CrystalItemDetail{Pos: rows[0].Pos, Item: rows[0].Item, Scores: make([]crystal.ItemScore, info.Models), Replies: make([]*crystal.Reply, info.Models)}
	for _, nb := range []struct {
		pos int
		out *string
	}{{d.Pos - 1, &d.PrevID}, {d.Pos + 1, &d.NextID}} {
		err := db.sql.QueryRowContext(ctx, "SELECT item_id FROM crystal_item WHERE run_id = ? AND pos = ?", id, nb.pos).Scan(nb.out)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return CrystalItemDetail{}, fmt.Errorf("store: crystal run %d items: %w", id, err)
		}
	}
	rs, err := db.sql.QueryContext(ctx, "SELECT pos, model_pos, score, reply FROM crystal_score WHERE run_id = ? AND pos = ?", id, d.Pos)
	if err != nil {
		return CrystalItemDetail{}, fmt.Errorf("store: crystal run %d scores: %w", id, err)
	}
	defer rs.Close()
	for rs.Next() {
		_, k, sc, rep, err := scanCrystalScore(rs, id, info.Items, info.Models)
		if err != nil {
			return CrystalItemDetail{}, err
		}
		d.Scores[k], d.Replies[k] = sc, rep
	}
	return d, rs.Err()
}

// CrystalImage returns the image saved with run id for an item image
// reference (CrystalRunMeta.Images) and its type. ErrNotFound when there is
// none (or the schema predates 0007).
func (db *DB) CrystalImage(ctx context.Context, id int64, ref string) ([]byte, string, error) {
	paged, err := db.crystalPagesSchema(ctx)
	if err != nil {
		return nil, "", err
	}
	if !paged {
		return nil, "", fmt.Errorf("%w: crystal run %d image %q", ErrNotFound, id, ref)
	}
	var b []byte
	var ct string
	err = db.sql.QueryRowContext(ctx, "SELECT data, content_type FROM crystal_image WHERE run_id = ? AND name = ?", id, strings.TrimSpace(ref)).Scan(&b, &ct)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", fmt.Errorf("%w: crystal run %d image %q", ErrNotFound, id, ref)
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: crystal run %d image: %w", id, err)
	}
	return b, ct, nil
}

// CrystalPaged reports whether this store keeps new CRYSTAL runs page by
// page (migration 0007 applied): then SaveCrystalRun keeps the items,
// scores and images that CrystalItems, CrystalItem and CrystalImage read.
func (db *DB) CrystalPaged(ctx context.Context) (bool, error) {
	return db.crystalPagesSchema(ctx)
}

// crystalEvidencePaged is CrystalEvidence of a paged run: the rows from
// offset, one model's stretch of items at a time.
func (db *DB) crystalEvidencePaged(ctx context.Context, info CrystalRunInfo, limit, offset int) ([]report.Evidence, int, error) {
	total := info.Items * info.Models
	out := []report.Evidence{}
	for seq := offset; seq < min(offset+limit, total); {
		k, lo := seq/info.Items, seq%info.Items
		hi := min(lo+(offset+limit-seq), info.Items) // exclusive
		items, err := db.crystalItemRows(ctx, info.ID, "", lo, hi-lo)
		if err != nil {
			return nil, 0, err
		}
		if len(items) != hi-lo {
			return nil, 0, fmt.Errorf("store: crystal run %d: %d item rows from %d, want %d", info.ID, len(items), lo, hi-lo)
		}
		model := info.Report.Models[k].Model
		row := report.Row{Model: model, Report: crystal.Report{Similarity: info.Report.Similarity, PerItem: make([]crystal.ItemScore, hi-lo)}}
		run := report.Run{Model: model, Replies: map[string]crystal.Reply{}}
		rows, err := db.sql.QueryContext(ctx, "SELECT pos, model_pos, score, reply FROM crystal_score WHERE run_id = ? AND pos >= ? AND pos < ? AND model_pos = ?",
			info.ID, lo, hi, k)
		if err != nil {
			return nil, 0, fmt.Errorf("store: crystal run %d scores: %w", info.ID, err)
		}
		n := 0
		for rows.Next() {
			pos, _, sc, rep, err := scanCrystalScore(rows, info.ID, info.Items, info.Models)
			if err != nil {
				rows.Close()
				return nil, 0, err
			}
			row.Report.PerItem[pos-lo] = sc
			if rep != nil {
				run.Replies[sc.ID] = *rep
			}
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, fmt.Errorf("store: crystal run %d scores: %w", info.ID, err)
		}
		if n != hi-lo {
			return nil, 0, fmt.Errorf("store: crystal run %d model %s: %d score rows from item %d, want %d", info.ID, model, n, lo, hi-lo)
		}
		its := make([]crystal.Item, len(items))
		for j, r := range items {
			its[j] = r.Item
		}
		out = append(out, report.Table{Rows: []report.Row{row}}.Evidence(its, []report.Run{run})...)
		seq += hi - lo
	}
	return out, total, nil
}
