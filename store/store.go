package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"evident/internal/backoff"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// MemoryPath is the --db value that opens a private in-memory database
// instead of a file (see Open).
const MemoryPath = ":memory:"

// BusyTimeout is how long a statement waits for another connection's lock
// (a writer's transaction, or a checkpoint) before failing with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// Errors returned by this package; test with errors.Is. Errors from SQLite
// itself (a UNIQUE or CHECK violation, SQLITE_BUSY) are wrapped with context
// and keep the driver's error in their chain.
var (
	// ErrNotFound: the dataset, run, card, record or decision asked for does
	// not exist (or belongs to a run that was never committed).
	ErrNotFound = errors.New("store: not found")
	// ErrSchemaTooNew: the database was written by a newer evident whose
	// schema version this build does not know; Open refuses it.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this program")
	// ErrInvalid: an argument breaks a documented rule (unknown verdict or
	// queue, empty key or who, a tally that disagrees with the records).
	ErrInvalid = errors.New("store: invalid argument")
	// ErrClosed: an Importer or RunWriter was used after Commit, Rollback or
	// a failed Add.
	ErrClosed = errors.New("store: writer already finished")
	// ErrAlreadyUndone: Undo of a decision that was undone before.
	ErrAlreadyUndone = errors.New("store: decision already undone")
	// ErrSchemaTooOld: OpenReadOnly found a database whose schema is older
	// than this program's; a read-only open cannot migrate it (Open can).
	ErrSchemaTooOld = errors.New("store: database schema is older than this program")
	// ErrReadOnly: a write (import, run, decision, gold, …) on a DB opened
	// with OpenReadOnly.
	ErrReadOnly = errors.New("store: database opened read-only")
	// ErrNotWritable: Open could not write the file (SQLite's
	// SQLITE_READONLY: the file or its directory is not writable by this
	// process); OpenReadOnly can still read it.
	ErrNotWritable = errors.New("store: the store can only be read here")
	// ErrIndexBusy: IndexRunText of a run whose search index another
	// IndexRunText (of this or another process) is writing now; that one
	// finishes it.
	ErrIndexBusy = errors.New("store: the run's search index is being written by another indexer")
)

// DB is an open evident database. It is safe for concurrent use by several
// goroutines; create it with Open and release it with Close.
type DB struct {
	sql  *sql.DB
	keep *sql.Conn // in-memory only: holds the memdb alive until Close
	path string
	dsn  string // what sql was opened with (the search pool opens it too)

	// side is the search sidecar (side.go); the zero value is none (an
	// in-memory store: its runs are indexed in verdict_fts).
	side sideState
	now  func() time.Time // the clock stamping rows; tests replace it

	// readOnly: opened by OpenReadOnly; immutable: with SQLite's
	// immutable=1 (a store in a directory this process cannot write).
	readOnly, immutable bool

	// wmu is held around every write transaction of this DB, so that the
	// writers of one process take turns in arrival order (sync.Mutex hands
	// the lock to a waiter that waited over 1 ms) instead of racing for
	// SQLite's lock: a review decision waits for one import batch, not for
	// the whole import (issue 13 item 2).
	wmu sync.Mutex

	// bulk is the connection every write transaction (inTx) runs on while
	// bulkRefs Importers and RunWriters are open (bulkConn), with a page
	// cache of bulkCacheKiB; nil when none is open. Both are guarded by
	// wmu.
	bulk     *sql.Conn
	bulkRefs int

	// batchRows and batchBytes bound one batch of an Importer or
	// RunWriter (see flushRows); tests make them small.
	batchRows, batchBytes int

	// live holds the writers of an in-memory DB that are still open
	// ("import 3", "run 5"), its stand-in for the lock files (writer.go).
	liveMu sync.Mutex
	live   map[string]bool

	onBusyRetry func(n int) // tests: called before retry n of inTxRetry
	onLiveTx    func()      // tests: called in each live group's transaction
	// tests: onYield is called each time yieldToWaiters finds a write
	// waiting; yieldBound replaces yieldMax.
	onYield    func()
	yieldBound *time.Duration
	chunkBound int // tests: replaces chunkRows

	// waitedAt is when a bulk writer's yield last found a write waiting
	// (unix ns; 0 never): see chunkRows.
	waitedAt atomic.Int64

	// textCounts keeps the counts of the last text searches (summary.go).
	textCounts textCountCache
	// searchCap bounds the rows a text search counts (0: SearchCountCap;
	// SetSearchCountCap).
	searchCap atomic.Int64
}

