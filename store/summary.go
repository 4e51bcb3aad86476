package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"evident/persona"
)

// GroupCount is how many records of a run have one value of a column
// (character_id or model_id), in total and per verdict (an entry, possibly
// 0, for each of the five verdicts).
type GroupCount struct {
	Value     string                  `json:"value"`
	Total     int                     `json:"total"`
	ByVerdict map[persona.Verdict]int `json:"by_verdict"`
}

// DisagreeStat describes the models-disagree list of one scope (the whole
// run, or one character): Shared prompts answered by at least two models,
// of which Prompts have differing verdicts among Models (sorted model_ids).
// The rule is evalrun.FindDisagreements'.
type DisagreeStat struct {
	Shared  int      `json:"shared"`
	Prompts int      `json:"prompts"`
	Models  []string `json:"models"`
}

// MaxSummarySessions caps RunSummary.Sessions: a run with more distinct
// session_ids stores only their number (the screen then asks for the id in a
// text field instead of a dropdown).
const MaxSummarySessions = 1000

// RunSummary is what the screen shows for a whole run, computed once when
// the run is judged (issue 13: the screen must not load a run into memory).
// The counting part (Records … Sessions) is CountRun's; Checks, ChecksErr,
// ModelReport and Disagree are computed by the caller (runstore) and kept
// here as given: Checks and ModelReport are opaque JSON the store does not
// read.
type RunSummary struct {
	RunID      int64     `json:"-"`
	ComputedAt time.Time `json:"-"` // set by PutRunSummary
	// Records counts the run's verdict rows; ByVerdict has the five verdicts.
	Records   int                     `json:"records"`
	ByVerdict map[persona.Verdict]int `json:"by_verdict"`
	// Characters and Models: one entry per distinct value, sorted (byte
	// order).
	Characters []GroupCount `json:"characters"`
	Models     []GroupCount `json:"models"`
	// SessionCount is the number of distinct session_ids; Sessions lists
	// them sorted when there are at most MaxSummarySessions, else nil.
	SessionCount int      `json:"session_count"`
	Sessions     []string `json:"sessions,omitempty"`
	// Checks is the ten automatic checks' report as JSON, or nil with
	// ChecksErr saying why they could not run.
	Checks    json.RawMessage `json:"checks,omitempty"`
	ChecksErr string          `json:"checks_err,omitempty"`
	// ModelReport is the per-model comparison as JSON (evalrun.ModelReport).
	ModelReport json.RawMessage `json:"model_report,omitempty"`
	// Disagree maps a scope ("" for the whole run, else a character_id) to
	// its models-disagree figures; the prompts themselves are in
	// PutDisagreements.
	Disagree map[string]DisagreeStat `json:"disagree,omitempty"`
	// Cross counts the records per (character_id, model_id) pair and
	// verdict, sorted by character then model; nil when the run has more
	// than MaxCrossPairs pairs (or for a summary stored before it).
	// CountByVerdict and CountBy answer a filter of character, model and
	// verdict alone from it instead of reading the run's index.
	Cross []CrossCount `json:"cross,omitempty"`
}

// CrossCount is the number of a run's records of one character and one
// model, per verdict (an entry, possibly 0, for each of the five).
type CrossCount struct {
	Character string                  `json:"character"`
	Model     string                  `json:"model"`
	ByVerdict map[persona.Verdict]int `json:"by_verdict"`
}

// MaxCrossPairs caps RunSummary.Cross.
const MaxCrossPairs = 10000

