package store

import (
	"bytes"
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"evident/persona"
	"evident/persona/live"
)

// Live judging (migrations 0006 and 0013): turns judged one at a time by the
// live API, each session's state kept between requests and restarts, and a
// growing run per dataset holding their verdict rows.
//
// Decisions where the spec is silent:
//   - turn_id is unique across all live turns (not per dataset): a re-send
//     is recognised whichever dataset it names.
//   - A session's state (persona/live.State; it does not depend on cards)
//     is kept per session_id, whatever dataset judged its turns, as rows
//     (migration 0013): live_session, its header (turns, untimed, the
//     latest stamp); live_mention, one row per entity the session named
//     (the seqs of its two first mentions); live_cited, one row per cited
//     turn (turn_id, reply_text, created_at, once however many mentions
//     refer to it). A group writes what its steps changed (live.Change):
//     the header, the mentions added or moved, the cited turns added or
//     dropped — never the whole state, whose size (bounded by
//     live.Limits.MaxStateBytes) a turn no longer pays for. The rows are
//     read back, whole, only for a session the live state cache does not
//     hold current.
//   - The live run of a dataset is an ordinary run row with finished_at set
//     when it is created, so run lists show it at once; each JudgeLive
//     transaction appends its verdict rows and updates the run's judged,
//     by_verdict and finished_at (the time of the last live turn). It has no
//     precomputed summary and no fingerprints. IsLiveRun tells it apart.
//   - Speed (issue 17's targets; measured with bench/live.sh): concurrent
//     calls share one transaction (group commit, no batching window),
//     without a savepoint a call unless one fails, each session's changed
//     rows written once at the group's end (liveGroup.write); each
//     session's decoded state stays in memory between groups, capped in
//     bytes (SetLiveCache, DefaultLiveCache) and used only while the stored
//     header's turn count says no other handle or process judged the
//     session since (the rows stay the truth: a restart starts with an
//     empty cache and loses nothing); a call of several turns judges on a second
//     goroutine while the writer inserts; a group's connection keeps its
//     savepoints' sub-journal in memory and a 16 MiB page cache; live
//     commits leave checkpoints to a background goroutine ("Checkpoints").
//   - A live record is persona.AppendRecord's bytes, the batch output's
//     (U+2028 and U+2029 unescaped); before this store wrote
//     encoding/json's, which escaped them. Stored records are answered as
//     stored, so a re-send of an older turn gets the older bytes.

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
// st, which it changes in place, and returns the turn's record and what it
// changed (persona/live.Limits.Step does both). st is a new State for a
// session with no live turn yet, else the state the session's rows hold —
// read from them, or the copy the store kept in memory after an earlier
// call (the live state cache, see SetLiveCache; used only while the stored
// header says no other writer has judged the session since). The store
// hands a state to one step at a time and forgets it when the call that
// changed it stores nothing. The change is written at the end of the call
// (or of its group): the session's header, and of its rows only those the
// change names. An error rejects the row and, with it, the whole call; the
// step must then leave st as it was (live.Limits.Step does), or at least
// the store will not keep it.
type LiveStep func(i int, st *live.State) (persona.Record, live.Change, error)

// JudgeLive judges turns in order against dataset datasetID's live run, in
// one write transaction: for each turn, a stored turn_id with the same digest
// gives the stored record (Repeat), one with another digest ErrLiveConflict;
// otherwise step judges it with its session's state, and the record, the
// verdict row in the live run and the session's new state are written. A
// turn_id repeated inside turns is treated the same way against its first
// occurrence. meta describes the live run when this call creates it (its
// DatasetID is set to datasetID); a call whose turns are all repeats creates
// none. It returns one result per turn and the live run's id (0 when the
// dataset has none: such a call). On any error nothing of the call is stored (one transaction,
// rolled back): a *LiveRowError for the first turn that could not be judged
// (a conflict, a step error), else a fatal error (SQLite, an unknown dataset,
// a record that does not encode, a context ended).
//
// Concurrent calls on one DB are written together (group commit, below):
// a call waits at most for the group being written and then for its own
// group, whatever the number of callers.
func (db *DB) JudgeLive(ctx context.Context, datasetID int64, meta RunMeta, turns []LiveTurn, step LiveStep) ([]LiveResult, int64, error) {
	return db.judgeLive(&liveCall{ctx: ctx, datasetID: datasetID, meta: meta, turns: turns, step: step})
}

// LiveKey names the judge a JudgeLiveKeyed call judges with: LiveJudgeKey's
// answer for the dataset asked for.
type LiveKey struct {
	Asked   int64  // the dataset asked for; 0 for the latest complete one
	ID      int64  // the dataset LiveJudgeKey answered
	Version string // the version of its cards LiveJudgeKey answered
}

// LiveKeyError is JudgeLiveKeyed's error when LiveJudgeKey(Asked), asked
// inside the call's transaction, no longer answers the call's key: Now is
// its answer then, or, with Err set (ErrNotFound), there is no such
// complete dataset now. Nothing of the call is stored: judge again with a
// judge built for Now.
type LiveKeyError struct {
	Now LiveKey
	Err error
}

func (e *LiveKeyError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("store: live judge of dataset %d: %v", e.Now.Asked, e.Err)
	}
	return fmt.Sprintf("store: live judge: dataset %d's cards are now version %q of dataset %d", e.Now.Asked, e.Now.Version, e.Now.ID)
}

// Unwrap gives Err (ErrNotFound when the dataset is gone), or nil.
func (e *LiveKeyError) Unwrap() error { return e.Err }

// JudgeLiveKeyed is JudgeLive against dataset key.ID, but only while key is
// still what LiveJudgeKey(key.Asked) answers, checked inside the call's
// write transaction — so a judge built from the cards of key.Version
// judges only turns stored while those cards are the stored ones — else a
// *LiveKeyError with the key now, nothing stored. The check costs no query
// of the caller's: one per group of concurrent calls and asked id, on the
// live writer's connection (whose page cache stays warm, where a pooled
// connection's is dropped each time another connection has committed).
func (db *DB) JudgeLiveKeyed(ctx context.Context, key LiveKey, meta RunMeta, turns []LiveTurn, step LiveStep) ([]LiveResult, int64, error) {
	return db.judgeLive(&liveCall{ctx: ctx, datasetID: key.ID, key: &key, meta: meta, turns: turns, step: step})
}

// judgeLive queues c and returns its outcome (group commit, below).
func (db *DB) judgeLive(c *liveCall) ([]LiveResult, int64, error) {
	c.done, c.lead = make(chan struct{}), make(chan struct{})
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
	// Yield once before taking the queue: callers already running (on a
	// busy server, requests being decoded) reach it and join this group
	// instead of waiting for the next. No timer: it only lets runnable
	// goroutines run (50 concurrent single-turn clients: about 15 % less
	// CPU a turn, fewer and larger commits).
	runtime.Gosched()
	q.mu.Lock()
	calls := q.pending
	q.pending = nil
	q.mu.Unlock()
	db.judgeLiveCalls(q, calls)
	for {
		q.mu.Lock()
		if len(q.pending) > 0 {
			close(q.pending[0].lead) // the oldest waiter writes the next group
			q.mu.Unlock()
			break
		}
		if q.conn == nil {
			q.busy = false
			q.mu.Unlock()
			break
		}
		q.mu.Unlock()
		q.releaseConn() // still busy: a call arriving meanwhile waits for the lead
	}
	<-c.done
	return c.out, c.runID, c.err
}

