package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"evident/persona"
)

// RunMeta describes a judge run as it starts.
type RunMeta struct {
	// DatasetID is the imported dataset judged, 0 when the run read files
	// directly (stored as NULL). A non-zero id must exist.
	DatasetID int64
	// Profile is the speech profile's name ("seed", "extended", …).
	Profile string
	// Endings is the polite-ending list the profile used, user additions
	// included, so a run can be explained after the profile changes.
	Endings []string
	// Fingerprints maps an input table name (chat_turn, character_card,
	// topic_lexicon, …) to the sha256 of what was judged, hex.
	Fingerprints map[string]string
	// PromptVersion names the summary prompt when a model rewrote summaries,
	// "" when only rule sentences were used.
	PromptVersion string
}

// RunInfo is a committed judge run. Tally is what RunWriter.Commit stored;
// its ByVerdict has an entry for each of the five verdicts.
type RunInfo struct {
	ID int64
	RunMeta
	StartedAt  time.Time // BeginRun
	FinishedAt time.Time // Commit
	Tally      persona.Tally
}

// AddOption sets sidecar columns of one record in RunWriter.Add.
type AddOption func(*sidecar)

type sidecar struct {
	source     persona.SummarySource
	rejectedBy string
}

// WithSummary records who wrote the summary and, when a model's rewrite was
// thrown away, why (e.g. the automatic check that rejected it; "" for none).
// Without it both sidecar columns are NULL. source must be SummaryRule or
// SummaryModel (persona.SummarySource; else Add fails with ErrInvalid).
func WithSummary(source persona.SummarySource, rejectedBy string) AddOption {
	return func(s *sidecar) { s.source, s.rejectedBy = source, rejectedBy }
}

// RunWriter writes one judge run in bounded transactions, as an Importer
// does (issue 13 item 2): records are held in a batch of DefaultBatchRows
// (or DefaultBatchBytes) and written in one short transaction when it is
// full, so other writers take turns with the run. The run row is committed
// at BeginRun without finished_at; Commit writes the last batch, the tally
// and finished_at in one transaction, and only then do readers see the run
// or any of its records. Rollback, a failed Add or Commit delete what was
// written; a killed process leaves its batches invisible until the next
// Open, BeginImport or BeginRun removes them. Memory holds one batch at
// most. Not safe for concurrent use (Turns' Source may be read while
// another goroutine adds).
type RunWriter struct {
	ctx     context.Context
	db      *DB
	id      int64
	lk      *writerLock
	b       *writeBatch
	meta    RunMeta
	started string
	done    bool
	err     error
	n, nRej int
	counts  map[persona.Verdict]int
	enc     recordEncoder

	fpsChanged bool // SetFingerprint was called

	// im is the import this run judges as it is written (Importer.BeginRun);
	// nil for a run of a committed dataset or of files.
	im *Importer
}

// The statements of a run's batch, by pendingRow.stmt.
const (
	runVerdict = iota
	runReject
	runSearch
)