// Batch bounds of an Importer or RunWriter: it commits what it holds once
// it holds DefaultBatchRows rows or DefaultBatchBytes bytes of row data,
// whichever comes first. At the import speed measured in bench/ (issue 13)
// a batch of 5,000 rows holds SQLite's write lock for a few tens of
// milliseconds.
const (
	DefaultBatchRows  = 5000
	DefaultBatchBytes = 8 << 20
)

// memSeq numbers in-memory databases so each Open gets its own.
var memSeq atomic.Int64

// DefaultPath returns the default --db path, creating its directory (mode
// 0700) when missing: evident/evident.db under $XDG_DATA_HOME when that is an
// absolute path, else under ~/.local/share (on macOS ~/Library/Application
// Support, on Windows %LocalAppData%). It fails when no home directory can be
// found or the directory cannot be created.
func DefaultPath() (string, error) {
	base, err := userDataDir()
	if err != nil {
		return "", fmt.Errorf("store: default database path: %w", err)
	}
	dir := filepath.Join(base, "evident")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("store: default database path: %w", err)
	}
	return filepath.Join(dir, "evident.db"), nil
}

func userDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support"), nil
	}
	return filepath.Join(home, ".local", "share"), nil
}

// Open opens (creating when missing) the database at path and brings its
// schema up to date (see the package doc, "Migrations"). An up-to-date
// database is opened without taking the write lock, so Open does not wait
// for another process's import or run. Open then removes what writers that
// died left behind (an import's or run's committed batches; see the package
// doc, "Transactions and safety"). path is a file
// path, or MemoryPath (":memory:") for a private in-memory database that
// lives until Close. The file's directory must exist (DefaultPath creates
// the default one); a path containing '?' is refused.
//
// A file database is switched to WAL mode; Open fails when SQLite cannot do
// that (for example on a file system without shared memory). Errors: the
// file cannot be opened or is not a SQLite database; ErrSchemaTooNew when the
// database was migrated by a newer program; a migration failed (the database
// keeps the versions applied before it).
func Open(ctx context.Context, path string) (*DB, error) {
	var dsn string
	params := fmt.Sprintf("_txlock=immediate&_busy_timeout=%d&_foreign_keys=1", BusyTimeout.Milliseconds())
	switch {
	case path == "":
		return nil, fmt.Errorf("%w: empty database path", ErrInvalid)
	case path == MemoryPath:
		dsn = fmt.Sprintf("file:/evident-%d-%d?vfs=memdb&%s", os.Getpid(), memSeq.Add(1), params)
	case strings.ContainsRune(path, '?'):
		return nil, fmt.Errorf("%w: database path %q contains '?'", ErrInvalid, path)
	default:
		dsn = path + "?" + params + "&_pragma=page_size(" + strconv.Itoa(newPageSize) + ")&_journal_mode=WAL&_synchronous=NORMAL"
	}
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db := newDB(sdb, path)
	db.dsn = dsn
	fail := func(err error) (*DB, error) {
		db.Close()
		if isReadOnlyFile(err) {
			return nil, fmt.Errorf("%w: %w; commands that only read (report, review export, eval) open it in place; to write, copy it somewhere writable", ErrNotWritable, err)
		}
		return nil, err
	}
	if path == MemoryPath {
		// The memdb database is freed when its last connection closes; pin one.
		if db.keep, err = sdb.Conn(ctx); err != nil {
			return fail(fmt.Errorf("store: open %s: %w", path, err))
		}
	} else {
		var mode string
		if err := sdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			return fail(fmt.Errorf("store: open %s: %w", path, err))
		}
		if !strings.EqualFold(mode, "wal") {
			return fail(fmt.Errorf("store: open %s: journal mode is %q, want wal", path, mode))
		}
	}
	if err := migrate(ctx, db, migrationFS); errors.Is(err, ErrSchemaTooNew) {
		return fail(err)
	} else if err != nil {
		return fail(fmt.Errorf("store: open %s: %w", path, err))
	}
	if err := db.reclaim(ctx); err != nil {
		return fail(fmt.Errorf("store: open %s: %w", path, err))
	}
	if path != MemoryPath {
		if err := db.openSide(ctx, params); err != nil {
			return fail(fmt.Errorf("store: open %s: %w", path, err))
		}
	}
	return db, nil
}