// Group commit: concurrent JudgeLive calls on one DB queue up while one of
// them writes; when the writer is done it hands the queue to the oldest
// waiter, which yields once (runtime.Gosched) and takes every call queued
// by then — no batching window, no timer: the calls that arrived while a
// group was written are the next group — and writes them in one
// transaction (a call that fails stores nothing and the others still
// commit: see liveGroup.write for how, without a savepoint a call). One
// transaction per group instead of per call is what keeps 50 concurrent
// single-turn requests from queueing behind 50 commits; SQLite has one
// writer anyway, and waiting in its busy handler sleeps. Per group, not per
// call, the live run's tally is read and written once per dataset, and the
// live state of each session is read once (or not at all, below).
//
// The live state cache: after a group commits, the new state of each
// session it judged stays in memory (the *live.State its steps changed), at
// most SetLiveCache bytes of them (counted as their State.Bytes, the stored
// JSON's length, plus liveEntryOverhead), least recently judged first out.
// The store's rows stay the truth: a group reads each session's header,
// whose turns only grows, and the kept state is used only when the count is
// the one this DB wrote — else the session's rows are read and the state
// rebuilt (live.Restore). So a second DB handle or process judging the session
// meanwhile is never answered from a stale copy, and a restart starts
// empty. A kept state leaves the cache while a group uses it (the step may
// change it in place); it comes back only when that group commits.

// liveCall is one JudgeLive call waiting for, or in, a group.
type liveCall struct {
	ctx       context.Context
	datasetID int64
	key       *LiveKey // JudgeLiveKeyed's, checked in the group; nil for JudgeLive
	meta      RunMeta
	turns     []LiveTurn
	step      LiveStep

	out   []LiveResult
	runID int64
	err   error
	done  chan struct{} // closed when out, runID and err are set
	lead  chan struct{} // closed to make this call write the next group
}

// liveQueue is one DB's queue of live calls, its live state cache, and the
// live statements prepared once on the DB (database/sql keeps each prepared
// per connection; a group transaction takes them with Tx.StmtContext, which
// reuses the connection's, so a group parses no SQL once its connection has
// seen them).
type liveQueue struct {
	mu      sync.Mutex
	pending []*liveCall
	busy    bool // a call is writing a group

	cache   liveCache
	ckpt    liveCheckpoints
	retries atomic.Int64 // groups written again with savepoints (tests read it)

	// The live writer's connection while the queue is busy, and its
	// wal_autocheckpoint (-1: not set yet); see liveInTx.
	conn     *sql.Conn
	connAuto int

	// The buffer the writer reuses between groups (only the writer uses it).
	enc recordEncoder

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
	q, _ := liveQueues.LoadOrStore(db, &liveQueue{cache: liveCache{max: DefaultLiveCache}})
	return q.(*liveQueue)
}

// DefaultLiveCache is the live state cache's default cap: 64 MiB of states,
// counted as their State.Bytes (stored JSON) plus liveEntryOverhead each (a
// decoded persona/live.State takes about 1–3 times its JSON; its
// reply_texts, the bulk, are the same bytes). About 100,000 sessions of the
// demo log's size, and at least 32 of the largest (live.Limits'
// MaxStateBytes, 2 MiB by default).
const DefaultLiveCache = 64 << 20

// liveEntryOverhead is what the cache counts per kept state beyond its
// Bytes and session_id: the list element, map slot and decoded form's
// headers.
const liveEntryOverhead = 256

// SetLiveCache sets the cap of db's live state cache (see JudgeLive) to
// maxBytes, evicting the least recently judged states beyond it; 0 (or
// less) keeps no state in memory, every group reading and decoding the
// stored rows. Safe to call at any time.
func (db *DB) SetLiveCache(maxBytes int64) {
	c := &liveQueueOf(db).cache
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = max(maxBytes, 0)
	c.evict()
}

// LiveCacheStats returns what db's live state cache holds now: the number of
// sessions and the bytes they count for (see SetLiveCache).
func (db *DB) LiveCacheStats() (sessions int, bytes int64) {
	c := &liveQueueOf(db).cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.used
}

// liveCache is the live state cache: an LRU of session states by session_id,
// capped in bytes.
type liveCache struct {
	mu   sync.Mutex
	max  int64
	used int64
	m    map[string]*list.Element // of *liveEntry
	lru  list.List                // most recently put at the front
}

// liveEntry is one kept state and the session's live_session.turns when
// it was stored.
type liveEntry struct {
	session string
	state   *live.State
	turns   int64
	cost    int64
}

// take removes and returns session's kept state, nil when none.
func (c *liveCache) take(session string) *liveEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[session]
	if el == nil {
		return nil
	}
	e := c.lru.Remove(el).(*liveEntry)
	delete(c.m, session)
	c.used -= e.cost
	return e
}

// put keeps e (replacing a kept state of its session) and evicts beyond the
// cap.
func (c *liveCache) put(e *liveEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.cost > c.max {
		if el := c.m[e.session]; el != nil {
			c.used -= c.lru.Remove(el).(*liveEntry).cost
			delete(c.m, e.session)
		}
		return
	}
	if c.m == nil {
		c.m = map[string]*list.Element{}
	}
	if el := c.m[e.session]; el != nil {
		c.used -= el.Value.(*liveEntry).cost
		el.Value = e
		c.lru.MoveToFront(el)
	} else {
		c.m[e.session] = c.lru.PushFront(e)
	}
	c.used += e.cost
	c.evict()
}

// evict drops the least recently put states until used ≤ max; c.mu held.
func (c *liveCache) evict() {
	for c.used > c.max {
		el := c.lru.Back()
		e := c.lru.Remove(el).(*liveEntry)
		delete(c.m, e.session)
		c.used -= e.cost
	}
}

// judgeLiveCalls writes calls in one transaction (a second, one savepoint a
// call, when a call fails in the first; see write) and closes their done
// channels; after a commit it keeps the group's session
// states in q's cache.
func (db *DB) judgeLiveCalls(q *liveQueue, calls []*liveCall) {
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
	var g *liveGroup
	attempt := func(savepoints bool) error {
		return db.liveInTx(ctx, q, func(tx *sql.Tx) error {
			g = &liveGroup{ctx: ctx, tx: tx, db: db, st: shared.in(ctx, tx), cache: &q.cache,
				runs: map[int64]*liveTally{}, work: map[string]*liveWork{}, now: db.stamp(),
				enc: &q.enc}
			err := g.write(calls, savepoints)
			q.enc.rec = keepBuf(q.enc.rec)
			return err
		})
	}
	if err == nil {
		err = attempt(false)
		if errors.Is(err, errLiveRetry) { // a call failed: again, each call in a savepoint
			q.retries.Add(1)
			for _, c := range calls {
				c.out, c.runID, c.err = nil, 0, nil
			}
			err = attempt(true)
		}
	}
	if err != nil {
		for _, c := range calls {
			if c.err == nil {
				c.out, c.runID, c.err = nil, 0, fmt.Errorf("store: live judging: %w", err)
			}
		}
		return
	}
	turns := 0
	for s, w := range g.work {
		if w.stored {
			q.cache.put(&liveEntry{session: s, state: w.state, turns: w.turns, cost: int64(w.state.Bytes()) + int64(len(s)) + liveEntryOverhead})
		}
	}
	for _, t := range g.runs {
		turns += int(t.added)
	}
	db.liveCommitted(q, turns)
}

