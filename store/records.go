package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"evident/persona"
)

// Filter narrows the records of a run. Every non-empty field must hold
// (AND); the zero Filter matches every record.
type Filter struct {
	Character string          // character_id equals
	Model     string          // model_id equals
	Session   string          // session_id equals
	Verdict   persona.Verdict // verdict equals
	TurnID    string          // turn_id equals (one record: a shareable link to a turn)
	// Text must occur in the summary or the reply_text, both compared in
	// Unicode NFC (an NFD query finds NFC text and the reverse); ASCII
	// letters match case-insensitively, as SQLite's LIKE does. A query of 3
	// or more characters on a run with a search index (IndexRunText) is
	// served by the trigram index; a shorter one, or a run not indexed yet,
	// reads the run's rows (see search.go).
	Text string
	// From keeps records with seq ≥ From (keyset pagination: the next page
	// starts at the last seq shown + 1; 0 is the start of the run).
	From int
	// Until, when > 0, keeps records with seq < Until (a report's cap).
	Until int
	// Limit caps the rows returned (0: no cap); Offset skips rows first.
	// Both apply in run order and are ignored by CountByVerdict.
	Limit, Offset int
}

// whereWith renders the filter as a WHERE clause (with run_id) and its
// args. Text is checked on each row (evident_contains, search.go); match,
// when not "", adds the search index's candidates (an FTS5 expression;
// DB.whereOf decides), and none says the index holds no candidate.
func (f Filter) whereWith(runID int64, schema, match string, none bool) (string, []any) {
	clauses := []string{"run_id = ?"}
	args := []any{runID}
	for _, c := range []struct{ col, val string }{
		{"character_id", f.Character}, {"model_id", f.Model}, {"session_id", f.Session}, {"verdict", string(f.Verdict)},
		{"turn_id", f.TurnID},
	} {
		if c.val != "" {
			clauses = append(clauses, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if f.From > 0 {
		clauses = append(clauses, "seq >= ?")
		args = append(args, f.From)
	}
	if f.Until > 0 {
		clauses = append(clauses, "seq < ?")
		args = append(args, f.Until)
	}
	if f.Text != "" {
		q := normalizeQuery(f.Text)
		if none || strings.ContainsRune(q, 0) { // SQLite cuts text at NUL: such a query would match all
			clauses = append(clauses, "0")
			return " WHERE " + strings.Join(clauses, " AND "), args
		}
		if match != "" {
			clauses = append(clauses, "rowid IN (SELECT rowid FROM "+schema+".verdict_fts WHERE verdict_fts MATCH ?)")
			args = append(args, match)
		}
		clause, cargs := searchClause(q)
		clauses = append(clauses, clause)
		args = append(args, cargs...)
	}
	return " WHERE " + strings.Join(clauses, " AND "), args
}

// whereOf is f.whereWith using the run's search index when it is complete:
// the AND of trigrams for a query of three or more characters (ftsQuery),
// the indexed trigrams that begin with it for one of one or two on a run
// indexed padded (shortMatch), else no index (the rows are read). pool is
// where the query must run: the store, or for a search through the
// sidecar's index the pool that attaches it (side.go).
//
// order is how such a query reads the rows in run order: "seq", or "rowid"
// when the index gives the candidates. Within a run the two orders agree
// (a run's rows are inserted in seq order, each under a rowid above every
// row in the table then), and by rowid SQLite walks the index's
// candidates in that order and stops at a LIMIT, instead of checking
// every candidate (evident_contains) and sorting them by seq: 13,000 of
// them for a three-letter name at 1M turns, most of a page's 245 ms.
func (db *DB) whereOf(ctx context.Context, runID int64, f Filter) (where string, args []any, pool *sql.DB, order string, err error) {
	var match string
	var none bool
	ix := runIndex{pool: db.sql, schema: "main"}
	if f.Text != "" {
		if ix, err = db.textIndex(ctx, runID); err != nil {
			return "", nil, nil, "", err
		}
		q := normalizeQuery(f.Text)
		if m, ok := ftsQuery(q); ok && ix.indexed {
			match = m
		} else if !ok && ix.padded && q != "" && !strings.ContainsRune(q, 0) {
			need := db.SearchCap() // the most rows a count reads (textCross)
			if f.Limit > 0 {
				need = f.Limit + max(f.Offset, 0) // a page reads only its own
			}
			m, no, ok, err := db.shortMatch(ctx, ix, q, need)
			if err != nil {
				return "", nil, nil, "", err
			}
			if ok {
				match, none = m, no
			}
		}
		if match == "" {
			ix.pool = db.sql // rows read: the index is not needed
		}
	}
	where, args = f.whereWith(runID, ix.schema, match, none)
	order = "seq"
	if match != "" {
		order = "rowid"
	}
	return where, args, ix.pool, order, nil
}

// Entry is one stored verdict record with its position in the run and its
// sidecar. SummarySource is "" and SummaryRejectedBy "" when not set (NULL).
type Entry struct {
	Seq               int // 0-based position in the run (the order of Add)
	Record            persona.Record
	SummarySource     persona.SummarySource
	SummaryRejectedBy string
}

// Entries returns the run's records matching f, in run order, with their
// sidecars. ErrNotFound when the run does not exist or is not committed.
func (db *DB) Entries(ctx context.Context, runID int64, f Filter) ([]Entry, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	where, args, pool, order, err := db.whereOf(ctx, runID, f)
	if err != nil {
		return nil, err
	}
	q := "SELECT seq, record, summary_source, summary_rejected_by FROM verdict" + where + " ORDER BY " + order
	if f.Limit > 0 || f.Offset > 0 {
		limit := f.Limit
		if limit <= 0 {
			limit = -1
		}
		q += " LIMIT ? OFFSET ?"
		args = append(args, limit, max(f.Offset, 0))
	}
	return db.scanEntriesOn(ctx, pool, runID, q, args)
}

// scanEntries runs q (selecting seq, record, summary_source,
// summary_rejected_by) on the store and decodes its rows.
func (db *DB) scanEntries(ctx context.Context, runID int64, q string, args []any) ([]Entry, error) {
	return db.scanEntriesOn(ctx, db.sql, runID, q, args)
}

// scanEntriesOn is scanEntries on pool (whereOf's).
func (db *DB) scanEntriesOn(ctx context.Context, pool *sql.DB, runID int64, q string, args []any) ([]Entry, error) {
	rows, err := pool.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: records of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var js string
		var src, rej sql.NullString
		if err := rows.Scan(&e.Seq, &js, &src, &rej); err != nil {
			return nil, fmt.Errorf("store: records of run %d: %w", runID, err)
		}
		if e.Record, err = decodeRecord([]byte(js)); err != nil {
			return nil, fmt.Errorf("store: record %d of run %d: %w", e.Seq, runID, err)
		}
		e.SummarySource, e.SummaryRejectedBy = persona.SummarySource(src.String), rej.String
		out = append(out, e)
	}
	return out, rows.Err()
}

// Records returns the run's records matching f, in run order, each equal to
// the record given to RunWriter.Add (see decodeRecord for the one caveat on
// numbers). ErrNotFound when the run does not exist or is not committed.
func (db *DB) Records(ctx context.Context, runID int64, f Filter) ([]persona.Record, error) {
	es, err := db.Entries(ctx, runID, f)
	if err != nil {
		return nil, err
	}
	out := make([]persona.Record, len(es))
	for i, e := range es {
		out[i] = e.Record
	}
	return out, nil
}

// decodeRecord reads a stored record. JSON has one number type, so an
// evidence value with an agg that is a whole number comes back as int (as the
// judge writes counts, persona.Evidence); other numbers stay float64.
func decodeRecord(b []byte) (persona.Record, error) {
	var r persona.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return r, err
	}
	for i, e := range r.Evidence {
		if f, ok := e.Value.(float64); ok && e.Agg != "" && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			r.Evidence[i].Value = int(f)
		}
	}
	return r, nil
}