// CountRun computes the counting part of a run's summary with SQL (GROUP BY
// on the filter indexes, nothing held per record): Records, ByVerdict,
// Characters, Models, SessionCount, Sessions and Cross. It reads rows as committed
// so far, so it also serves a run still being written (a live run) when the
// caller passes committed=false; with committed=true ErrNotFound when the run
// is not committed.
func (db *DB) CountRun(ctx context.Context, runID int64, committed bool) (RunSummary, error) {
	if committed {
		if _, err := db.Run(ctx, runID); err != nil {
			return RunSummary{}, err
		}
	}
	s := RunSummary{RunID: runID, ByVerdict: zeroVerdicts()}
	var err error
	if s.Characters, err = db.groupCounts(ctx, runID, "character_id", Filter{}); err != nil {
		return RunSummary{}, err
	}
	if s.Models, err = db.groupCounts(ctx, runID, "model_id", Filter{}); err != nil {
		return RunSummary{}, err
	}
	for _, g := range s.Models {
		s.Records += g.Total
		for v, n := range g.ByVerdict {
			s.ByVerdict[v] += n
		}
	}
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT DISTINCT session_id FROM verdict WHERE run_id = ?)", runID).Scan(&s.SessionCount); err != nil {
		return RunSummary{}, fmt.Errorf("store: sessions of run %d: %w", runID, err)
	}
	if s.SessionCount <= MaxSummarySessions {
		if s.Sessions, err = db.distinct(ctx, runID, "session_id"); err != nil {
			return RunSummary{}, err
		}
	}
	if s.Cross, err = db.crossCounts(ctx, runID); err != nil {
		return RunSummary{}, err
	}
	return s, nil
}

// crossCounts counts the run's records per character, model and verdict
// (one read of verdict_by_character, which covers all three); nil beyond
// MaxCrossPairs pairs.
func (db *DB) crossCounts(ctx context.Context, runID int64) ([]CrossCount, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT character_id, model_id, verdict, count(*) FROM verdict WHERE run_id = ?
    GROUP BY character_id, model_id, verdict ORDER BY character_id, model_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: count run %d: %w", runID, err)
	}
	defer rows.Close()
	out := []CrossCount{}
	for rows.Next() {
		var c, m, v string
		var n int
		if err := rows.Scan(&c, &m, &v, &n); err != nil {
			return nil, fmt.Errorf("store: count run %d: %w", runID, err)
		}
		if len(out) == 0 || out[len(out)-1].Character != c || out[len(out)-1].Model != m {
			if len(out) == MaxCrossPairs {
				return nil, nil
			}
			out = append(out, CrossCount{Character: c, Model: m, ByVerdict: zeroVerdicts()})
		}
		out[len(out)-1].ByVerdict[persona.Verdict(v)] += n
	}
	return out, rows.Err()
}

// A search page counts its matches three times (per verdict, per
// character, per model: CountByVerdict and CountBy with the same filter),
// and under a text search each count checks candidate rows on their text.
// textCountCache keeps the per character × model × verdict counts of the
// last maxTextCounts text filters, so the three counts read the rows once.
// A committed run's rows never change (only their summary sidecar does), so
// an entry is never stale; a live run, which grows, is not cached.
const maxTextCounts = 32

// SearchCountCap is how many matching records the counts under a text
// search cover by default: CountByVerdict and CountBy count the first
// SearchCountCap records (in run order) that match a filter with Text, and
// SearchCapped reports when more match (issue 13: a one-letter query at
// 1,000,000 turns took 1.3 s to count exactly; the target is 300 ms).
const SearchCountCap = 10000

// SetSearchCountCap sets how many matching records the counts under a text
// search cover (n ≤ 0: SearchCountCap again) and forgets the cached text
// counts. For tests and for a machine that wants a tighter bound; safe to
// call while the DB serves, a search then counted under either cap.
func (db *DB) SetSearchCountCap(n int) {
	if n < 0 {
		n = 0
	}
	db.searchCap.Store(int64(n))
	db.textCounts.clear()
}

// SearchCap is the number of matching records the counts under a text
// search cover: SetSearchCountCap's, else SearchCountCap.
func (db *DB) SearchCap() int {
	if n := db.searchCap.Load(); n > 0 {
		return int(n)
	}
	return SearchCountCap
}

type textCountKey struct {
	runID int64
	f     Filter // Limit and Offset zeroed
}