// Checkpoints: SQLite's WAL is copied back into the database file by a
// checkpoint, which by default the committing connection runs inside its
// COMMIT once the WAL holds 1,000 pages: a copy of megabytes and two fsyncs
// while the live queue waits behind it, every few hundred turns — the
// single-turn requests' tail latency (an fsync on a busy disk takes tens of
// milliseconds). So a live group's connection commits with automatic
// checkpoints off, and every liveCheckpointTurns committed live turns (or
// liveCheckpointGroups groups, when they are small) a goroutine runs a
// PASSIVE checkpoint on a connection of the pool while the next groups are
// written (WAL mode lets a checkpoint and a writer run together; the other
// core does the copy). Should the WAL still hold more
// than liveWALLimit pages after one (writers kept it from restarting), or a
// checkpoint fail, live groups commit with SQLite's automatic checkpoint
// again until a background one leaves the WAL small: the WAL never grows
// without bound. Other writers of the store keep SQLite's default.
//
// The WAL's restart: SQLite writes the WAL from its start again only when
// a write transaction begins with every frame copied back, which under
// steady live traffic never happens on its own — the groups committed while
// a background checkpoint copies are always left over — so the WAL grew by
// every frame written (20,000 frames, 320 MiB of 16 KiB pages, in 10,000
// single-turn requests) until liveWALLimit switched inline checkpoints on;
// and appending to a file costs its file system twice what overwriting
// allocated blocks does (ext4 here: 13.5 against 6.4 µs a 16 KiB frame,
// two system calls each). So the background goroutine runs a second pass
// right after the first (it copies only what was committed during the
// first: a few milliseconds' worth), and then asks the writer to catch up
// (catchUp): the next group runs one more PASSIVE checkpoint on its own
// connection before it begins, copying the last few frames while the queue
// waits (a fraction of a millisecond), so that its transaction finds the
// WAL fully copied and restarts it (unless a reader still reads from it:
// then the next cycle tries again).

// liveCheckpointTurns is how many committed live turns start a background
// checkpoint: about SQLite's 1,000 pages at 1.3 to 2 pages a turn.
const liveCheckpointTurns = 600

// liveCheckpointGroups is how many committed live groups start one too,
// whatever their turns: at low rates each request is a group of its own,
// and a single-turn group writes about 14 frames (a page of each B-tree it
// touches), so 600 such turns left 8,000 frames (130 MiB of 16 KiB pages)
// for one checkpoint to copy — 80 ms of disk and CPU that the requests
// around it waited behind. About 1,000 frames: SQLite's own default.
const liveCheckpointGroups = 75

// liveWALLimit is the WAL size, in pages, past which live groups go back to
// SQLite's automatic checkpoint (about 80 MiB of 4 KiB pages).
var liveWALLimit = 20_000

// liveCheckpoints is a DB's background checkpoint state.
type liveCheckpoints struct {
	running atomic.Bool
	since   atomic.Int64                     // live turns committed since the last one started
	groups  atomic.Int64                     // live groups committed since then
	inline  atomic.Bool                      // commit with SQLite's automatic checkpoint
	catchUp atomic.Bool                      // the next group first copies what is left (catchUpWAL)
	start   func()                           // tests: called before each one
	done    func(log, copied int, err error) // tests: called after each one (the first pass's figures)

	caughtUp func(log, copied int) // tests: called after the writer's catch-up
}

// liveCommitted counts turns committed by a group and starts a background
// checkpoint when they reach liveCheckpointTurns (none for an in-memory
// store: it has no WAL).
func (db *DB) liveCommitted(q *liveQueue, turns int) {
	if db.path == MemoryPath || turns == 0 {
		return
	}
	ck := &q.ckpt
	if ck.since.Add(int64(turns)) < liveCheckpointTurns && ck.groups.Add(1) < liveCheckpointGroups || !ck.running.CompareAndSwap(false, true) {
		return
	}
	ck.since.Store(0)
	ck.groups.Store(0)
	go func() {
		defer ck.running.Store(false)
		if ck.start != nil {
			ck.start()
		}
		var busy, log, copied int
		err := db.sql.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied)
		if err == nil { // the frames committed meanwhile ("The WAL's restart")
			var b, l, c int
			if db.sql.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&b, &l, &c) == nil {
				log = l
			}
			ck.catchUp.Store(true)
		}
		ck.inline.Store(err != nil || log > liveWALLimit)
		if ck.done != nil {
			ck.done(log, copied, err)
		}
	}()
}

// catchUpWAL is the writer's part of the WAL's restart (above): when a
// background checkpoint has finished since the last group, one more
// PASSIVE checkpoint on the writer's connection before its transaction
// begins. Its error is not the group's (a checkpoint that fails leaves the
// WAL as it was; the transaction will report a broken connection itself).
func (q *liveQueue) catchUpWAL(ctx context.Context) {
	ck := &q.ckpt
	if !ck.catchUp.Load() || ck.running.Load() {
		return
	}
	ck.catchUp.Store(false)
	var busy, log, copied int
	q.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied)
	if ck.caughtUp != nil {
		ck.caughtUp(log, copied)
	}
}