// CountByVerdict counts the run's records matching f (Limit and Offset
// ignored) per verdict; the map has an entry, possibly 0, for each of the
// five verdicts. A filter of character and model (and verdict) only is
// answered from the stored summary's Cross counts when the run has them.
// Under a text search (f.Text) only the first SearchCountCap matching
// records in run order are counted, and SearchCapped reports when more
// match (issue 13: bounded search counts). ErrNotFound when the run does
// not exist or is not committed.
func (db *DB) CountByVerdict(ctx context.Context, runID int64, f Filter) (map[persona.Verdict]int, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	if f.Text != "" {
		g := f
		g.Character, g.Model, g.Verdict = "", "", ""
		cross, _, ok, err := db.textCross(ctx, runID, g)
		if err != nil {
			return nil, err
		}
		if ok {
			out := zeroVerdicts()
			for _, gc := range groupCross(cross, f, "") {
				for v, n := range gc.ByVerdict {
					out[v] += n
				}
			}
			return out, nil
		}
	}
	if crossOnly(f) && (f.Character != "" || f.Model != "") { // a verdict alone is index-only already
		if gs, ok, err := db.fromCross(ctx, runID, f, ""); err != nil {
			return nil, err
		} else if ok {
			out := zeroVerdicts()
			for _, g := range gs {
				for v, n := range g.ByVerdict {
					out[v] += n
				}
			}
			return out, nil
		}
	}
	where, args, pool, _, err := db.whereOf(ctx, runID, f)
	if err != nil {
		return nil, err
	}
	rows, err := pool.QueryContext(ctx, "SELECT verdict, count(*) FROM verdict"+where+" GROUP BY verdict", args...)
	if err != nil {
		return nil, fmt.Errorf("store: count run %d: %w", runID, err)
	}
	defer rows.Close()
	out := map[persona.Verdict]int{}
	for _, v := range persona.Verdicts {
		out[v] = 0
	}
	for rows.Next() {
		var v string
		var n int
		if err := rows.Scan(&v, &n); err != nil {
			return nil, fmt.Errorf("store: count run %d: %w", runID, err)
		}
		out[persona.Verdict(v)] = n
	}
	return out, rows.Err()
}