func newDB(sdb *sql.DB, path string) *DB {
	// database/sql keeps 2 idle connections by default; under the live API's
	// concurrent requests every connection opened beyond them re-reads the
	// schema (measured: live batches +10-20 %, sys time -25 % with more
	// kept). 16 bounds what they hold (SQLite's default page cache, about
	// 2 MiB each).
	sdb.SetMaxIdleConns(maxIdleConns)
	return &DB{sql: sdb, path: path, now: time.Now, batchRows: DefaultBatchRows, batchBytes: DefaultBatchBytes}
}

// newPageSize is the page size, in bytes, of a store file Open creates
// (SQLite's default is 4 KiB; a file keeps the size it was created with).
// A verdict row is about 1.8 KiB, so 4 KiB pages held two and wasted a
// quarter of each; 16 KiB pages make an import's writes fewer and larger
// (measured on 300,000 turns: the file 15 % smaller, a quarter fewer
// system-call seconds) while a page read for one row is still a few
// microseconds from the OS page cache.
const newPageSize = 16 << 10

// maxIdleConns is how many idle connections a DB keeps open (newDB).
const maxIdleConns = 16

// Path returns the path Open was given (MemoryPath for an in-memory DB).
func (db *DB) Path() string { return db.path }

// Close closes the database. Finish (Commit or Rollback) every Importer and
// RunWriter first: Close does not end their transactions, and one left open
// never commits if the process then exits. An in-memory database is gone
// after Close.
func (db *DB) Close() error {
	var errs []error
	db.wmu.Lock()
	db.dropBulk() // a writer left open (never committed) held it
	db.wmu.Unlock()
	if db.keep != nil {
		errs = append(errs, db.keep.Close())
		db.keep = nil
	}
	errs = append(errs, db.closeSide(), db.sql.Close())
	return errors.Join(errs...)
}

// timeLayout is how times are stored: UTC, fixed width, so text order is
// time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func (db *DB) stamp() string { return db.now().UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: stored time %q: %w", s, err)
	}
	return t, nil
}

func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := parseTime(s.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// inTx runs fn in one write transaction, committing when fn returns nil.
// It holds db.wmu throughout: fn must not wait for another write of this DB.
// While an Importer or RunWriter is open the transaction runs on their
// connection (bulkConn).
func (db *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.writeTx(ctx, fn, false)
}

// batchTx is inTx for an Importer's or RunWriter's batch: on the bulk
// connection it runs with SQLite's foreign key checks off. Every row of a
// batch references the dataset or run its writer inserted, which nothing
// deletes while the writer holds its lock (reclaim takes that lock first),
// so each check was a B-tree seek per row that could not fail; and an
// immediate foreign key made every multi-row INSERT keep a statement
// journal (writeBatch.write). The checks are on again for every other
// transaction.
func (db *DB) batchTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.writeTx(ctx, fn, true)
}

func (db *DB) writeTx(ctx context.Context, fn func(*sql.Tx) error, batch bool) error {
	if db.readOnly {
		return fmt.Errorf("%w: %s", ErrReadOnly, db.path)
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.bulkRefs == 0 {
		return poolTx(ctx, db.sql, fn)
	}
	if db.bulk == nil {
		conn, err := db.sql.Conn(ctx)
		if err != nil {
			return err
		}
		var page int
		err = conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&page)
		if err == nil {
			_, err = conn.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d; PRAGMA wal_autocheckpoint = %d", bulkCacheKiB, bulkWALBytes/max(page, 512)))
		}
		if err != nil {
			conn.Close()
			return err
		}
		db.bulk = conn
	}
	conn := db.bulk
	if !batch {
		return connTx(ctx, conn, fn, db.dropBulk)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		db.dropBulk()
		return err
	}
	err := connTx(ctx, conn, fn, db.dropBulk)
	if db.bulk == conn && !foreignKeysOn(conn) {
		db.dropBulk()
	}
	return err
}

// foreignKeysOn turns conn's foreign key checks on and reports whether they
// are (the pragma does nothing inside a transaction).
func foreignKeysOn(conn *sql.Conn) bool {
	ctx := context.Background()
	var on int
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = ON"); err != nil {
		return false
	}
	return conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&on) == nil && on == 1
}