// liveInTx is inTx (store.go) on the live writer's connection (q.conn): a
// connection of the pool that the queue keeps while it is busy — from the
// group that finds the queue idle to the one that leaves it idle — set up
// for live groups when taken and set back when given back (releaseConn):
//   - the savepoints' sub-journal in memory (temp_store = MEMORY; else
//     each savepoint spilled its pages to a temporary file: a third of a
//     single-turn group's CPU was those writes);
//   - a page cache of liveCacheKiB (a 1,000-turn call dirties more pages
//     than SQLite's default 2 MiB holds, which made it spill pages to the
//     WAL mid-transaction and read them back);
//   - automatic checkpoints off ("Checkpoints" above), on while the
//     checkpointer asks for them (ckpt.inline);
//   - foreign key checks off: every row a live group writes references
//     the live run of its dataset (live_turn, verdict, live_run) or that
//     dataset, and liveRun creates a live run only for a complete dataset,
//     which it checks; neither is ever deleted (only incomplete datasets
//     and runs are: deleteTarget). The checks were a B-tree seek a row,
//     and made each multi-row verdict INSERT keep a statement journal.
//
// One connection for every group of a busy period keeps its page cache
// valid (SQLite empties a connection's cache when another connection
// committed since its last transaction: with each group on another pooled
// connection, every group read its index pages again). Given back, the
// connection's temp_store and wal_autocheckpoint are SQLite's defaults
// again (the screen's queries sort in temporary files as before) and its
// foreign key checks on; its larger cache stays. A connection whose setting cannot be restored is
// closed, not reused. Only the queue's current writer calls liveInTx,
// takes or gives back q.conn.
func (db *DB) liveInTx(ctx context.Context, q *liveQueue, fn func(*sql.Tx) error) error {
	if db.readOnly {
		return fmt.Errorf("%w: %s", ErrReadOnly, db.path)
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if q.conn == nil {
		conn, err := db.sql.Conn(ctx)
		if err != nil {
			return err
		}
		q.conn, q.connAuto = conn, -1
		if _, err := conn.ExecContext(ctx, livePragmas); err != nil {
			q.releaseConn()
			return err
		}
	}
	auto := 0
	if q.ckpt.inline.Load() {
		auto = 1000
	}
	if auto != q.connAuto {
		if _, err := q.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", auto)); err != nil {
			q.releaseConn()
			return err
		}
		q.connAuto = auto
	}
	q.catchUpWAL(ctx)
	// Another process's import lets the group in between two batches,
	// as it does a review decision (waitlock.go): without this a group
	// waited in SQLite's busy handler, up to 1.6 s during an import.
	done := db.announceWait()
	defer done()
	if db.onLiveTx != nil {
		inner := fn
		fn = func(tx *sql.Tx) error { db.onLiveTx(); return inner(tx) }
	}
	return connTx(ctx, q.conn, fn, q.releaseConn)
}

// releaseConn gives the live writer's connection back to the pool, its
// settings restored (or closed when they cannot be).
func (q *liveQueue) releaseConn() {
	conn := q.conn
	q.conn = nil
	if conn == nil {
		return
	}
	if _, err := conn.ExecContext(context.Background(), livePragmasAfter); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // database/sql closes it
	}
	conn.Close()
}

// liveCacheKiB is the page cache of a connection that wrote a live group:
// 16 MiB, several times what a 1,000-turn call dirties. At most the pool's
// idle connections (16) hold one, and only those that wrote live groups.
const liveCacheKiB = 16 << 10

// livePragmas set the live writer's connection up (liveInTx);
// livePragmasAfter set back what the screen's queries and other writers on
// the connection expect (1,000: SQLite's default automatic checkpoint).
var (
	livePragmas      = fmt.Sprintf("PRAGMA temp_store = MEMORY; PRAGMA cache_size = -%d; PRAGMA foreign_keys = OFF", liveCacheKiB)
	livePragmasAfter = "PRAGMA temp_store = DEFAULT; PRAGMA wal_autocheckpoint = 1000; PRAGMA foreign_keys = ON"
)

// liveGroup is one group's transaction and what its calls share.
type liveGroup struct {
	ctx   context.Context
	tx    *sql.Tx
	db    *DB
	st    *liveStmts
	cache *liveCache
	runs  map[int64]*liveTally // by dataset id: the live runs this group writes
	work  map[string]*liveWork // by session_id: states as this group left them
	now   string               // the group's time stamp
	enc   *recordEncoder       // the record encoder of calls judged inline (q.enc)

	keys map[int64]liveKeyNow // LiveJudgeKey's answers by asked id (checkKey)

	// Without savepoints (see write) a session's changes are written once,
	// at the group's end, however many of its calls judged the session:
	// dirty lists those sessions in the order first judged.
	deferStates bool
	dirty       []string
}

// liveTally is a live run's judged count (the next seq) and by_verdict as
// this group's committed calls left them.
type liveTally struct {
	runID     int64
	seq       int64
	byVerdict map[persona.Verdict]int
	dirty     bool  // a call added turns: write the tally at the end
	added     int64 // turns the group's committed calls added
	created   bool  // this group created the run (liveRun)
}

// liveWork is a session's state as this group's calls left it, its
// live_session.turns in the transaction, and what its steps changed that
// is not written yet (the entities and cited turns of their live.Changes,
// each once, in the order first changed).
type liveWork struct {
	state   *live.State
	turns   int64
	stored  bool  // a committed call of the group wrote it
	pending int64 // turns judged but not yet written to the header (deferStates)

	entities []string            // whose mention rows to write
	seqs     []int               // whose cited-turn rows to write or delete
	seen     map[string]struct{} // entities' set
	seenSeq  map[int]struct{}    // seqs' set
}

// note adds ch to what w has to write.
func (w *liveWork) note(ch *live.Change) {
	for _, e := range ch.Entities {
		if _, ok := w.seen[e]; !ok {
			if w.seen == nil {
				w.seen = map[string]struct{}{}
			}
			w.seen[e] = struct{}{}
			w.entities = append(w.entities, e)
		}
	}
	seq := func(n int) {
		if _, ok := w.seenSeq[n]; !ok {
			if w.seenSeq == nil {
				w.seenSeq = map[int]struct{}{}
			}
			w.seenSeq[n] = struct{}{}
			w.seqs = append(w.seqs, n)
		}
	}
	if ch.Added {
		seq(ch.Seq)
	}
	for _, d := range ch.Dropped {
		seq(d)
	}
}

// written forgets what w had to write.
func (w *liveWork) written() {
	w.entities, w.seqs = w.entities[:0], w.seqs[:0]
	clear(w.seen)
	clear(w.seenSeq)
}

// errLiveRollback rolls back a group of one call that failed (the call
// keeps its own error).
var errLiveRollback = errors.New("store: live call failed")

// errLiveRetry rolls back a group of several calls, written without
// savepoints, in which one failed: judgeLiveCalls writes it again with one
// savepoint a call (see write).
var errLiveRetry = errors.New("store: live group retried with savepoints")

// write writes calls in g's transaction, then the live runs' tallies. With
// savepoints, each call is in one of its own (none for a group of one call:
// the transaction is its savepoint), so a failing call is undone alone.
// Without, a failing call ends the group with errLiveRetry (a group of one
// call: errLiveRollback), nothing of it stored.
//
// Why two ways: a savepoint copies each page a call changes first into the
// sub-journal (in memory, temp_store = MEMORY), which took a quarter of a
// 50-client single-turn group's SQLite time with 16 KiB pages, for calls
// that almost never fail — a failing call is a client error (a conflicting
// re-send; unknown characters are refused before JudgeLive). So a group is
// first written without savepoints, and only a group in which a call failed
// is rolled back and written again with them: every call judged twice, the
// same records and errors as with savepoints from the start (each call sees
// the same stored state; the states its steps changed in place were taken
// out of the cache, so the second pass reads them from the rows).
func (g *liveGroup) write(calls []*liveCall, savepoints bool) error {
	st := g.st
	single := len(calls) == 1
	savepoints = savepoints && !single
	g.deferStates = !savepoints
	for _, c := range calls {
		if c.err = c.ctx.Err(); c.err != nil {
			if single {
				return errLiveRollback
			}
			continue // nothing of it written yet
		}
		if c.key != nil {
			if c.err = g.checkKey(c.key); c.err != nil {
				if single {
					return errLiveRollback
				}
				continue // nothing of it written
			}
		}
		if savepoints {
			if _, err := st.savepoint.ExecContext(g.ctx); err != nil {
				return err
			}
		}
		c.out, c.runID, c.err = g.call(c)
		if c.err != nil {
			c.out, c.runID = nil, 0
			switch {
			case single:
				return errLiveRollback
			case !savepoints:
				return errLiveRetry
			}
			if _, err := st.rollbackTo.ExecContext(g.ctx); err != nil {
				return err
			}
		}
		if savepoints {
			if _, err := st.release.ExecContext(g.ctx); err != nil {
				return err
			}
		}
	}
	for _, s := range g.dirty {
		w := g.work[s]
		if err := g.putState(s, w); err != nil {
			return err
		}
	}
	for _, t := range g.runs {
		if !t.dirty {
			continue
		}
		b, err := json.Marshal(t.byVerdict)
		if err != nil {
			return err
		}
		if _, err := st.putTally.ExecContext(g.ctx, t.seq, string(b), g.now, t.runID); err != nil {
			return fmt.Errorf("store: live run %d: %w", t.runID, err)
		}
	}
	return nil
}