// textCounts are the counts of one text filter: nil cross beyond
// MaxCrossPairs pairs; capped when more records matched than were counted.
type textCounts struct {
	cross  []CrossCount
	capped bool
}

type textCountCache struct {
	mu    sync.Mutex
	m     map[textCountKey]textCounts
	order []textCountKey // oldest first
}

func (c *textCountCache) get(k textCountKey) (textCounts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *textCountCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.order = nil, nil
}

func (c *textCountCache) put(k textCountKey, v textCounts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[textCountKey]textCounts{}
	}
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.order) == maxTextCounts {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[k] = v
	c.order = append(c.order, k)
}

// textCross counts the committed run's first searchCountCap records (in run
// order) matching f (with Text) per character, model and verdict, once per
// filter (textCountCache); capped when more records match. ok false beyond
// MaxCrossPairs pairs or for a live run (the caller then counts with SQL,
// exactly).
func (db *DB) textCross(ctx context.Context, runID int64, f Filter) (cross []CrossCount, capped, ok bool, err error) {
	f.Limit, f.Offset = 0, 0
	k := textCountKey{runID, f}
	if v, ok := db.textCounts.get(k); ok {
		return v.cross, v.capped, v.cross != nil, nil
	}
	// A live run (live.go) grows after it is visible: never cached.
	var live int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM live_run WHERE run_id = ?", runID).Scan(&live); err != nil {
		return nil, false, false, fmt.Errorf("store: count run %d: %w", runID, err)
	}
	if live > 0 {
		return nil, false, false, nil
	}
	where, args, pool, order, err := db.whereOf(ctx, runID, f)
	if err != nil {
		return nil, false, false, err
	}
	// The first cap+1 matches in run order: the extra one says whether the
	// cap was hit and is taken off again (it is the group's max(seq) that is
	// the largest of all).
	limit := db.SearchCap()
	rows, err := pool.QueryContext(ctx, "SELECT character_id, model_id, verdict, count(*), max(seq) FROM (SELECT seq, character_id, model_id, verdict FROM verdict"+where+
		" ORDER BY "+order+" LIMIT ?) GROUP BY character_id, model_id, verdict ORDER BY character_id, model_id", append(args, limit+1)...)
	if err != nil {
		return nil, false, false, fmt.Errorf("store: count run %d: %w", runID, err)
	}
	defer rows.Close()
	out := []CrossCount{}
	total, lastSeq, lastPair := 0, -1, -1
	var lastVerdict persona.Verdict
	tooMany := false
	for rows.Next() {
		var c, m, v string
		var n, seq int
		if err := rows.Scan(&c, &m, &v, &n, &seq); err != nil {
			return nil, false, false, fmt.Errorf("store: count run %d: %w", runID, err)
		}
		if len(out) == 0 || out[len(out)-1].Character != c || out[len(out)-1].Model != m {
			if len(out) == MaxCrossPairs {
				tooMany = true
				break
			}
			out = append(out, CrossCount{Character: c, Model: m, ByVerdict: zeroVerdicts()})
		}
		out[len(out)-1].ByVerdict[persona.Verdict(v)] += n
		total += n
		if seq > lastSeq {
			lastSeq, lastPair, lastVerdict = seq, len(out)-1, persona.Verdict(v)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, false, fmt.Errorf("store: count run %d: %w", runID, err)
	}
	if tooMany {
		out = nil
	}
	capped = total > limit
	if capped && out != nil {
		out[lastPair].ByVerdict[lastVerdict]--
	}
	if ctx.Err() == nil {
		db.textCounts.put(k, textCounts{out, capped})
	}
	return out, capped, out != nil, nil
}

