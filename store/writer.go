package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Bounded writes (issue 13 item 2). An Importer or RunWriter holds the rows
// it is given in a batch (a writeBatch) and writes the batch in one short
// transaction once it is full, so SQLite's write lock is held only while a
// batch is written, never while the caller reads or judges. Its dataset or
// run row is committed first, marked incomplete (dataset.complete = 0,
// run.finished_at NULL), and marked complete in the transaction of the last
// batch; readers show only complete ones.
//
// A writer that dies (a killed process) leaves its committed batches behind,
// invisible. Whether a writer is gone is told by a lock file beside the
// database, PATH-import-N.lock or PATH-run-N.lock, created and flock(2)ed
// (exclusive, non-blocking) in the transaction that inserts the row and
// removed when the writer ends: the kernel drops the lock when the process
// dies, however it dies, so a lock that can be taken belongs to no live
// writer (and a pid that was reused cannot fool it). Whoever reclaims takes
// that lock first, so two processes never reclaim the same writer. An
// in-memory database has no files and no other process: its open writers
// are listed in DB.live. Open and every BeginImport / BeginRun reclaim
// (reclaim): they delete the rows of every incomplete dataset or run whose
// writer is gone, a batch at a time.

// reclaimBatch is how many rows one reclaiming (or rollback) delete removes
// in one transaction.
const reclaimBatch = 20000

// writerKinds maps a writer kind to its target table and the condition that
// the target is still incomplete.
var writerKinds = map[string]struct{ table, incomplete string }{
	"import": {"dataset", "complete = 0"},
	"run":    {"run", "finished_at IS NULL"},
}

// writerLock is this process's claim on one writer's target: held by the
// writer from BeginImport/BeginRun to its end, or by a reclaim while it
// deletes a dead writer's rows.
type writerLock struct {
	db   *DB
	key  string   // "import 3"
	f    *os.File // the flocked lock file; nil for an in-memory DB
	path string
}

func (db *DB) memory() bool { return db.path == MemoryPath }

func (db *DB) lockPath(kind string, id int64) string {
	return fmt.Sprintf("%s-%s-%d.lock", db.path, kind, id)
}

// acquireWriter takes the lock of a writer whose row was just inserted by
// the write transaction the caller holds.
func (db *DB) acquireWriter(kind string, id int64) (*writerLock, error) {
	l, ok, err := db.tryLock(kind, id, true)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("store: %s %d: its lock %s is held by another writer", kind, id, db.lockPath(kind, id))
	}
	return l, nil
}

// tryLock takes the lock of (kind, id) when no live writer holds it. ok is
// false when one does. Where this system cannot tell (no flock: see
// lockFile) a writer always gets its lock (acquire) and a reclaim never
// does: every writer counts as alive.
func (db *DB) tryLock(kind string, id int64, acquire bool) (*writerLock, bool, error) {
	key := kind + " " + strconv.FormatInt(id, 10)
	if db.memory() {
		db.liveMu.Lock()
		defer db.liveMu.Unlock()
		if db.live[key] {
			return nil, false, nil
		}
		if db.live == nil {
			db.live = map[string]bool{}
		}
		db.live[key] = true
		return &writerLock{db: db, key: key}, true, nil
	}
	path := db.lockPath(kind, id)
	if !flockWorks {
		if acquire {
			return &writerLock{db: db, key: key}, true, nil
		}
		return nil, false, nil
	}
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("store: writer lock: %w", err)
		}
		ok, err := lockFile(f)
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("store: writer lock %s: %w", path, err)
		}
		if !ok {
			f.Close()
			return nil, false, nil
		}
		// A holder's release removes the file, then unlocks it: a lock
		// taken on a file opened before that remove is a lock on a file no
		// longer at path (another may have created and locked a new one
		// there meanwhile). Only the file at path counts; else try again.
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return &writerLock{db: db, key: key, f: f, path: path}, true, nil
		}
		f.Close()
	}
}

// release ends the claim: the lock file is removed, then unlocked.
func (l *writerLock) release() {
	if l == nil {
		return
	}
	if l.f == nil {
		l.db.liveMu.Lock()
		delete(l.db.live, l.key)
		l.db.liveMu.Unlock()
		return
	}
	os.Remove(l.path)
	l.f.Close()
	l.f = nil
}