var runQueries = []string{
	runVerdict: `INSERT INTO verdict (run_id, seq, turn_id, session_id, character_id,
    model_id, prompt_id, verdict, summary, reply_text, record, summary_source, summary_rejected_by, text_plain)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	runReject: "INSERT INTO run_reject (run_id, seq, file, line, turn_id, reason) VALUES (?, ?, ?, ?, ?, ?)",
	runSearch: "INSERT INTO verdict_fts (rowid, summary, reply_text) VALUES (?, ?, ?)",
}

var runErrs = []func(p *pendingRow, err error) error{
	runVerdict: func(p *pendingRow, err error) error { return fmt.Errorf("store: add record %q: %w", p.id, err) },
	runReject:  func(p *pendingRow, err error) error { return fmt.Errorf("store: add reject %s: %w", p.id, err) },
	runSearch: func(p *pendingRow, err error) error {
		return fmt.Errorf("store: search index of record %q: %w", p.id, err)
	},
}

// indexRow is a run batch's writeBatch.then: each verdict row goes into the
// search index (verdict_fts, NFC) under its rowid in the transaction that
// inserts it, so a run is searchable by index when it becomes visible
// (Commit marks it indexed, run_search) and no pass reads the run back
// (issue 13). Rows of a run that is rolled back or reclaimed leave their
// entries behind: the index is contentless, and a search checks every
// candidate on its row's own text (search.go), so a stale entry (even one
// whose rowid a later row reuses) costs a candidate, never a wrong match.
func indexRow(p *pendingRow, res sql.Result) (int, []any, bool, error) {
	r, ok, err := searchRow(p, res)
	if !ok || err != nil {
		return runSearch, nil, false, err
	}
	return runSearch, []any{r.rowid, indexText(r.summary), indexText(r.reply)}, true, nil
}

// searchRow is what the search index holds of a verdict row just inserted
// (its rowid, summary and reply_text); ok is false for other rows.
func searchRow(p *pendingRow, res sql.Result) (r sideRow, ok bool, err error) {
	if p.stmt != runVerdict {
		return r, false, nil
	}
	id, err := res.LastInsertId()
	if err != nil {
		return r, false, err
	}
	reply, _ := p.args[9].(string)
	return sideRow{rowid: id, summary: p.args[8].(string), reply: reply}, true, nil
}

// runCommitHooks run inside the transaction of a run's last batch, after
// its row got finished_at and the tally, in order: what this package
// precomputes for a whole run (a summary of its records, say) lands in the
// same transaction as the run becomes visible. Only this package's files
// register them, from init.
var runCommitHooks []func(ctx context.Context, tx *sql.Tx, runID int64) error

// BeginRun starts a run. Its id is known at once (ID) but the run exists for
// readers only after Commit. It first removes what dead writers left
// (reclaim). Fails with ErrNotFound when meta.DatasetID names no committed
// dataset, ErrReadOnly on a DB from OpenReadOnly, or when the write lock
// cannot be had within BusyTimeout.
func (db *DB) BeginRun(ctx context.Context, meta RunMeta) (*RunWriter, error) {
	return db.beginRun(ctx, meta, nil)
}

// BeginRun starts a run of the dataset im is importing, so one pass over
// the input can store both the turns and their verdicts (runstore.Run
// judges once instead of judging the files and then the store): meta's
// DatasetID is set to im.ID(). The run is written in its own batches, as
// any run is; its Commit fails with ErrInvalid (and rolls the run back)
// unless im has committed first, so the run never becomes visible before
// its dataset. If the process dies before both commit, reclaim removes the
// run first, then the import. Fails as DB.BeginRun does, and with
// ErrClosed when im has ended.
func (im *Importer) BeginRun(meta RunMeta) (*RunWriter, error) {
	if err := im.check(); err != nil {
		return nil, err
	}
	meta.DatasetID = im.id
	return im.db.beginRun(im.ctx, meta, im)
}

func (db *DB) beginRun(ctx context.Context, meta RunMeta, im *Importer) (*RunWriter, error) {
	if db.readOnly {
		return nil, fmt.Errorf("store: begin run: %w: %s", ErrReadOnly, db.path)
	}
	endings, fps := meta.Endings, meta.Fingerprints
	if endings == nil {
		endings = []string{}
	}
	if fps == nil {
		fps = map[string]string{}
	}
	eb, err := json.Marshal(endings)
	if err != nil {
		return nil, fmt.Errorf("store: begin run: %w", err)
	}
	fb, err := json.Marshal(fps)
	if err != nil {
		return nil, fmt.Errorf("store: begin run: %w", err)
	}
	var dataset any
	if meta.DatasetID != 0 {
		dataset = meta.DatasetID
	}
	if err := db.reclaim(ctx); err != nil {
		return nil, fmt.Errorf("store: begin run: %w", err)
	}
	w := &RunWriter{ctx: ctx, db: db, started: db.stamp(), counts: map[persona.Verdict]int{}, im: im}
	w.meta = meta
	w.meta.Endings = append([]string{}, endings...)
	w.meta.Fingerprints = map[string]string{}
	for k, v := range fps {
		w.meta.Fingerprints[k] = v
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if meta.DatasetID != 0 {
			q := "SELECT count(*) FROM dataset WHERE id = ? AND complete = 1"
			if im != nil {
				q = "SELECT count(*) FROM dataset WHERE id = ? AND complete = 0" // still being imported by im
			}
			var n int
			if err := tx.QueryRowContext(ctx, q, meta.DatasetID).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%w: dataset %d", ErrNotFound, meta.DatasetID)
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO run (dataset_id, started_at, profile, endings, fingerprints, prompt_version)
    VALUES (?, ?, ?, ?, ?, ?)`, dataset, w.started, meta.Profile, string(eb), string(fb), meta.PromptVersion)
		if err != nil {
			return err
		}
		if w.id, err = res.LastInsertId(); err != nil {
			return err
		}
		w.lk, err = db.acquireWriter("run", w.id)
		return err
	})
	if err != nil {
		w.lk.release()
		return nil, fmt.Errorf("store: begin run: %w", err)
	}
	w.b = &writeBatch{db: db, ctx: ctx, queries: runQueries, errf: runErrs, behind: true}
	if db.side.w == nil { // else the sidecar's index is written after Commit (IndexRunText)
		w.b.then = indexRow
	}
	db.bulkConn() // until Commit or Rollback
	return w, nil
}

