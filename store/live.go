package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"evident/persona"
)

// Live judging (issue 17; migration 0006): turns judged one at a time by the
// live API, each session's state kept between requests and restarts, and a
// growing run per dataset holding their verdict rows.
//
// Decisions where the spec is silent:
//   - turn_id is unique across all live turns (not per dataset): a re-send
//     is recognised whichever dataset it names.
//   - A session's state is one row per session_id, whatever dataset judged
//     its turns (the state, persona/live.State, does not depend on cards).
//   - The live run of a dataset is an ordinary run row with finished_at set
//     when it is created, so run lists show it at once; each JudgeLive
//     transaction appends its verdict rows and updates the run's judged,
//     by_verdict and finished_at (the time of the last live turn). It has no
//     precomputed summary and no fingerprints. IsLiveRun tells it apart.

// ErrLiveConflict is returned, per row, by JudgeLive for a turn whose turn_id
// was already judged live with a different row (an HTTP 409).
var ErrLiveConflict = errors.New("store: turn_id already judged with a different row")

// LiveTurn is one turn sent to JudgeLive: the row and its digest
// (persona/live.Digest), which tells a re-send from a different row.
type LiveTurn struct {
	Turn   *persona.Turn
	Digest string
}

// LiveResult is JudgeLive's answer for one turn: the record as stored JSON
// (one line, no trailing newline, HTML not escaped) and whether it was a
// re-send answered with the stored record.
type LiveResult struct {
	Record []byte
	Repeat bool
}

// LiveRowError is JudgeLive's error when one of its turns cannot be judged:
// Row is its 0-based index in the call, Err ErrLiveConflict or the step's
// error (such as persona.ErrUnknownCharacter), wrapped with the turn_id. The
// call then stored nothing: a request is judged whole or not at all.
type LiveRowError struct {
	Row int
	Err error
}

func (e *LiveRowError) Error() string { return fmt.Sprintf("row %d: %v", e.Row+1, e.Err) }

// Unwrap gives the row's error, for errors.Is(err, ErrLiveConflict).
func (e *LiveRowError) Unwrap() error { return e.Err }

// LiveStep judges turns[i] of a JudgeLive call against its session's state
// prev and returns its record and the session's new state. prev is nil for a
// session with no live turn yet, the stored JSON ([]byte) on the session's
// first turn in the call, and on its later turns whatever the step returned
// for the previous one (so a state is decoded once per call, not per turn).
// The new state is stored as JSON: as is when it is a []byte, else
// encoding/json's encoding of it, once per session at the end of the call.
// An error rejects the row and, with it, the whole call.
type LiveStep func(i int, prev any) (persona.Record, any, error)