// reclaim deletes the rows of every incomplete dataset and run whose writer
// is gone, and lock files no writer holds. It reads first and takes the
// write lock only when there is something to check. Nothing on a read-only DB.
func (db *DB) reclaim(ctx context.Context) error {
	if db.readOnly {
		return nil
	}
	type target struct {
		kind string
		id   int64
	}
	var cands []target
	// Runs first: a dead run of a dead import (Importer.BeginRun) must go
	// before its dataset, whose delete would otherwise meet the run's rows.
	for _, kind := range []string{"run", "import"} {
		k := writerKinds[kind]
		rows, err := db.sql.QueryContext(ctx, "SELECT id FROM "+k.table+" WHERE "+k.incomplete+" ORDER BY id")
		if err != nil {
			return fmt.Errorf("reclaim: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("reclaim: %w", err)
			}
			cands = append(cands, target{kind, id})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("reclaim: %w", err)
		}
	}
	reclaimed := false
	for _, c := range cands {
		var lk *writerLock
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			k := writerKinds[c.kind]
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+k.table+" WHERE id = ? AND "+k.incomplete, c.id).Scan(&n); err != nil || n == 0 {
				return err // finished (or reclaimed) meanwhile
			}
			l, ok, err := db.tryLock(c.kind, c.id, false)
			if ok {
				lk = l
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("reclaim %s %d: %w", c.kind, c.id, err)
		}
		if lk == nil {
			continue // its writer is alive
		}
		err = db.deleteTarget(ctx, c.kind, c.id)
		lk.release()
		if err != nil {
			return fmt.Errorf("reclaim %s %d: %w", c.kind, c.id, err)
		}
		reclaimed = true
	}
	if reclaimed {
		db.shrinkAfterRollback(ctx) // as a rollback does: a killed import's pages (best effort)
	}
	return db.removeStaleLocks(ctx)
}

// removeStaleLocks removes lock files beside the database that no writer
// holds and whose target is complete or gone (left by a process that died
// between its last commit and removing the file), and the wait file
// (waitlock.go) when no writer's lock file is left.
func (db *DB) removeStaleLocks(ctx context.Context) error {
	if db.memory() {
		return nil
	}
	dir, base := filepath.Split(db.path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // nothing to clean that we can see
	}
	writers := false
	defer func() {
		if !writers && db.bulkRefsNow() == 0 {
			db.removeWaitFile()
		}
	}()
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+"-")
		if !ok || !strings.HasSuffix(rest, ".lock") {
			continue
		}
		kind, num, ok := strings.Cut(strings.TrimSuffix(rest, ".lock"), "-")
		id, err := strconv.ParseInt(num, 10, 64)
		if _, known := writerKinds[kind]; !ok || !known || err != nil {
			continue
		}
		err = db.inTx(ctx, func(tx *sql.Tx) error {
			k := writerKinds[kind]
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+k.table+" WHERE id = ? AND "+k.incomplete, id).Scan(&n); err != nil || n > 0 {
				writers = writers || n > 0
				return err // an incomplete target is reclaim's business
			}
			l, ok, err := db.tryLock(kind, id, false)
			if ok {
				l.release()
			} else {
				writers = true // held: a writer is still ending
			}
			return err
		})
		if err != nil {
			writers = true
			return fmt.Errorf("reclaim: %w", err)
		}
	}
	return nil
}

// bulkRefsNow is bulkRefs, read under wmu.
func (db *DB) bulkRefsNow() int {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	return db.bulkRefs
}