// ID is the id the run will have once committed.
func (w *RunWriter) ID() int64 { return w.id }

func (w *RunWriter) check() error {
	if w.done {
		return ErrClosed
	}
	return w.err
}

func (w *RunWriter) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// Add appends one verdict record (run order is the order of calls). turn is
// the judged chat_turn row and supplies the denormalised prompt_id and
// reply_text columns; it may be nil, and then reply_text is taken from the
// record's chat_turn.reply_text evidence row when there is one and
// prompt_id is "". Fails, and ends the run (Commit then rolls back), when
// rec.Verdict is not one of the five (ErrInvalid), the turn_id was already
// added to this run (UNIQUE: at this call when the first is in the same
// batch, else when the batch is written — a later Add or Commit), or SQLite
// fails writing a batch.
func (w *RunWriter) Add(rec persona.Record, turn *persona.Turn, opts ...AddOption) error {
	if err := w.check(); err != nil {
		return err
	}
	if !rec.Verdict.Valid() {
		return w.fail(fmt.Errorf("%w: turn %q: verdict %q is not one of the five", ErrInvalid, rec.TurnID, rec.Verdict))
	}
	var sc sidecar
	for _, o := range opts {
		o(&sc)
	}
	var source, rejectedBy any
	if sc.source != "" {
		if !sc.source.Valid() {
			return w.fail(fmt.Errorf("%w: turn %q: summary source %q", ErrInvalid, rec.TurnID, sc.source))
		}
		source = string(sc.source)
	}
	if sc.rejectedBy != "" {
		rejectedBy = sc.rejectedBy
	}
	jsb, err := w.enc.encode(&rec)
	if err != nil {
		return w.fail(fmt.Errorf("store: turn %q: encode record: %w", rec.TurnID, err))
	}
	js := string(jsb)
	var prompt string
	var reply any
	if turn != nil {
		prompt, reply = turn.PromptID, nullString(turn.ReplyText)
	} else {
		reply = evidenceReply(rec)
	}
	size := len(js) + len(rec.Summary) + len(rec.TurnID) + len(rec.SessionID) + len(rec.CharacterID) + len(rec.ModelID) + 64
	replyText, _ := reply.(string)
	size += len(replyText)
	row := pendingRow{stmt: runVerdict, id: rec.TurnID, n: w.n + 1, args: []any{w.id, w.n, rec.TurnID, rec.SessionID,
		rec.CharacterID, rec.ModelID, prompt, string(rec.Verdict), rec.Summary, reply, js, source, rejectedBy,
		boolInt(plainText(rec.Summary) && plainText(replyText))}}
	err = w.b.add(row, size, "record "+rec.TurnID, func() error {
		return fmt.Errorf("store: add record %q: UNIQUE: turn_id already added to this run", rec.TurnID)
	})
	if err != nil {
		return w.fail(err)
	}
	w.n++
	w.counts[rec.Verdict]++
	return nil
}

// evidenceReply is the verbatim reply_text the record judges, as its
// evidence cites it (persona.Record.JudgedReply), or nil.
func evidenceReply(rec persona.Record) any {
	if s, ok := rec.JudgedReply(); ok {
		return s
	}
	return nil
}

// Reject stores one row the run could not judge (any of the three tables),
// in call order. Errors end the run as Add's do.
func (w *RunWriter) Reject(r persona.Reject) error {
	if err := w.check(); err != nil {
		return err
	}
	row := pendingRow{stmt: runReject, id: fmt.Sprintf("%s:%d", r.File, r.Line), n: w.nRej + 1,
		args: []any{w.id, w.nRej, r.File, r.Line, nullString(r.TurnID), r.Reason}}
	if err := w.b.add(row, len(r.File)+len(r.Reason)+32, "", nil); err != nil {
		return w.fail(err)
	}
	w.nRej++
	return nil
}