// Facets are the distinct values of a run's filterable columns, each sorted
// (byte order), for the screen's filter dropdowns.
type Facets struct {
	Characters []string
	Models     []string
	Sessions   []string
}

// Facets returns the distinct character_id, model_id and session_id values
// of a run's records. ErrNotFound when the run does not exist or is not
// committed.
func (db *DB) Facets(ctx context.Context, runID int64) (Facets, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return Facets{}, err
	}
	var fs Facets
	for _, c := range []struct {
		col string
		dst *[]string
	}{{"character_id", &fs.Characters}, {"model_id", &fs.Models}, {"session_id", &fs.Sessions}} {
		vals, err := db.distinct(ctx, runID, c.col)
		if err != nil {
			return Facets{}, err
		}
		*c.dst = vals
	}
	return fs, nil
}

func (db *DB) distinct(ctx context.Context, runID int64, col string) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT DISTINCT "+col+" FROM verdict WHERE run_id = ? ORDER BY "+col, runID)
	if err != nil {
		return nil, fmt.Errorf("store: distinct %s of run %d: %w", col, runID, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("store: distinct %s of run %d: %w", col, runID, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SetSummarySource sets the sidecar of one record of a committed run (who
// wrote its summary; why a model's rewrite was rejected, "" for NULL).
// source "" clears it to NULL; other values than persona.SummaryRule and
// SummaryModel fail with ErrInvalid. ErrNotFound when the run has no record
// for turnID.
func (db *DB) SetSummarySource(ctx context.Context, runID int64, turnID string, source persona.SummarySource, rejectedBy string) error {
	var src, rej any
	switch source {
	case "":
	case persona.SummaryRule, persona.SummaryModel:
		src = string(source)
	default:
		return fmt.Errorf("%w: summary source %q", ErrInvalid, source)
	}
	if rejectedBy != "" {
		rej = rejectedBy
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE verdict SET summary_source = ?, summary_rejected_by = ?
    WHERE run_id = ? AND turn_id = ? AND run_id IN (SELECT id FROM run WHERE finished_at IS NOT NULL)`,
			src, rej, runID, turnID)
		if err != nil {
			return fmt.Errorf("store: set summary source of %q: %w", turnID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: record %q in run %d", ErrNotFound, turnID, runID)
		}
		return nil
	})
}