// JudgeLive judges turns in order against dataset datasetID's live run, in
// one write transaction: for each turn, a stored turn_id with the same digest
// gives the stored record (Repeat), one with another digest ErrLiveConflict;
// otherwise step judges it with its session's state, and the record, the
// verdict row in the live run and the session's new state are written. A
// turn_id repeated inside turns is treated the same way against its first
// occurrence. meta describes the live run when this call creates it (its
// DatasetID is set to datasetID). It returns one result per turn and the live
// run's id. On any error nothing of the call is stored (one transaction,
// rolled back): a *LiveRowError for the first turn that could not be judged
// (a conflict, a step error), else a fatal error (SQLite, an unknown dataset,
// a record that does not encode, a context ended).
func (db *DB) JudgeLive(ctx context.Context, datasetID int64, meta RunMeta, turns []LiveTurn, step LiveStep) ([]LiveResult, int64, error) {
	c := &liveCall{ctx: ctx, datasetID: datasetID, meta: meta, turns: turns, step: step,
		done: make(chan struct{}), lead: make(chan struct{})}
	q := liveQueueOf(db)
	q.mu.Lock()
	q.pending = append(q.pending, c)
	leader := !q.busy
	q.busy = true
	q.mu.Unlock()
	if !leader {
		select {
		case <-c.done:
			return c.out, c.runID, c.err
		case <-c.lead: // the previous leader handed over: this call is pending
		}
	}
	q.mu.Lock()
	calls := q.pending
	q.pending = nil
	q.mu.Unlock()
	db.judgeLiveCalls(calls)
	q.mu.Lock()
	if len(q.pending) > 0 {
		close(q.pending[0].lead) // the oldest waiter writes the next group
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	<-c.done
	return c.out, c.runID, c.err
}

// Group commit: concurrent JudgeLive calls on one DB queue up while one of
// them writes; the writer then takes every queued call and writes them in one
// transaction, each inside its own savepoint (so a call that fails stores
// nothing and the others still commit), and hands the next group to the
// oldest waiter. One transaction per group instead of per call is what keeps
// 50 concurrent single-turn requests from queueing behind 50 commits; SQLite
// has one writer anyway, and waiting in its busy handler sleeps.

// liveCall is one JudgeLive call waiting for, or in, a group.
type liveCall struct {
	ctx       context.Context
	datasetID int64
	meta      RunMeta
	turns     []LiveTurn
	step      LiveStep

	out   []LiveResult
	runID int64
	err   error
	done  chan struct{} // closed when out, runID and err are set
	lead  chan struct{} // closed to make this call write the next group
}

// liveQueue is one DB's queue of live calls, and the live statements
// prepared once on the DB (database/sql keeps each prepared per connection;
// a group transaction takes them with Tx.StmtContext, which reuses the
// connection's, so a group parses no SQL once its connection has seen them).
type liveQueue struct {
	mu      sync.Mutex
	pending []*liveCall
	busy    bool // a call is writing a group

	prep     sync.Mutex
	stmts    *liveStmts // nil until prepared
	judgeKey *sql.Stmt  // LiveJudgeKey's query
}

// liveQueues maps *DB to its *liveQueue (a DB's fields belong to store.go).
var liveQueues sync.Map

func liveQueueOf(db *DB) *liveQueue {
	if q, ok := liveQueues.Load(db); ok {
		return q.(*liveQueue)
	}
	q, _ := liveQueues.LoadOrStore(db, &liveQueue{})
	return q.(*liveQueue)
}

// judgeLiveCalls writes calls in one transaction, one savepoint each, and
// closes their done channels.
func (db *DB) judgeLiveCalls(calls []*liveCall) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
	}()
	ctx := context.WithoutCancel(calls[0].ctx) // the group outlives no call's caller: each call checks its own
	var shared *liveStmts
	var err error
	if !db.readOnly { // a read-only store answers ErrReadOnly from inTx
		shared, err = liveStatements(ctx, db)
	}
	if err == nil {
		err = db.inTx(ctx, func(tx *sql.Tx) error {
			return judgeLiveGroup(ctx, tx, db, shared.in(ctx, tx), calls)
		})
	}
	if err != nil {
		for _, c := range calls {
			if c.err == nil {
				c.out, c.runID, c.err = nil, 0, fmt.Errorf("store: live judging: %w", err)
			}
		}
	}
}

// judgeLiveGroup writes calls in tx, one savepoint each.
func judgeLiveGroup(ctx context.Context, tx *sql.Tx, db *DB, st *liveStmts, calls []*liveCall) error {
	for _, c := range calls {
		if c.err = c.ctx.Err(); c.err != nil {
			continue
		}
		if _, err := st.savepoint.ExecContext(ctx); err != nil {
			return err
		}
		c.out, c.runID, c.err = judgeLiveCall(c.ctx, tx, db, st, c)
		if c.err != nil {
			c.out, c.runID = nil, 0
			if _, err := st.rollbackTo.ExecContext(ctx); err != nil {
				return err
			}
		}
		if _, err := st.release.ExecContext(ctx); err != nil {
			return err
		}
	}
	return nil
}

// liveStmts are a group transaction's statements.
type liveStmts struct {
	getTurn, getState, putTurn, putVerdict     *sql.Stmt
	savepoint, rollbackTo, release             *sql.Stmt
	getLiveRun, getTally, putSession, putTally *sql.Stmt
}

// liveStatements returns db's live statements, preparing them on the first
// call (a failure is not kept: the next call tries again).
func liveStatements(ctx context.Context, db *DB) (*liveStmts, error) {
	q := liveQueueOf(db)
	q.prep.Lock()
	defer q.prep.Unlock()
	if q.stmts == nil {
		st, err := prepareLive(ctx, db.sql)
		if err != nil {
			return nil, err
		}
		q.stmts = st
	}
	return q.stmts, nil
}