// childTables returns the tables (and column) with a foreign key to table,
// read from the schema, so rows of tables added by later migrations are
// deleted too.
func childTables(ctx context.Context, q querier, table string) ([][2]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT m.name, f."from" FROM sqlite_master m, pragma_foreign_key_list(m.name) f
    WHERE m.type = 'table' AND f."table" = ? ORDER BY m.name`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return nil, err
		}
		out = append(out, [2]string{t, c})
	}
	return out, rows.Err()
}

// deleteTarget deletes an incomplete dataset or run: its rows in every child
// table, reclaimBatch rows per transaction, then the row itself. A complete
// target is never touched (the last delete checks the condition).
func (db *DB) deleteTarget(ctx context.Context, kind string, id int64) error {
	k := writerKinds[kind]
	children, err := childTables(ctx, db.sql, k.table)
	if err != nil {
		return err
	}
	for _, ch := range children {
		q := fmt.Sprintf(`DELETE FROM %q WHERE rowid IN (SELECT rowid FROM %q WHERE %q = ?1 LIMIT %d)
    AND EXISTS (SELECT 1 FROM %s WHERE id = ?1 AND %s)`, ch[0], ch[0], ch[1], reclaimBatch, k.table, k.incomplete)
		for {
			var n int64
			err := db.inTx(ctx, func(tx *sql.Tx) error {
				res, err := tx.ExecContext(ctx, q, id)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return fmt.Errorf("delete %s rows of %s %d: %w", ch[0], kind, id, err)
			}
			if n == 0 {
				break
			}
		}
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM "+k.table+" WHERE id = ? AND "+k.incomplete, id)
		return err
	})
}

// writeBatch holds the rows an Importer or RunWriter was given since its
// last flush, already converted to column values (the caller may reuse what
// it passed), and writes them in one transaction.
type writeBatch struct {
	db      *DB
	ctx     context.Context
	queries []string // INSERT statements, by index
	errf    []func(p *pendingRow, err error) error
	rows    []pendingRow
	bytes   int
	keys    map[string]struct{} // UNIQUE keys in rows, to refuse a repeat at once
	// then, when set, is asked after each row's insert for one more
	// statement of queries to run with args in the same transaction (a
	// verdict row's search index entry, keyed by the row's rowid); ok false
	// for none.
	then func(p *pendingRow, res sql.Result) (stmt int, args []any, ok bool, err error)
	// behind, when set, makes add hand a full batch to a goroutine that
	// writes it while the caller fills the next (the caller judges and
	// the store writes at the same time, on two cores): at most one batch
	// is being written, so the batch holds at most twice its bound. That
	// write's error is returned by the next add, flush or wait; the row it
	// names (errf) is still the row that failed. then runs on that
	// goroutine, one batch at a time, as it does in flush.
	behind  bool
	writing chan behindResult // the batch being written; nil when none
	settled behindResult      // its outcome, once settle took it, until wait
}

// behindResult is a batch written behind: its error and its row slice,
// emptied, for the next batch to reuse.
type behindResult struct {
	err  error
	rows []pendingRow
}

// pendingRow is one row waiting in a writeBatch.
type pendingRow struct {
	stmt int
	args []any
	id   string // the row's key, for errors
	n    int    // its 1-based number among the rows of its kind
}

// add queues one row and writes the batch when it is full. key, when not
// "", must be unique among the rows of the batch (the table's UNIQUE
// constraint checks the rest at the flush); a repeat fails with dup's error.
func (b *writeBatch) add(row pendingRow, size int, key string, dup func() error) error {
	if b.writing != nil {
		select { // a batch written behind that has ended: take its outcome now
		case b.settled = <-b.writing:
			b.writing = nil
		default:
		}
	}
	if b.settled.err != nil {
		return b.settled.err
	}
	if key != "" {
		if _, ok := b.keys[key]; ok {
			return dup()
		}
		if b.keys == nil {
			b.keys = map[string]struct{}{}
		}
		b.keys[key] = struct{}{}
	}
	b.rows = append(b.rows, row)
	b.bytes += size
	if len(b.rows) >= max(b.db.batchRows, 1) || b.bytes >= b.db.batchBytes {
		if b.behind {
			return b.flushBehind()
		}
		return b.flush(nil)
	}
	return nil
}

// flushBehind waits for the batch being written, then starts writing the
// queued rows on a goroutine and returns; the next batch fills a fresh
// slice (the previous batch's, once it is written).
func (b *writeBatch) flushBehind() error {
	spare, err := b.wait()
	if err != nil {
		return err
	}
	rows := b.rows
	b.rows, b.bytes = spare[:0], 0
	clear(b.keys) // a repeat across batches is the table's UNIQUE error, as in flush
	ch := make(chan behindResult, 1)
	b.writing = ch
	go func() {
		err := b.write(rows, nil)
		clear(rows) // drop references for the collector
		ch <- behindResult{err: err, rows: rows[:0]}
	}()
	return nil
}

// wait waits for the batch being written behind and returns its emptied
// row slice and its error (nil, nil when none was written since the last
// wait).
func (b *writeBatch) wait() ([]pendingRow, error) {
	b.settle()
	r := b.settled
	b.settled = behindResult{}
	return r.rows, r.err
}

// settle waits for the batch being written behind and keeps its outcome
// for the next wait: after it, what the batch committed is visible.
func (b *writeBatch) settle() {
	if b.writing != nil {
		b.settled = <-b.writing
		b.writing = nil
	}
}

// flush writes the queued rows, then final (when not nil), in one write
// transaction, after the batch being written behind (whose error it
// returns instead, writing nothing).
func (b *writeBatch) flush(final func(tx *sql.Tx) error) error {
	if _, err := b.wait(); err != nil {
		return err
	}
	err := b.write(b.rows, final)
	clear(b.rows) // drop references for the collector
	b.rows, b.bytes = b.rows[:0], 0
	clear(b.keys)
	return err
}

// write writes rows, then final (when not nil), in one write transaction
// (DB.batchTx). Rows are inserted rowsPerInsert at a time where they can be
// (no then, rowsPerInsert consecutive rows of one statement), with INSERT OR
// FAIL: a statement that meets a constraint keeps the rows it inserted
// before, so SQLite needs no statement journal for it (with ABORT, each
// statement's journal held a copy of every page it changed, 16 KiB each,
// spilled to a file). Such a failure rolls the whole transaction back and
// the batch is written again one row at a time, so that its error names the
// row. After a batch that is not the last, writes that wait for the write
// lock go first (yieldToWaiters).
//
// While writes keep waiting (DB.waitersSeen), the batch goes in
// transactions of chunkRows rows, with a shorter yield after each (see
// chunkRows); final runs in the last.
func (b *writeBatch) write(rows []pendingRow, final func(tx *sql.Tx) error) error {
	bound := b.db.yieldMax()
	if chunk := b.db.chunkSize(); b.db.waitersSeen() && len(rows) > chunk {
		bound = bound * time.Duration(chunk) / time.Duration(max(b.db.batchRows, chunk))
		for len(rows) > chunk {
			if err := b.writeOne(rows[:chunk], nil, bound); err != nil {
				return err
			}
			rows = rows[chunk:]
		}
	}
	return b.writeOne(rows, final, bound)
}

// chunkSize is chunkRows, or the test's.
func (db *DB) chunkSize() int {
	if db.chunkBound > 0 {
		return db.chunkBound
	}
	return chunkRows
}

// writeOne is write's transaction for rows (then final), and, when final
// is nil, the yield after it, for at most bound.
func (b *writeBatch) writeOne(rows []pendingRow, final func(tx *sql.Tx) error, bound time.Duration) error {
	err := b.writeTx(rows, final, b.then == nil)
	if errors.Is(err, errByRow) {
		err = b.writeTx(rows, final, false)
	}
	if err == nil && final == nil {
		b.db.yieldFor(b.ctx, bound) // a decision waiting goes before the next batch (waitlock.go)
	}
	return err
}

// errByRow is writeTx's error when a multi-row INSERT met a constraint.
var errByRow = errors.New("store: a multi-row insert met a constraint")

// writeTx is write's transaction; grouped says whether rows may be
// inserted rowsPerInsert at a time.
func (b *writeBatch) writeTx(rows []pendingRow, final func(tx *sql.Tx) error, grouped bool) error {
	return b.db.batchTx(b.ctx, func(tx *sql.Tx) error {
		stmts := make([]*sql.Stmt, len(b.queries))
		multi := make([]*sql.Stmt, len(b.queries)) // rowsPerInsert rows at once
		defer func() {
			for _, s := range append(stmts, multi...) {
				if s != nil {
					s.Close()
				}
			}
		}()
		var args []any
		for i := 0; i < len(rows); i++ {
			p := &rows[i]
			if grouped && i+rowsPerInsert <= len(rows) && sameStmt(rows[i:i+rowsPerInsert]) {
				if multi[p.stmt] == nil {
					s, err := tx.PrepareContext(b.ctx, multiRow(b.queries[p.stmt], rowsPerInsert))
					if err != nil {
						return err
					}
					multi[p.stmt] = s
				}
				args = args[:0]
				for k := i; k < i+rowsPerInsert; k++ {
					args = append(args, rows[k].args...)
				}
				if _, err := multi[p.stmt].ExecContext(b.ctx, args...); err != nil {
					if sqliteCode(err) == sqliteConstraint {
						return errByRow
					}
					return fmt.Errorf("%w (rows %d to %d of the batch)", b.errf[p.stmt](p, err), p.n, rows[i+rowsPerInsert-1].n)
				}
				i += rowsPerInsert - 1
				continue
			}
			if stmts[p.stmt] == nil {
				s, err := tx.PrepareContext(b.ctx, b.queries[p.stmt])
				if err != nil {
					return err
				}
				stmts[p.stmt] = s
			}
			res, err := stmts[p.stmt].ExecContext(b.ctx, p.args...)
			if err != nil {
				return b.errf[p.stmt](p, err)
			}
			if b.then == nil {
				continue
			}
			stmt, args, ok, err := b.then(p, res)
			if err == nil && ok {
				if stmts[stmt] == nil {
					if stmts[stmt], err = tx.PrepareContext(b.ctx, b.queries[stmt]); err != nil {
						return err
					}
				}
				_, err = stmts[stmt].ExecContext(b.ctx, args...)
			}
			if err != nil {
				return b.errf[stmt](p, err)
			}
		}
		if final != nil {
			return final(tx)
		}
		return nil
	})
}

// rowsPerInsert is how many rows of one statement write inserts with one
// multi-row INSERT OR FAIL (… VALUES (…), (…), …): SQLite's work per
// statement (a cursor opened and closed on each of the table's B-trees) and
// database/sql's per call are then paid once per rowsPerInsert rows. 32
// rows of the widest statement bind 448 parameters, far below SQLite's
// limit of 32,766.
const rowsPerInsert = 32

// multiRow turns q, an INSERT INTO … VALUES (…), into the INSERT OR FAIL
// of k rows.
func multiRow(q string, k int) string {
	i := strings.LastIndex(q, "VALUES") + len("VALUES")
	tuple := strings.TrimSpace(q[i:])
	var sb strings.Builder
	sb.Grow(i + k*(len(tuple)+2))
	sb.WriteString(strings.Replace(q[:i], "INSERT INTO", "INSERT OR FAIL INTO", 1))
	for j := range k {
		if j > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte(' ')
		sb.WriteString(tuple)
	}
	return sb.String()
}

// sameStmt reports whether rows all use one statement.
func sameStmt(rows []pendingRow) bool {
	for i := range rows {
		if rows[i].stmt != rows[0].stmt {
			return false
		}
	}
	return true
}

// rollbackTarget is a writer's Rollback: it deletes what its batches
// committed and the row, with a context that is not cancelled (a cancelled
// import must still clean up), then releases the lock. When the deletes
// fail, the rows stay invisible and the next reclaim removes them. A store
// the rollback left mostly free is then shrunk (shrinkAfterRollback, best
// effort: its error is dropped, the rollback having succeeded).
func (db *DB) rollbackTarget(ctx context.Context, kind string, id int64, lk *writerLock) error {
	defer lk.release()
	ctx = context.WithoutCancel(ctx)
	if err := db.deleteTarget(ctx, kind, id); err != nil {
		return fmt.Errorf("store: roll back %s %d: %w", kind, id, err)
	}
	db.shrinkAfterRollback(ctx)
	return nil
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool { return sqliteCode(err) == 5 }

// sqliteCode is the primary result code (extended code & 0xff) of a SQLite
// error in err's chain, or -1 when there is none.
// sqliteConstraint is SQLITE_CONSTRAINT, the primary result code of a
// failed UNIQUE, CHECK, NOT NULL or foreign key constraint.
const sqliteConstraint = 19

func sqliteCode(err error) int {
	var se interface{ Code() int }
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return -1
}