// connTx runs fn in one transaction on conn, a connection a writer keeps
// (the bulk connection, the live queue's): committed when fn returns nil,
// rolled back otherwise. drop is called when BEGIN or COMMIT fails, so
// that the next transaction takes a fresh connection.
func connTx(ctx context.Context, conn *sql.Conn, fn func(*sql.Tx) error, drop func()) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		drop()
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		drop()
		return err
	}
	return nil
}

// bulkCacheKiB is the page cache of the bulk connection: 32 MiB, which
// holds the interior pages of a large run's table and indexes. A batch on
// a pooled connection started with a cold cache (the pool hands out its
// idle connections in turn, and a connection's cache is emptied when
// another one wrote): measured at 300,000 turns, its page reads were a
// tenth of the store writer's time.
const bulkCacheKiB = 32 << 10

// bulkWALBytes is how far the WAL grows, in bytes, before a commit on the
// bulk connection checkpoints it (PRAGMA wal_autocheckpoint, in pages:
// 8,192 of 16 KiB). With SQLite's 1,000 pages an import checkpointed after
// almost every batch: each checkpoint copied the hot index pages that every
// batch rewrites again, and its fsync stalled the writer (stalls of up to
// half a second at 1,000,000 turns). Measured on that import: 12 % less
// wall time. The WAL file keeps that size until the last connection
// closes.
const bulkWALBytes = 128 << 20

// bulkConn and bulkDone bracket an Importer's or RunWriter's life: while
// one is open, inTx keeps one connection for every write (bulk), so that
// its page cache stays valid from one batch to the next. The last
// bulkDone gives it back to the pool with SQLite's default cache.
func (db *DB) bulkConn() {
	db.wmu.Lock()
	db.bulkRefs++
	db.wmu.Unlock()
}

func (db *DB) bulkDone() {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.bulkRefs--; db.bulkRefs == 0 {
		db.dropBulk()
		db.removeWaitFile()
	}
}

// dropBulk gives the bulk connection back to the pool, its cache and
// automatic checkpoint set back to SQLite's defaults and its foreign key
// checks on (closed instead when that fails). wmu held.
func (db *DB) dropBulk() {
	conn := db.bulk
	db.bulk = nil
	if conn == nil {
		return
	}
	if _, err := conn.ExecContext(context.Background(), "PRAGMA cache_size = -2000; PRAGMA wal_autocheckpoint = 1000"); err != nil || !foreignKeysOn(conn) {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // database/sql closes it
	}
	conn.Close()
}

// lockedTx is poolTx with mu held.
func lockedTx(ctx context.Context, mu *sync.Mutex, pool *sql.DB, fn func(*sql.Tx) error) error {
	mu.Lock()
	defer mu.Unlock()
	return poolTx(ctx, pool, fn)
}

// poolTx runs fn in one transaction of pool: committed when fn returns nil,
// rolled back otherwise.
func poolTx(ctx context.Context, pool *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// isReadOnlyFile reports SQLite's SQLITE_READONLY (any extended code): the
// file or its directory cannot be written by this process.
func isReadOnlyFile(err error) bool { return sqliteCode(err) == 8 }

func nullString(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func stringPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A write that still finds the database busy after BusyTimeout (another
// process holding the write lock that long, or SQLite's immediate
// SQLITE_BUSY during a WAL recovery or checkpoint) is tried again up to
// busyRetries more times, waiting backoff.Exponential(busyBase,
// busyCeiling, n) before retry n: review decisions, undo, gold and card
// updates made while an import runs are saved, not failed (issue 13 item 2).
const (
	busyRetries = 3
	busyBase    = 50 * time.Millisecond
	busyCeiling = time.Second
)

// inTxRetry is inTx, retried on SQLITE_BUSY (see busyRetries). fn must be
// safe to run again: a failed try was rolled back whole.
func (db *DB) inTxRetry(ctx context.Context, fn func(*sql.Tx) error) error {
	for n := 0; ; n++ {
		done := db.announceWait() // an import lets this write in between two batches (waitlock.go)
		err := db.inTx(ctx, fn)
		done()
		if !isBusy(err) || n == busyRetries {
			return err
		}
		if db.onBusyRetry != nil {
			db.onBusyRetry(n)
		}
		if serr := backoff.Sleep(ctx, backoff.Exponential(busyBase, busyCeiling, n)); serr != nil {
			return err
		}
	}
}