// in returns st's statements bound to tx (closed with it).
func (st *liveStmts) in(ctx context.Context, tx *sql.Tx) *liveStmts {
	return &liveStmts{getTurn: tx.StmtContext(ctx, st.getTurn), getState: tx.StmtContext(ctx, st.getState),
		putTurn: tx.StmtContext(ctx, st.putTurn), putVerdict: tx.StmtContext(ctx, st.putVerdict),
		savepoint: tx.StmtContext(ctx, st.savepoint), rollbackTo: tx.StmtContext(ctx, st.rollbackTo),
		release: tx.StmtContext(ctx, st.release), getLiveRun: tx.StmtContext(ctx, st.getLiveRun),
		getTally: tx.StmtContext(ctx, st.getTally), putSession: tx.StmtContext(ctx, st.putSession),
		putTally: tx.StmtContext(ctx, st.putTally)}
}

// preparer is a *sql.DB or a *sql.Tx.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

func prepareLive(ctx context.Context, tx preparer) (*liveStmts, error) {
	st := &liveStmts{}
	for _, x := range []struct {
		dst *(*sql.Stmt)
		q   string
	}{
		{&st.getTurn, `SELECT t.digest, v.record FROM live_turn t
    JOIN verdict v ON v.run_id = t.run_id AND v.seq = t.seq WHERE t.turn_id = ?`},
		{&st.getState, "SELECT state FROM live_session WHERE session_id = ?"},
		{&st.savepoint, "SAVEPOINT live_call"},
		{&st.rollbackTo, "ROLLBACK TO live_call"},
		{&st.release, "RELEASE live_call"},
		{&st.getLiveRun, "SELECT run_id FROM live_run WHERE dataset_id = ?"},
		{&st.getTally, "SELECT judged, by_verdict FROM run WHERE id = ?"},
		{&st.putSession, `INSERT INTO live_session (session_id, state, turns, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, turns = turns + excluded.turns, updated_at = excluded.updated_at`},
		{&st.putTally, "UPDATE run SET judged = ?, by_verdict = ?, finished_at = ? WHERE id = ?"},
		{&st.putTurn, `INSERT INTO live_turn (turn_id, session_id, dataset_id, run_id, seq, digest, arrived_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`},
		{&st.putVerdict, `INSERT INTO verdict (run_id, seq, turn_id, session_id, character_id,
    model_id, prompt_id, verdict, summary, reply_text, record, summary_source)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'rule')`},
	} {
		var err error
		if *x.dst, err = tx.PrepareContext(ctx, x.q); err != nil {
			st.close()
			return nil, fmt.Errorf("store: live judging: %w", err)
		}
	}
	return st, nil
}

func (st *liveStmts) close() {
	for _, s := range []*sql.Stmt{st.getTurn, st.getState, st.putTurn, st.putVerdict, st.savepoint, st.rollbackTo,
		st.release, st.getLiveRun, st.getTally, st.putSession, st.putTally} {
		if s != nil {
			s.Close()
		}
	}
}