// SearchCapped reports whether the counts of f under a text search
// (CountByVerdict, CountBy) cover only the first SearchCountCap (or
// SetSearchCountCap's) matching records in run order because more match:
// the screen then shows them as "10,000+". False when f has no Text, for a
// live run, or when the counts were exact. It reads the same cached counts
// as CountByVerdict, so after it it costs no query. ErrNotFound when the
// run does not exist or is not committed.
func (db *DB) SearchCapped(ctx context.Context, runID int64, f Filter) (bool, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return false, err
	}
	if f.Text == "" {
		return false, nil
	}
	g := f
	g.Character, g.Model, g.Verdict = "", "", ""
	_, capped, ok, err := db.textCross(ctx, runID, g)
	return capped && ok, err
}

// groupCross groups cross counts per value of col ("character_id",
// "model_id", or "" for one group), keeping pairs that match f's character
// and model and verdicts that match its verdict; groups with no record are
// left out, the rest sorted by value.
func groupCross(cross []CrossCount, f Filter, col string) []GroupCount {
	byValue := map[string]*GroupCount{}
	var order []string
	for _, c := range cross {
		if (f.Character != "" && c.Character != f.Character) || (f.Model != "" && c.Model != f.Model) {
			continue
		}
		key := ""
		switch col {
		case "character_id":
			key = c.Character
		case "model_id":
			key = c.Model
		}
		g := byValue[key]
		for v, n := range c.ByVerdict {
			if (f.Verdict != "" && v != f.Verdict) || n == 0 {
				continue
			}
			if g == nil {
				g = &GroupCount{Value: key, ByVerdict: zeroVerdicts()}
				byValue[key] = g
				order = append(order, key)
			}
			g.ByVerdict[v] += n
			g.Total += n
		}
	}
	slices.Sort(order)
	out := []GroupCount{}
	for _, k := range order {
		out = append(out, *byValue[k])
	}
	return out
}

// crossOnly reports whether f filters on character, model and verdict only
// (any of them), so its counts follow from RunSummary.Cross.
func crossOnly(f Filter) bool {
	return f.Session == "" && f.TurnID == "" && f.Text == "" && f.From <= 0 && f.Until <= 0
}

// fromCross counts the records matching f (crossOnly) per value of col
// ("character_id", "model_id", or "" for one group) and verdict from the
// run's stored Cross counts; ok false when the run has none.
func (db *DB) fromCross(ctx context.Context, runID int64, f Filter, col string) (gs []GroupCount, ok bool, err error) {
	s, err := db.StoredSummary(ctx, runID)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil || s.Cross == nil {
		return nil, false, err
	}
	return groupCross(s.Cross, f, col), true, nil
}

func zeroVerdicts() map[persona.Verdict]int {
	m := make(map[persona.Verdict]int, len(persona.Verdicts))
	for _, v := range persona.Verdicts {
		m[v] = 0
	}
	return m
}

// groupCounts counts the run's records matching f per value of col
// (character_id or model_id) and verdict, served index-only by
// verdict_by_character / verdict_by_model (migration 0005).
func (db *DB) groupCounts(ctx context.Context, runID int64, col string, f Filter) ([]GroupCount, error) {
	if col != "character_id" && col != "model_id" {
		return nil, fmt.Errorf("%w: group by %q", ErrInvalid, col)
	}
	if crossOnly(f) && (f.Character != "" || f.Model != "" || f.Verdict != "") {
		if gs, ok, err := db.fromCross(ctx, runID, f, col); err != nil || ok {
			return gs, err
		}
	}
	if f.Text != "" {
		// The counts of a text filter are computed once for the filter
		// without its character, model and verdict, which groupCross applies.
		g := f
		g.Character, g.Model, g.Verdict = "", "", ""
		if cross, _, ok, err := db.textCross(ctx, runID, g); err != nil || ok {
			return groupCross(cross, f, col), err
		}
	}
	where, args, pool, _, err := db.whereOf(ctx, runID, f)
	if err != nil {
		return nil, err
	}
	rows, err := pool.QueryContext(ctx, "SELECT "+col+", verdict, count(*) FROM verdict"+where+
		" GROUP BY "+col+", verdict ORDER BY "+col, args...)
	if err != nil {
		return nil, fmt.Errorf("store: count run %d by %s: %w", runID, col, err)
	}
	defer rows.Close()
	out := []GroupCount{}
	for rows.Next() {
		var val, v string
		var n int
		if err := rows.Scan(&val, &v, &n); err != nil {
			return nil, fmt.Errorf("store: count run %d by %s: %w", runID, col, err)
		}
		if len(out) == 0 || out[len(out)-1].Value != val {
			out = append(out, GroupCount{Value: val, ByVerdict: zeroVerdicts()})
		}
		g := &out[len(out)-1]
		g.ByVerdict[persona.Verdict(v)] += n
		g.Total += n
	}
	return out, rows.Err()
}