// SetFingerprint sets the fingerprint of one input table (RunMeta.Fingerprints)
// after BeginRun, for a table whose fingerprint is known only once the judge
// has read it (a stored dataset's Source). Commit stores it.
func (w *RunWriter) SetFingerprint(table, sum string) {
	fps := make(map[string]string, len(w.meta.Fingerprints)+1)
	for k, v := range w.meta.Fingerprints {
		fps[k] = v
	}
	fps[table] = sum
	w.meta.Fingerprints = fps
	w.fpsChanged = true
}

// Commit writes the last batch and, in the same transaction, the tally and
// the finish time, which make the run and all its records visible at once;
// it returns the run as Run would read it. The tally must agree with what was added:
// t.Judged equals the number of records and t.ByVerdict the per-verdict
// counts (zero entries may be missing), else Commit rolls back with
// ErrInvalid — nothing is dropped silently. t.Rejected counts rejected rows
// of all tables and is stored as given. After a failed Add, Commit rolls
// back and returns that error.
func (w *RunWriter) Commit(t persona.Tally) (RunInfo, error) {
	if w.done {
		return RunInfo{}, ErrClosed
	}
	if w.err != nil {
		w.Rollback()
		return RunInfo{}, w.err
	}
	if err := w.agrees(t); err != nil {
		w.Rollback()
		return RunInfo{}, err
	}
	if w.im != nil && !w.im.committed {
		w.Rollback()
		return RunInfo{}, fmt.Errorf("%w: run of dataset %d committed before its import", ErrInvalid, w.im.id)
	}
	return w.commit(t, nil)
}