// checkKey returns nil when key is LiveJudgeKey's answer for key.Asked in
// g's transaction (asked once a group for each asked id), else a
// *LiveKeyError (or the query's error).
func (g *liveGroup) checkKey(key *LiveKey) error {
	now, ok := g.keys[key.Asked]
	if !ok {
		now = liveKeyNow{key: LiveKey{Asked: key.Asked}}
		switch err := g.st.judgeKey.QueryRowContext(g.ctx, key.Asked).Scan(&now.key.ID, &now.key.Version); {
		case errors.Is(err, sql.ErrNoRows):
			now.err = fmt.Errorf("%w: dataset %d", ErrNotFound, key.Asked)
			if key.Asked == 0 {
				now.err = fmt.Errorf("%w: no dataset yet", ErrNotFound)
			}
		case err != nil:
			return fmt.Errorf("store: live judge key: %w", err)
		}
		if g.keys == nil {
			g.keys = map[int64]liveKeyNow{}
		}
		g.keys[key.Asked] = now
	}
	if now.err != nil {
		return &LiveKeyError{Now: now.key, Err: now.err}
	}
	if now.key != *key {
		return &LiveKeyError{Now: now.key}
	}
	return nil
}

// liveKeyNow is LiveJudgeKey's answer in a group's transaction.
type liveKeyNow struct {
	key LiveKey
	err error // ErrNotFound wrapped
}

// liveVerdictSQL inserts one live verdict row. A call's rows go in
// rowsPerInsert at a time (multiRow; see writeBatch.write): a row that fails
// fails its call, whose rows the group's rollback or the call's savepoint
// undoes (liveGroup.write), so INSERT OR FAIL keeping the rows before it
// changes nothing.
const liveVerdictCols = 11 // its parameters

const liveVerdictSQL = `INSERT INTO verdict (run_id, seq, turn_id, session_id, character_id,
    model_id, prompt_id, verdict, summary, reply_text, record, summary_source)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS TEXT), 'rule')`

// multiRowUpsert is multiRow(q, k) as a plain INSERT (no OR FAIL), so that
// an ON CONFLICT clause may follow it.
func multiRowUpsert(q string, k int) string {
	return strings.Replace(multiRow(q, k), "INSERT OR FAIL INTO", "INSERT INTO", 1)
}

// liveMentionSQL writes one mention row of a session's state (putState):
// by_arrival never changes once written (live.Change), by_time may.
const liveMentionCols = 4

const liveMentionSQL = `INSERT INTO live_mention (session_id, entity, by_arrival, by_time) VALUES (?, ?, ?, ?)`

const liveMentionUpsert = ` ON CONFLICT (session_id, entity) DO UPDATE SET by_time = excluded.by_time`

// liveStateSQL reads a session's state rows — its header (kind 0), cited
// turns (1) and mentions (2) — in one statement, so that a reader outside
// a write transaction sees one snapshot of them (LiveState).
const liveStateSQL = `SELECT 0, turns, untimed, latest_turn_id, latest_created_at, NULL FROM live_session WHERE session_id = ?1
    UNION ALL SELECT 1, seq, 0, turn_id, created_at, reply_text FROM live_cited WHERE session_id = ?1
    UNION ALL SELECT 2, by_arrival, by_time, entity, NULL, NULL FROM live_mention WHERE session_id = ?1`

// liveStmts are a group transaction's statements.
type liveStmts struct {
	getTurn, getHeader, getRows, putTurn, putVerdict *sql.Stmt
	putVerdicts                                      *sql.Stmt // rowsPerInsert verdict rows (multiRow)
	savepoint, rollbackTo, release                   *sql.Stmt
	getLiveRun, getTally, putSession, putTally       *sql.Stmt
	putMention, putMentions, putCited, dropCited     *sql.Stmt
	judgeKey                                         *sql.Stmt
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
	return &liveStmts{
		getTurn: tx.StmtContext(ctx, st.getTurn), getHeader: tx.StmtContext(ctx, st.getHeader), getRows: tx.StmtContext(ctx, st.getRows),
		putTurn: tx.StmtContext(ctx, st.putTurn), putVerdict: tx.StmtContext(ctx, st.putVerdict),
		putVerdicts: tx.StmtContext(ctx, st.putVerdicts), savepoint: tx.StmtContext(ctx, st.savepoint),
		rollbackTo: tx.StmtContext(ctx, st.rollbackTo), release: tx.StmtContext(ctx, st.release),
		getLiveRun: tx.StmtContext(ctx, st.getLiveRun), getTally: tx.StmtContext(ctx, st.getTally),
		putSession: tx.StmtContext(ctx, st.putSession), putTally: tx.StmtContext(ctx, st.putTally),
		putMention: tx.StmtContext(ctx, st.putMention), putMentions: tx.StmtContext(ctx, st.putMentions),
		putCited: tx.StmtContext(ctx, st.putCited), dropCited: tx.StmtContext(ctx, st.dropCited),
		judgeKey: tx.StmtContext(ctx, st.judgeKey),
	}
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
		// The header; the rows only when the kept copy is not current.
		{&st.getHeader, "SELECT turns, untimed, latest_turn_id, latest_created_at FROM live_session WHERE session_id = ?"},
		{&st.getRows, "SELECT 1, seq, 0, turn_id, created_at, reply_text FROM live_cited WHERE session_id = ?1 UNION ALL SELECT 2, by_arrival, by_time, entity, NULL, NULL FROM live_mention WHERE session_id = ?1"},
		{&st.savepoint, "SAVEPOINT live_call"},
		{&st.rollbackTo, "ROLLBACK TO live_call"},
		{&st.release, "RELEASE live_call"},
		{&st.getLiveRun, "SELECT run_id FROM live_run WHERE dataset_id = ?"},
		{&st.getTally, "SELECT judged, by_verdict FROM run WHERE id = ?"},
		{&st.putSession, `INSERT INTO live_session (session_id, turns, untimed, latest_turn_id, latest_created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET turns = excluded.turns, untimed = excluded.untimed,
    latest_turn_id = excluded.latest_turn_id, latest_created_at = excluded.latest_created_at, updated_at = excluded.updated_at`},
		{&st.putMention, liveMentionSQL + liveMentionUpsert},
		{&st.putMentions, multiRowUpsert(liveMentionSQL, rowsPerInsert) + liveMentionUpsert},
		{&st.putCited, `INSERT INTO live_cited (session_id, seq, turn_id, reply_text, created_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (session_id, seq) DO NOTHING`},
		{&st.dropCited, "DELETE FROM live_cited WHERE session_id = ? AND seq = ?"},
		{&st.putTally, "UPDATE run SET judged = ?, by_verdict = ?, finished_at = ? WHERE id = ?"},
		{&st.judgeKey, liveJudgeKeySQL},
		// Inserted before the turn is judged: a stored turn_id inserts
		// nothing (one statement for a new turn instead of a look-up and an
		// insert); the call's savepoint undoes it when the call fails.
		{&st.putTurn, `INSERT INTO live_turn (turn_id, session_id, dataset_id, run_id, seq, digest, arrived_at)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id) DO NOTHING`},
		{&st.putVerdict, liveVerdictSQL},
		{&st.putVerdicts, multiRow(liveVerdictSQL, rowsPerInsert)},
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
	for _, s := range []*sql.Stmt{st.getTurn, st.getHeader, st.getRows, st.putTurn, st.putVerdict, st.putVerdicts, st.savepoint, st.rollbackTo,
		st.release, st.getLiveRun, st.getTally, st.putSession, st.putTally, st.putMention, st.putMentions, st.putCited, st.dropCited, st.judgeKey} {
		if s != nil {
			s.Close()
		}
	}
}