// judgeLiveCall is one call's part of a group's transaction.
func judgeLiveCall(ctx context.Context, tx *sql.Tx, db *DB, st *liveStmts, c *liveCall) ([]LiveResult, int64, error) {
	datasetID, meta, turns, step := c.datasetID, c.meta, c.turns, c.step
	out := make([]LiveResult, len(turns))
	var runID int64
	err := func() error {
		var err error
		if runID, err = liveRun(ctx, tx, st, db, datasetID, meta); err != nil {
			return err
		}
		var seq int64
		var bv string
		if err := st.getTally.QueryRowContext(ctx, runID).Scan(&seq, &bv); err != nil {
			return fmt.Errorf("store: live run %d: %w", runID, err)
		}
		byVerdict := map[persona.Verdict]int{}
		if err := json.Unmarshal([]byte(bv), &byVerdict); err != nil {
			return fmt.Errorf("store: live run %d tally: %w", runID, err)
		}
		getTurn, getState, putTurn, putVerdict := st.getTurn, st.getState, st.putTurn, st.putVerdict

		now := db.stamp()
		states := map[string]any{} // sessions touched: their latest state
		var order []string         // in first-touched order, for the writes
		counts := map[string]int{}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for i, lt := range turns {
			if err := ctx.Err(); err != nil {
				return err
			}
			t := lt.Turn
			var digest, rec string
			switch err := getTurn.QueryRowContext(ctx, t.TurnID).Scan(&digest, &rec); {
			case err == nil:
				if digest != lt.Digest {
					return &LiveRowError{Row: i, Err: fmt.Errorf("%w: turn %q", ErrLiveConflict, t.TurnID)}
				} else {
					out[i] = LiveResult{Record: []byte(rec), Repeat: true}
				}
				continue
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("store: live turn %q: %w", t.TurnID, err)
			}
			state, seen := states[t.SessionID]
			if !seen {
				var s sql.NullString
				if err := getState.QueryRowContext(ctx, t.SessionID).Scan(&s); err != nil && !errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("store: live session %q: %w", t.SessionID, err)
				}
				if s.Valid {
					state = []byte(s.String)
				} else {
					state = nil
				}
			}
			r, next, err := step(i, state)
			if err != nil {
				return &LiveRowError{Row: i, Err: fmt.Errorf("turn %q: %w", t.TurnID, err)}
			}
			if !r.Verdict.Valid() {
				return fmt.Errorf("%w: turn %q: verdict %q is not one of the five", ErrInvalid, t.TurnID, r.Verdict)
			}
			buf.Reset()
			if err := enc.Encode(&r); err != nil {
				return fmt.Errorf("store: turn %q: encode record: %w", t.TurnID, err)
			}
			js := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if _, err := putTurn.ExecContext(ctx, t.TurnID, t.SessionID, datasetID, runID, seq, lt.Digest, now); err != nil {
				return fmt.Errorf("store: live turn %q: %w", t.TurnID, err)
			}
			if _, err := putVerdict.ExecContext(ctx, runID, seq, r.TurnID, r.SessionID, r.CharacterID, r.ModelID, t.PromptID,
				string(r.Verdict), r.Summary, nullString(t.ReplyText), string(js)); err != nil {
				return fmt.Errorf("store: live verdict %q: %w", t.TurnID, err)
			}
			seq++
			byVerdict[r.Verdict]++
			if !seen {
				order = append(order, t.SessionID)
			}
			states[t.SessionID] = next
			counts[t.SessionID]++
			out[i] = LiveResult{Record: append([]byte(nil), js...)}
		}
		for _, s := range order {
			js, ok := states[s].([]byte)
			if !ok {
				var err error
				if js, err = json.Marshal(states[s]); err != nil {
					return fmt.Errorf("store: live session %q: encode state: %w", s, err)
				}
			}
			if _, err := st.putSession.ExecContext(ctx,
				s, string(js), counts[s], now); err != nil {
				return fmt.Errorf("store: live session %q: %w", s, err)
			}
		}
		if len(order) == 0 {
			return nil
		}
		b, err := json.Marshal(byVerdict)
		if err != nil {
			return err
		}
		_, err = st.putTally.ExecContext(ctx, seq, string(b), now, runID)
		return err
	}()
	if err != nil {
		return nil, 0, err
	}
	return out, runID, nil
}

// liveRun returns the live run of datasetID, creating it (and its live_run
// row) inside tx when there is none.
func liveRun(ctx context.Context, tx *sql.Tx, st *liveStmts, db *DB, datasetID int64, meta RunMeta) (int64, error) {
	var id int64
	err := st.getLiveRun.QueryRowContext(ctx, datasetID).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("store: live run: %w", err)
	}
	endings := meta.Endings
	if endings == nil {
		endings = []string{}
	}
	eb, err := json.Marshal(endings)
	if err != nil {
		return 0, err
	}
	zero := map[persona.Verdict]int{}
	for _, v := range persona.Verdicts {
		zero[v] = 0
	}
	bv, err := json.Marshal(zero)
	if err != nil {
		return 0, err
	}
	now := db.stamp()
	res, err := tx.ExecContext(ctx, `INSERT INTO run (dataset_id, started_at, finished_at, profile, endings, fingerprints, prompt_version, by_verdict)
    VALUES (?, ?, ?, ?, ?, '{}', '', ?)`, datasetID, now, now, meta.Profile, string(eb), string(bv))
	if err != nil {
		return 0, fmt.Errorf("store: live run for dataset %d: %w", datasetID, err)
	}
	if id, err = res.LastInsertId(); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO live_run (dataset_id, run_id) VALUES (?, ?)", datasetID, id); err != nil {
		return 0, fmt.Errorf("store: live run for dataset %d: %w", datasetID, err)
	}
	return id, nil
}