// commit is Commit once its checks passed; also, when not nil, runs first
// in the last transaction (Importer.CommitWithRun: the dataset marked
// complete).
func (w *RunWriter) commit(t persona.Tally, also func(tx *sql.Tx) error) (RunInfo, error) {
	byVerdict := map[persona.Verdict]int{}
	for _, v := range persona.Verdicts {
		byVerdict[v] = w.counts[v]
	}
	finished := w.db.stamp()
	bv, err := json.Marshal(byVerdict)
	if err != nil {
		w.fail(fmt.Errorf("store: commit run: %w", err))
		w.Rollback()
		return RunInfo{}, w.err
	}
	// A store with a sidecar indexes the run after Commit (IndexRunText,
	// from seq 0); without one, each batch indexed its rows (indexRow) and
	// the run is indexed when visible.
	place, indexedAt, next := "main", any(finished), w.n
	if w.db.side.w != nil {
		place, indexedAt, next = "side", nil, 0
	}
	err = w.b.flush(func(tx *sql.Tx) error {
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		if w.fpsChanged {
			fb, err := json.Marshal(w.meta.Fingerprints)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(w.ctx, "UPDATE run SET fingerprints = ? WHERE id = ?", string(fb), w.id); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(w.ctx, "UPDATE run SET finished_at = ?, judged = ?, rejected = ?, by_verdict = ? WHERE id = ?",
			finished, w.n, t.Rejected, string(bv), w.id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(w.ctx, `INSERT INTO run_search (run_id, next_seq, indexed_at, padded, place) VALUES (?, ?, ?, 1, ?)
    ON CONFLICT (run_id) DO UPDATE SET next_seq = excluded.next_seq, indexed_at = excluded.indexed_at, padded = 1,
    place = excluded.place`, w.id, next, indexedAt, place); err != nil {
			return err
		}
		for _, hook := range runCommitHooks {
			if err := hook(w.ctx, tx, w.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.fail(fmt.Errorf("store: commit run: %w", err))
		w.Rollback()
		return RunInfo{}, w.err
	}
	w.done = true
	w.lk.release()
	w.db.bulkDone()
	info := RunInfo{ID: w.id, RunMeta: w.meta,
		Tally: persona.Tally{Judged: w.n, ByVerdict: byVerdict, Rejected: t.Rejected}}
	info.StartedAt, _ = time.Parse(timeLayout, w.started)
	info.FinishedAt, _ = time.Parse(timeLayout, finished)
	return info, nil
}

func (w *RunWriter) agrees(t persona.Tally) error {
	if t.Judged != w.n {
		return fmt.Errorf("%w: tally says %d judged, %d records were added", ErrInvalid, t.Judged, w.n)
	}
	for _, v := range persona.Verdicts {
		if t.ByVerdict[v] != w.counts[v] {
			return fmt.Errorf("%w: tally says %d %s, %d records were added", ErrInvalid, t.ByVerdict[v], v, w.counts[v])
		}
	}
	for v := range t.ByVerdict {
		if !v.Valid() {
			return fmt.Errorf("%w: tally counts unknown verdict %q", ErrInvalid, v)
		}
	}
	return nil
}

// Rollback discards the run: it deletes the batches already written and
// the run row (also when the run's context was cancelled). It is a no-op
// (nil) after Commit or an earlier Rollback, so `defer w.Rollback()` is
// safe. When the deletes fail the rows stay invisible and are removed by a
// later reclaim; the error says so.
func (w *RunWriter) Rollback() error {
	if w.done {
		return nil
	}
	w.done = true
	w.b.wait() // its rows are deleted below; its error no longer matters
	defer w.db.bulkDone()
	return w.db.rollbackTarget(w.ctx, "run", w.id, w.lk)
}

const runColumns = `id, coalesce(dataset_id, 0), started_at, finished_at, profile, endings, fingerprints,
    prompt_version, judged, rejected, by_verdict`

// Runs lists the committed runs, newest first.
func (db *DB) Runs(ctx context.Context) ([]RunInfo, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+runColumns+" FROM run WHERE finished_at IS NOT NULL ORDER BY id DESC")
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	defer rows.Close()
	var out []RunInfo
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Run returns one committed run, or ErrNotFound (also for a run still being
// written or rolled back).
func (db *DB) Run(ctx context.Context, id int64) (RunInfo, error) {
	r, err := scanRun(db.sql.QueryRowContext(ctx, "SELECT "+runColumns+" FROM run WHERE id = ? AND finished_at IS NOT NULL", id))
	if errors.Is(err, sql.ErrNoRows) {
		return RunInfo{}, fmt.Errorf("%w: run %d", ErrNotFound, id)
	}
	return r, err
}

// LatestRun returns the most recently started committed run, or ErrNotFound
// when there is none.
func (db *DB) LatestRun(ctx context.Context) (RunInfo, error) {
	r, err := scanRun(db.sql.QueryRowContext(ctx,
		"SELECT "+runColumns+" FROM run WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"))
	if errors.Is(err, sql.ErrNoRows) {
		return RunInfo{}, fmt.Errorf("%w: no run yet", ErrNotFound)
	}
	return r, err
}

type scanner interface{ Scan(...any) error }

func scanRun(s scanner) (RunInfo, error) {
	var r RunInfo
	var started, endings, fps, bv string
	var finished sql.NullString
	if err := s.Scan(&r.ID, &r.DatasetID, &started, &finished, &r.Profile, &endings, &fps, &r.PromptVersion,
		&r.Tally.Judged, &r.Tally.Rejected, &bv); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return r, err
		}
		return r, fmt.Errorf("store: run: %w", err)
	}
	var err error
	if r.StartedAt, err = parseTime(started); err != nil {
		return r, err
	}
	if fin, err := parseNullTime(finished); err != nil {
		return r, err
	} else if fin != nil {
		r.FinishedAt = *fin
	}
	if err := json.Unmarshal([]byte(endings), &r.Endings); err != nil {
		return r, fmt.Errorf("store: run %d endings: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(fps), &r.Fingerprints); err != nil {
		return r, fmt.Errorf("store: run %d fingerprints: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(bv), &r.Tally.ByVerdict); err != nil {
		return r, fmt.Errorf("store: run %d tally: %w", r.ID, err)
	}
	return r, nil
}

// Rejects returns the rows a committed run stored with RunWriter.Reject, in
// the order they were added. ErrNotFound when the run does not exist.
func (db *DB) Rejects(ctx context.Context, runID int64) ([]persona.Reject, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT file, line, turn_id, reason FROM run_reject WHERE run_id = ? ORDER BY seq", runID)
	if err != nil {
		return nil, fmt.Errorf("store: rejects of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []persona.Reject
	for rows.Next() {
		var r persona.Reject
		var tid sql.NullString
		if err := rows.Scan(&r.File, &r.Line, &tid, &r.Reason); err != nil {
			return nil, fmt.Errorf("store: rejects of run %d: %w", runID, err)
		}
		r.TurnID = stringPtr(tid)
		out = append(out, r)
	}
	return out, rows.Err()
}