// tally returns the live run of datasetID as this group's calls left it,
// reading (or creating) it on the dataset's first call in the group; fresh
// tells the caller it did, so a failed call forgets it (the savepoint undoes
// a run it created).
func (g *liveGroup) tally(datasetID int64, meta RunMeta) (t *liveTally, fresh bool, err error) {
	if t := g.runs[datasetID]; t != nil {
		return t, false, nil
	}
	runID, created, err := liveRun(g.ctx, g.tx, g.st, g.db, datasetID, meta)
	if err != nil {
		return nil, false, err
	}
	t = &liveTally{runID: runID, byVerdict: map[persona.Verdict]int{}, created: created}
	var bv string
	if err := g.st.getTally.QueryRowContext(g.ctx, runID).Scan(&t.seq, &bv); err != nil {
		return nil, false, fmt.Errorf("store: live run %d: %w", runID, err)
	}
	if err := json.Unmarshal([]byte(bv), &t.byVerdict); err != nil {
		return nil, false, fmt.Errorf("store: live run %d tally: %w", runID, err)
	}
	g.runs[datasetID] = t
	return t, true, nil
}

// session returns session's state as this group left it, else the kept
// state when the header says it is current, else the state its rows hold
// (a new State for a session with no header row).
func (g *liveGroup) session(session string) (*liveWork, error) {
	if w := g.work[session]; w != nil {
		return w, nil
	}
	kept := g.cache.take(session)
	var h live.Header
	var untimed bool
	var latestID, latestAt sql.NullString
	w := &liveWork{}
	switch err := g.st.getHeader.QueryRowContext(g.ctx, session).Scan(&h.Turns, &untimed, &latestID, &latestAt); {
	case errors.Is(err, sql.ErrNoRows):
		w.state = &live.State{}
	case err != nil:
		return nil, fmt.Errorf("store: live session %q: %w", session, err)
	case kept != nil && kept.turns == int64(h.Turns): // no other writer since
		w.state, w.turns = kept.state, kept.turns
	default:
		h.Untimed = untimed
		if latestID.Valid {
			h.Latest = &live.Stamp{TurnID: latestID.String, CreatedAt: latestAt.String}
		}
		st, _, err := readLiveRows(g.ctx, g.st.getRows, session, &h)
		if err != nil {
			return nil, err
		}
		w.state, w.turns = st, int64(h.Turns)
	}
	g.work[session] = w
	return w, nil
}