// CountBy counts the committed run's records matching f (Limit and Offset
// ignored) per value of column "character" or "model", with the
// verdict breakdown, sorted by value; values with no matching record are
// absent. A filter of character, model and verdict only is answered from
// the stored summary's Cross counts when the run has them. Under a text
// search only the first SearchCountCap matching records in run order are
// counted (SearchCapped says when more match). For the screen's side panels
// under a filter. ErrNotFound when the
// run does not exist; ErrInvalid for another column.
func (db *DB) CountBy(ctx context.Context, runID int64, column string, f Filter) ([]GroupCount, error) {
	col := map[string]string{"character": "character_id", "model": "model_id"}[column]
	if col == "" {
		return nil, fmt.Errorf("%w: count by %q (character or model)", ErrInvalid, column)
	}
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	f.Limit, f.Offset = 0, 0
	return db.groupCounts(ctx, runID, col, f)
}

// PutRunSummary stores (replacing) the summary of run s.RunID, stamped now,
// in one transaction with the run's disagreeing prompts: disagree maps a
// scope (as RunSummary.Disagree) to its prompt_ids in first-appearance order.
// Rows of scopes not in disagree are removed. ErrNotFound when the run does
// not exist; ErrInvalid for a live run (it grows, so a stored summary would
// go stale: the screen counts it on each view).
func (db *DB) PutRunSummary(ctx context.Context, s RunSummary, disagree map[string][]string) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("store: summary of run %d: %w", s.RunID, err)
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM run WHERE id = ?", s.RunID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: run %d", ErrNotFound, s.RunID)
		} else if err != nil {
			return fmt.Errorf("store: summary of run %d: %w", s.RunID, err)
		}
		var live int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM live_run WHERE run_id = ?", s.RunID).Scan(&live); err != nil {
			return fmt.Errorf("store: summary of run %d: %w", s.RunID, err)
		} else if live > 0 {
			return fmt.Errorf("%w: run %d is a live run, which grows: it is counted on each view, not summarised", ErrInvalid, s.RunID)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_summary (run_id, computed_at, summary) VALUES (?, ?, ?)
    ON CONFLICT (run_id) DO UPDATE SET computed_at = excluded.computed_at, summary = excluded.summary`,
			s.RunID, db.stamp(), string(b)); err != nil {
			return fmt.Errorf("store: summary of run %d: %w", s.RunID, err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM run_disagree WHERE run_id = ?", s.RunID); err != nil {
			return fmt.Errorf("store: disagreements of run %d: %w", s.RunID, err)
		}
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO run_disagree (run_id, scope, pos, prompt_id) VALUES (?, ?, ?, ?)")
		if err != nil {
			return fmt.Errorf("store: disagreements of run %d: %w", s.RunID, err)
		}
		defer stmt.Close()
		for scope, prompts := range disagree {
			for i, p := range prompts {
				if _, err := stmt.ExecContext(ctx, s.RunID, scope, i, p); err != nil {
					return fmt.Errorf("store: disagreements of run %d: %w", s.RunID, err)
				}
			}
		}
		return nil
	})
}

// StoredSummary returns the summary PutRunSummary stored for a committed
// run, or ErrNotFound when the run does not exist or has none (an older
// store, a run still growing): the caller then counts with CountRun. A
// live run has none (PutRunSummary refuses it; one stored by an older
// version, stale since, is not returned).
func (db *DB) StoredSummary(ctx context.Context, runID int64) (RunSummary, error) {
	var at, js string
	err := db.sql.QueryRowContext(ctx, `SELECT s.computed_at, s.summary FROM run_summary s JOIN run r ON r.id = s.run_id
    WHERE s.run_id = ? AND r.finished_at IS NOT NULL AND s.run_id NOT IN (SELECT run_id FROM live_run)`, runID).Scan(&at, &js)
	if errors.Is(err, sql.ErrNoRows) {
		return RunSummary{}, fmt.Errorf("%w: summary of run %d", ErrNotFound, runID)
	}
	if err != nil {
		return RunSummary{}, fmt.Errorf("store: summary of run %d: %w", runID, err)
	}
	var s RunSummary
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		return RunSummary{}, fmt.Errorf("store: summary of run %d: %w", runID, err)
	}
	s.RunID = runID
	if s.ComputedAt, err = parseTime(at); err != nil {
		return RunSummary{}, err
	}
	if s.ByVerdict == nil {
		s.ByVerdict = zeroVerdicts()
	}
	return s, nil
}

// Disagreements returns up to limit prompt_ids of the run's disagreeing
// prompts in scope (PutRunSummary), from position offset on (0-based, in
// first-appearance order), read by primary key.
func (db *DB) Disagreements(ctx context.Context, runID int64, scope string, offset, limit int) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT prompt_id FROM run_disagree WHERE run_id = ? AND scope = ? AND pos >= ?
    ORDER BY pos LIMIT ?`, runID, scope, max(offset, 0), limit)
	if err != nil {
		return nil, fmt.Errorf("store: disagreements of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("store: disagreements of run %d: %w", runID, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// FirstAnswer is one model's first record (lowest seq) for one prompt, as
// EachFirstAnswer reads it.
type FirstAnswer struct {
	PromptID, ModelID, CharacterID string
	Seq                            int
	Verdict                        persona.Verdict
}

// EachFirstAnswer calls fn, for every (prompt_id, model_id) of the run's
// records with a prompt_id (of character, when not ""), with that model's
// first record for the prompt, ordered by prompt_id then model_id. With
// byCharacter the grouping is per (character_id, prompt_id, model_id) and
// the order character_id, prompt_id, model_id (character must then be "").
// Memory is one row; the grouping is SQLite's. It stops at fn's first error.
func (db *DB) EachFirstAnswer(ctx context.Context, runID int64, character string, byCharacter bool, fn func(FirstAnswer) error) error {
	group := "prompt_id, model_id"
	if byCharacter {
		group = "character_id, prompt_id, model_id"
	}
	q := "SELECT prompt_id, model_id, character_id, min(seq), verdict FROM verdict WHERE run_id = ? AND prompt_id != ''"
	args := []any{runID}
	if character != "" {
		q += " AND character_id = ?"
		args = append(args, character)
	}
	q += " GROUP BY " + group + " ORDER BY " + group
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: answers of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a FirstAnswer
		var v string
		if err := rows.Scan(&a.PromptID, &a.ModelID, &a.CharacterID, &a.Seq, &v); err != nil {
			return fmt.Errorf("store: answers of run %d: %w", runID, err)
		}
		a.Verdict = persona.Verdict(v)
		if err := fn(a); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Analyze refreshes SQLite's statistics of the verdict table's indexes
// (ANALYZE with analysis_limit 1000: a sample, quick at any size), so the
// planner picks the selective filter index (a session, a prompt) over the
// one that only gives run order. runstore.Summarize calls it per run.
func (db *DB) Analyze(ctx context.Context) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA analysis_limit = 1000"); err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "ANALYZE verdict"); err != nil {
		return fmt.Errorf("store: analyze: %w", err)
	}
	return nil
}