// LiveRecord returns the stored record JSON of live turn turnID (as
// JudgeLive returned it), or ErrNotFound.
func (db *DB) LiveRecord(ctx context.Context, turnID string) ([]byte, error) {
	var rec string
	err := db.sql.QueryRowContext(ctx, `SELECT v.record FROM live_turn t
    JOIN verdict v ON v.run_id = t.run_id AND v.seq = t.seq WHERE t.turn_id = ?`, turnID).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: live turn %q", ErrNotFound, turnID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: live turn %q: %w", turnID, err)
	}
	return []byte(rec), nil
}

// LiveState returns the stored state JSON of live session sessionID and the
// number of its judged live turns; nil and 0 when it has none.
func (db *DB) LiveState(ctx context.Context, sessionID string) ([]byte, int, error) {
	var state string
	var n int
	err := db.sql.QueryRowContext(ctx, "SELECT state, turns FROM live_session WHERE session_id = ?", sessionID).Scan(&state, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("store: live session %q: %w", sessionID, err)
	}
	return []byte(state), n, nil
}

// LiveRunID returns the id of dataset datasetID's live run; ok is false when
// no live turn was judged against it yet.
func (db *DB) LiveRunID(ctx context.Context, datasetID int64) (id int64, ok bool, err error) {
	err = db.sql.QueryRowContext(ctx, "SELECT run_id FROM live_run WHERE dataset_id = ?", datasetID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: live run of dataset %d: %w", datasetID, err)
	}
	return id, true, nil
}

// IsLiveRun reports whether run runID is a dataset's live run (one that grows
// as live turns arrive; it has no precomputed summary).
func (db *DB) IsLiveRun(ctx context.Context, runID int64) (bool, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM live_run WHERE run_id = ?", runID).Scan(&n); err != nil {
		return false, fmt.Errorf("store: live run %d: %w", runID, err)
	}
	return n > 0, nil
}

// LiveJudgeKey names what a live judge is built from: dataset datasetID, or
// the latest complete dataset when datasetID is 0, and a version of its cards
// that changes when one is added or updated (UpdateCard), so a caller may
// keep the judge it built until the version changes. ErrNotFound when there
// is no such (complete) dataset.
func (db *DB) LiveJudgeKey(ctx context.Context, datasetID int64) (id int64, version string, err error) {
	q := liveQueueOf(db)
	q.prep.Lock()
	if q.judgeKey == nil {
		q.judgeKey, err = db.sql.PrepareContext(ctx, liveJudgeKeySQL)
	}
	stmt := q.judgeKey
	q.prep.Unlock()
	if err != nil {
		return 0, "", fmt.Errorf("store: live judge key: %w", err)
	}
	err = stmt.QueryRowContext(ctx, datasetID).Scan(&id, &version)
	if errors.Is(err, sql.ErrNoRows) {
		if datasetID == 0 {
			return 0, "", fmt.Errorf("%w: no dataset yet", ErrNotFound)
		}
		return 0, "", fmt.Errorf("%w: dataset %d", ErrNotFound, datasetID)
	}
	if err != nil {
		return 0, "", fmt.Errorf("store: live judge key: %w", err)
	}
	return id, version, nil
}

const liveJudgeKeySQL = `SELECT d.id, (SELECT count(*) || '/' || coalesce(max(c.updated_at), '')
    FROM character_card c WHERE c.dataset_id = d.id)
    FROM dataset d WHERE d.complete = 1 AND (?1 = 0 OR d.id = ?1) ORDER BY d.id DESC LIMIT 1`