// readLiveRows reads session's state rows with q (liveStateSQL's columns:
// kind 0 the header, 1 a cited turn, 2 a mention) and returns the state
// they hold; h is the header when q reads none (nil otherwise). found is
// false when there is no header (no such session: st is nil). Memory: the
// state (bounded by live.Limits.MaxStateBytes for a session judged under
// the limits).
func readLiveRows(ctx context.Context, q *sql.Stmt, session string, h *live.Header) (st *live.State, found bool, err error) {
	rows, err := q.QueryContext(ctx, session)
	if err != nil {
		return nil, false, fmt.Errorf("store: live session %q: %w", session, err)
	}
	defer rows.Close()
	type mention struct {
		entity string
		f      live.Firsts
	}
	var cited []live.Cited
	var mentions []mention
	for rows.Next() {
		var kind, n, m int
		var text, at, reply sql.NullString
		if err := rows.Scan(&kind, &n, &m, &text, &at, &reply); err != nil {
			return nil, false, fmt.Errorf("store: live session %q: %w", session, err)
		}
		switch kind {
		case 0:
			h = &live.Header{Turns: n, Untimed: m != 0}
			if text.Valid {
				h.Latest = &live.Stamp{TurnID: text.String, CreatedAt: at.String}
			}
		case 1:
			c := live.Cited{Seq: n, TurnID: text.String, CreatedAt: at.String}
			if reply.Valid {
				c.ReplyText = &reply.String
			}
			cited = append(cited, c)
		case 2:
			mentions = append(mentions, mention{text.String, live.Firsts{ByArrival: n, ByTime: m}})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: live session %q: %w", session, err)
	}
	if h == nil {
		return nil, false, nil
	}
	r := live.Restore(*h)
	for _, c := range cited {
		r.Cite(c)
	}
	for _, x := range mentions {
		r.Mention(x.entity, x.f)
	}
	if st, err = r.State(); err != nil {
		return nil, false, fmt.Errorf("store: live session %q: %w", session, err)
	}
	return st, true, nil
}

// keepBuf returns b emptied for reuse, or nil when it grew past 1 MiB (a
// huge row's buffer is not kept).
func keepBuf(b []byte) []byte {
	if cap(b) > 1<<20 {
		return nil
	}
	return b[:0]
}

// call is one call's part of a group's transaction. On an error it forgets
// what it changed in g (the caller rolls its savepoint back).
func (g *liveGroup) call(c *liveCall) ([]LiveResult, int64, error) {
	tally, fresh, err := g.tally(c.datasetID, c.meta)
	if err != nil {
		return nil, 0, err
	}
	counts := map[string]int{} // sessions this call judged: turns each, in order
	var order []string
	out, seq, delta, err := g.turns(c, tally, counts, &order)
	if err != nil {
		for _, s := range order {
			delete(g.work, s) // the step may have changed them in place
		}
		if fresh {
			delete(g.runs, c.datasetID)
		}
		return nil, 0, err
	}
	if tally.created && seq == 0 {
		// Only repeats (of turns judged against another dataset, say), and
		// the live run this group created holds nothing: it goes again.
		for _, q := range []string{"DELETE FROM live_run WHERE run_id = ?", "DELETE FROM run WHERE id = ?"} {
			if _, err := g.tx.ExecContext(g.ctx, q, tally.runID); err != nil {
				return nil, 0, fmt.Errorf("store: live run %d: %w", tally.runID, err)
			}
		}
		delete(g.runs, c.datasetID)
		return out, 0, nil
	}
	tally.added += seq - tally.seq
	tally.seq = seq
	for v, n := range delta {
		tally.byVerdict[v] += n
		tally.dirty = true
	}
	for _, s := range order {
		g.work[s].stored = true
	}
	return out, tally.runID, nil
}

// turns judges and writes c's turns after tally's rows and then each judged
// session's state; it returns the results, the next seq and the verdicts
// added. counts and order get the sessions it judged (order even on error).
//
// A call of several turns is written in two passes over a pipeline, so
// that SQLite's inserts and the judging run on two cores: the first pass
// claims each turn_id (its live_turn row) and reads its session, and hands
// each new turn, in order, to a goroutine that steps and encodes them one
// at a time in that order (steps are never concurrent, and each session's
// see its turns in order, as in one pass); the second pass writes the
// verdict rows as their records come back. The first failing row is the
// one reported, as in one pass: the first pass stops at a conflict, and a
// step error of an earlier row wins over it.
func (g *liveGroup) turns(c *liveCall, tally *liveTally, counts map[string]int, order *[]string) ([]LiveResult, int64, map[persona.Verdict]int, error) {
	ctx, st := g.ctx, g.st
	out := make([]LiveResult, len(c.turns))
	p := newJudgePipe(c, len(c.turns) > 1, g.enc)
	defer p.stop()
	first := map[string]int{} // turn_id → its row, for the new turns of this call
	dupOf := map[int]int{}    // a row repeating an earlier new row of this call → that row
	var newRows []int
	var conflict error // a conflict found by the first pass (no row after it is looked at)
	for i, lt := range c.turns {
		if err := c.ctx.Err(); err != nil {
			return nil, 0, nil, err
		}
		t := lt.Turn
		seq := tally.seq + int64(len(newRows))
		res, err := st.putTurn.ExecContext(ctx, t.TurnID, t.SessionID, c.datasetID, tally.runID, seq, lt.Digest, g.now)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("store: live turn %q: %w", t.TurnID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, 0, nil, fmt.Errorf("store: live turn %q: %w", t.TurnID, err)
		} else if n == 0 { // judged before, or earlier in this call
			if f, ok := first[t.TurnID]; ok { // its verdict row is not written yet
				if c.turns[f].Digest != lt.Digest {
					conflict = &LiveRowError{Row: i, Err: fmt.Errorf("%w: turn %q", ErrLiveConflict, t.TurnID)}
					break
				}
				dupOf[i] = f
				continue
			}
			var digest, rec string
			if err := st.getTurn.QueryRowContext(ctx, t.TurnID).Scan(&digest, &rec); err != nil {
				return nil, 0, nil, fmt.Errorf("store: live turn %q: %w", t.TurnID, err)
			}
			if digest != lt.Digest {
				conflict = &LiveRowError{Row: i, Err: fmt.Errorf("%w: turn %q", ErrLiveConflict, t.TurnID)}
				break
			}
			out[i] = LiveResult{Record: []byte(rec), Repeat: true}
			continue
		}
		first[t.TurnID] = i
		if counts[t.SessionID] == 0 {
			*order = append(*order, t.SessionID) // before the step: it may change the state
		}
		w, err := g.session(t.SessionID)
		if err != nil {
			return nil, 0, nil, err
		}
		counts[t.SessionID]++
		w.turns++
		newRows = append(newRows, i)
		p.send(i, w)
	}
	p.close()
	delta := map[persona.Verdict]int{}
	var args []any // verdict rows not yet inserted, liveVerdictCols each
	first0 := 0    // the newRows index of the first of them
	for k, i := range newRows {
		j := p.recv()
		if j.err != nil {
			return nil, 0, nil, j.err
		}
		r, t := &j.rec, c.turns[i].Turn
		args = append(args, tally.runID, tally.seq+int64(k), r.TurnID, r.SessionID, r.CharacterID, r.ModelID, t.PromptID,
			string(r.Verdict), r.Summary, nullString(t.ReplyText), j.jsb)
		if len(args) == rowsPerInsert*liveVerdictCols {
			if _, err := st.putVerdicts.ExecContext(ctx, args...); err != nil {
				return nil, 0, nil, fmt.Errorf("store: live verdicts of turns %q to %q: %w", c.turns[newRows[first0]].Turn.TurnID, t.TurnID, err)
			}
			args, first0 = args[:0], k+1
		}
		delta[r.Verdict]++
		out[i] = LiveResult{Record: j.jsb}
	}
	for k := 0; k < len(args); k += liveVerdictCols {
		if _, err := st.putVerdict.ExecContext(ctx, args[k:k+liveVerdictCols]...); err != nil {
			return nil, 0, nil, fmt.Errorf("store: live verdict %q: %w", args[k+2], err)
		}
	}
	if conflict != nil {
		return nil, 0, nil, conflict
	}
	for i, f := range dupOf {
		out[i] = LiveResult{Record: out[f].Record, Repeat: true}
	}
	for _, s := range *order {
		w := g.work[s]
		if g.deferStates {
			if w.pending == 0 {
				g.dirty = append(g.dirty, s)
			}
			w.pending += int64(counts[s])
			continue
		}
		if err := g.putState(s, w); err != nil {
			return nil, 0, nil, err
		}
	}
	return out, tally.seq + int64(len(newRows)), delta, nil
}

// putState writes what session's steps changed (w) to its rows: the
// header (its turns the state's), the mention row of each changed entity
// (rowsPerInsert a statement), and each changed cited turn's row, inserted
// while the state cites it, deleted once it does not (a turn added and
// dropped in one group is neither). A cited turn's fields never change, and
// an entity's row only by by_time (live.Change).
func (g *liveGroup) putState(session string, w *liveWork) error {
	st := g.st
	h := w.state.Header()
	var latestID, latestAt any
	if h.Latest != nil {
		latestID, latestAt = h.Latest.TurnID, h.Latest.CreatedAt
	}
	if _, err := st.putSession.ExecContext(g.ctx, session, h.Turns, h.Untimed, latestID, latestAt, g.now); err != nil {
		return fmt.Errorf("store: live session %q: %w", session, err)
	}
	args := make([]any, 0, min(len(w.entities), rowsPerInsert)*liveMentionCols)
	for _, e := range w.entities {
		f, ok := w.state.Mention(e)
		if !ok {
			return fmt.Errorf("store: live session %q: the step changed entity %q that its state does not hold", session, e)
		}
		args = append(args, session, e, f.ByArrival, f.ByTime)
		if len(args) == rowsPerInsert*liveMentionCols {
			if _, err := st.putMentions.ExecContext(g.ctx, args...); err != nil {
				return fmt.Errorf("store: live session %q mentions: %w", session, err)
			}
			args = args[:0]
		}
	}
	for k := 0; k < len(args); k += liveMentionCols {
		if _, err := st.putMention.ExecContext(g.ctx, args[k:k+liveMentionCols]...); err != nil {
			return fmt.Errorf("store: live session %q mention %q: %w", session, args[k+1], err)
		}
	}
	for _, seq := range w.seqs {
		c, ok := w.state.Cited(seq)
		var err error
		if ok {
			_, err = st.putCited.ExecContext(g.ctx, session, c.Seq, c.TurnID, nullString(c.ReplyText), c.CreatedAt)
		} else {
			_, err = st.dropCited.ExecContext(g.ctx, session, seq)
		}
		if err != nil {
			return fmt.Errorf("store: live session %q cited turn %d: %w", session, seq, err)
		}
	}
	w.written()
	return nil
}

// judgePipe steps and encodes a call's new turns in order: on a goroutine
// of its own when piped, else at send.
type judgePipe struct {
	c       *liveCall
	jobs    chan judgeJob // piped: to the goroutine
	results chan judged   // piped: from it, in order
	done    chan struct{} // piped: closed when the goroutine returned
	queue   []judged      // not piped: the results
	failed  bool          // a step failed: later turns are not stepped (the judging goroutine's)
	abort   atomic.Bool   // the call ended: step nothing more
	enc     *recordEncoder
	closed  bool
}

type judgeJob struct {
	row int
	w   *liveWork
}

// judged is one new turn's outcome: its record and stored JSON, or the
// row's error.
type judged struct {
	rec persona.Record
	jsb []byte
	err error
}

// newJudgePipe returns c's pipe; inline is the encoder it uses when not
// piped.
func newJudgePipe(c *liveCall, piped bool, inline *recordEncoder) *judgePipe {
	p := &judgePipe{c: c, enc: inline}
	if piped {
		p.enc = new(recordEncoder)                 // the goroutine's own
		p.jobs = make(chan judgeJob, len(c.turns)) // never blocks: at most one job a turn
		p.results = make(chan judged, len(c.turns))
		p.done = make(chan struct{})
		go func() {
			defer close(p.done)
			for job := range p.jobs {
				p.results <- p.judge(job)
			}
		}()
	}
	return p
}

// judge steps and encodes one turn (nothing after a failed one). On the
// pipe's goroutine when piped: it alone touches job.w's state and changes
// until the results are read.
func (p *judgePipe) judge(job judgeJob) judged {
	if p.failed || p.abort.Load() {
		return judged{err: errLiveRollback}
	}
	t := p.c.turns[job.row].Turn
	r, ch, err := p.c.step(job.row, job.w.state)
	if err != nil {
		p.failed = true
		return judged{err: &LiveRowError{Row: job.row, Err: fmt.Errorf("turn %q: %w", t.TurnID, err)}}
	}
	job.w.note(&ch)
	if !r.Verdict.Valid() {
		p.failed = true
		return judged{err: fmt.Errorf("%w: turn %q: verdict %q is not one of the five", ErrInvalid, t.TurnID, r.Verdict)}
	}
	js, err := p.enc.encode(&r)
	if err != nil {
		p.failed = true
		return judged{err: fmt.Errorf("store: turn %q: encode record: %w", t.TurnID, err)}
	}
	return judged{rec: r, jsb: bytes.Clone(js)}
}

func (p *judgePipe) send(row int, w *liveWork) {
	if p.jobs != nil {
		p.jobs <- judgeJob{row, w}
		return
	}
	p.queue = append(p.queue, p.judge(judgeJob{row, w}))
}

// close says no more turns come.
func (p *judgePipe) close() {
	if p.jobs != nil && !p.closed {
		close(p.jobs)
	}
	p.closed = true
}

// recv returns the next turn's outcome, in send order.
func (p *judgePipe) recv() judged {
	if p.jobs != nil {
		return <-p.results
	}
	j := p.queue[0]
	p.queue = p.queue[1:]
	return j
}

// stop ends the goroutine (stepping nothing more) and waits for it, so no
// state is changed after the call returns.
func (p *judgePipe) stop() {
	if p.jobs == nil {
		return
	}
	p.abort.Store(true)
	p.close()
	<-p.done
}

// liveRun returns the live run of datasetID, creating it (and its live_run
// row) inside tx when there is none; created says it did.
func liveRun(ctx context.Context, tx *sql.Tx, st *liveStmts, db *DB, datasetID int64, meta RunMeta) (id int64, created bool, err error) {
	err = st.getLiveRun.QueryRowContext(ctx, datasetID).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("store: live run: %w", err)
	}
	endings := meta.Endings
	if endings == nil {
		endings = []string{}
	}
	eb, err := json.Marshal(endings)
	if err != nil {
		return 0, false, err
	}
	zero := map[persona.Verdict]int{}
	for _, v := range persona.Verdicts {
		zero[v] = 0
	}
	bv, err := json.Marshal(zero)
	if err != nil {
		return 0, false, err
	}
	// The live connection does not check foreign keys (liveInTx): the
	// dataset must be checked here, once per live run.
	var complete int
	switch err := tx.QueryRowContext(ctx, "SELECT complete FROM dataset WHERE id = ?", datasetID).Scan(&complete); {
	case errors.Is(err, sql.ErrNoRows) || err == nil && complete != 1:
		return 0, false, fmt.Errorf("store: live run for dataset %d: %w", datasetID, ErrNotFound)
	case err != nil:
		return 0, false, fmt.Errorf("store: live run for dataset %d: %w", datasetID, err)
	}
	now := db.stamp()
	res, err := tx.ExecContext(ctx, `INSERT INTO run (dataset_id, started_at, finished_at, profile, endings, fingerprints, prompt_version, by_verdict)
    VALUES (?, ?, ?, ?, ?, '{}', '', ?)`, datasetID, now, now, meta.Profile, string(eb), string(bv))
	if err != nil {
		return 0, false, fmt.Errorf("store: live run for dataset %d: %w", datasetID, err)
	}
	if id, err = res.LastInsertId(); err != nil {
		return 0, false, err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO live_run (dataset_id, run_id) VALUES (?, ?)", datasetID, id); err != nil {
		return 0, false, fmt.Errorf("store: live run for dataset %d: %w", datasetID, err)
	}
	return id, true, nil
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

// LiveState returns the state of live session sessionID in its stored
// form (persona/live.State.AppendJSON, rebuilt from its rows, read in one
// statement) and the number of its judged live turns; nil and 0 when it has
// none. Memory: the state, at most live.Limits.MaxStateBytes for a session
// judged under the limits.
func (db *DB) LiveState(ctx context.Context, sessionID string) ([]byte, int, error) {
	q, err := db.sql.PrepareContext(ctx, liveStateSQL)
	if err != nil {
		return nil, 0, fmt.Errorf("store: live session %q: %w", sessionID, err)
	}
	defer q.Close()
	st, found, err := readLiveRows(ctx, q, sessionID, nil)
	if err != nil || !found {
		return nil, 0, err
	}
	return st.AppendJSON(nil), st.Header().Turns, nil
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
