package kafka

import (
	"container/list"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the local state store's SQLite, pure Go

	"evident/persona/live"
)

// DefaultCacheSessions is the session states a Consumer keeps decoded in
// memory when Config.CacheSessions is 0 (memory flat in the number of
// sessions beyond the state store's cache).
const DefaultCacheSessions = 10_000

// DefaultCacheBytes bounds the cached states' stored size (State.Bytes, the
// length of their JSON) when Config.CacheBytes is 0: 64 MiB, like the live
// API's --live-cache. A state may hold up to the state limit (2 MiB by
// default), so a count alone would let 10,000 of them take gigabytes.
const DefaultCacheBytes = 64 << 20

// stateKey names one session's state: its input partition and session_id.
type stateKey struct {
	part    int32
	session string
}

// lru is the bounded cache of decoded live states in front of the local
// stores: at most max entries whose State.Bytes add up to at most maxBytes,
// the least recently used dropped first (a state larger than maxBytes is not
// kept). An entry is always also in its partition's local store (written
// through after each poll), so dropping one loses nothing. It is safe for
// concurrent use (a poll's partitions are judged in parallel).
type lru struct {
	mu            sync.Mutex
	max, maxBytes int
	bytes         int
	ll            *list.List // of *lruEntry, most recent first
	m             map[stateKey]*list.Element
}

type lruEntry struct {
	k     stateKey
	s     *live.State
	bytes int
}

func newLRU(max, maxBytes int) *lru {
	return &lru{max: max, maxBytes: maxBytes, ll: list.New(), m: map[stateKey]*list.Element{}}
}

func (c *lru) get(k stateKey) (*live.State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*lruEntry).s, true
}

func (c *lru) put(k stateKey, s *live.State) {
	n := s.Bytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil {
		c.remove(e)
	}
	if n > c.maxBytes {
		return
	}
	c.m[k] = c.ll.PushFront(&lruEntry{k, s, n})
	c.bytes += n
	for c.ll.Len() > c.max || c.bytes > c.maxBytes {
		c.remove(c.ll.Back())
	}
}

func (c *lru) remove(e *list.Element) {
	en := e.Value.(*lruEntry)
	c.ll.Remove(e)
	delete(c.m, en.k)
	c.bytes -= en.bytes
}

// dropPartition forgets the entries of input partition p (revoked, or
// assigned again: the local store may have been caught up since).
func (c *lru) dropPartition(p int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.ll.Front(); e != nil; {
		next := e.Next()
		if e.Value.(*lruEntry).k.part == p {
			c.remove(e)
		}
		e = next
	}
}

func (c *lru) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ll.Init()
	clear(c.m)
	c.bytes = 0
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// localStore is one input partition's local state store, a SQLite file
// (Config.StateDir): per session, its live state (JSON, at most the state
// limit), and per judged turn its turn_id, its arrival position in its
// session (seq) and its digest, plus the changelog offset it holds
// everything before. The changelog topic stays the source of truth; the file
// only saves reading it all again.
//
// A poll writes each session it touched once (its state) and one row per
// turn it judged: what the poll added, never a session's whole history (the
// turn list of format 3 was rewritten whole by every poll that touched its
// session, and read whole by the next).
type localStore struct {
	db                                                                               *sql.DB
	path                                                                             string
	getSession, putSession, delSession, getTurn, putTurn, delTurn, delTurns, putNext *sql.Stmt
	putTurns                                                                         *sql.Stmt // turnChunk rows at once
}

// turnChunk is how many turn rows one statement writes: a statement a row
// cost a poll's write a third of the consumer's CPU.
const turnChunk = 64

const localSchema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session(session_id TEXT PRIMARY KEY, live BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS turn(session_id TEXT NOT NULL, turn_id TEXT NOT NULL, seq INTEGER NOT NULL, digest BLOB NOT NULL, PRIMARY KEY(session_id, turn_id)) WITHOUT ROWID;
`

// localCacheKiB is SQLite's page cache per local store file, in KiB.
const localCacheKiB = 16 << 10

// localFormat is stored in meta; a file of another format is rebuilt from
// the changelog. 4: a row per judged turn beside the session's row (3: the
// session row held its whole turn list; 2: a row per turn and the state
// with every turn's digest).
const localFormat = "4"

// localPath is the file of input partition part under dir.
func localPath(dir, stateTopic string, part int32) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d.sqlite", stateTopic, part))
}

// openLocal opens (creating) the local store at path. Errors name the file.
func openLocal(ctx context.Context, path string) (*localStore, error) {
	// The file is a cache of the changelog: synchronous=OFF (a crash of the
	// machine can lose its last writes, and next_offset with them, so they
	// are read again), reads through a memory map and a page cache of
	// localCacheKiB.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_pragma=mmap_size(1073741824)&_pragma=cache_size(-"+strconv.Itoa(localCacheKiB)+")&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("kafka: local state store %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &localStore{db: db, path: path}
	fail := func(err error) (*localStore, error) {
		db.Close()
		return nil, fmt.Errorf("kafka: local state store %s: %w", path, err)
	}
	// The format is read before the schema is applied: an older file's
	// tables of the same names have other columns.
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`); err != nil {
		return fail(err)
	}
	var format string
	switch err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='format'`).Scan(&format); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := db.ExecContext(ctx, localSchema); err != nil {
			return fail(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('format', ?), ('next_offset', '0')`, localFormat); err != nil {
			return fail(err)
		}
	case err != nil:
		return fail(err)
	case format != localFormat: // a cache of the changelog: rebuilt
		db.Close()
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("kafka: local state store %s of format %q: %w", path, format, err)
			}
		}
		return openLocal(ctx, path)
	}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&s.getSession, `SELECT live FROM session WHERE session_id=?`},
		{&s.putSession, `INSERT INTO session(session_id, live) VALUES(?, ?) ON CONFLICT(session_id) DO UPDATE SET live=excluded.live`},
		{&s.delSession, `DELETE FROM session WHERE session_id=?`},
		{&s.getTurn, `SELECT seq, digest FROM turn WHERE session_id=? AND turn_id=?`},
		{&s.putTurn, `INSERT INTO turn(session_id, turn_id, seq, digest) VALUES(?, ?, ?, ?) ON CONFLICT(session_id, turn_id) DO UPDATE SET seq=excluded.seq, digest=excluded.digest`},
		{&s.putTurns, `INSERT INTO turn(session_id, turn_id, seq, digest) VALUES` + strings.Repeat(`(?, ?, ?, ?),`, turnChunk-1) + `(?, ?, ?, ?) ON CONFLICT(session_id, turn_id) DO UPDATE SET seq=excluded.seq, digest=excluded.digest`},
		{&s.delTurn, `DELETE FROM turn WHERE session_id=? AND turn_id=?`},
		{&s.delTurns, `DELETE FROM turn WHERE session_id=?`},
		{&s.putNext, `UPDATE meta SET value=? WHERE key='next_offset'`},
	} {
		if *p.st, err = db.PrepareContext(ctx, p.q); err != nil {
			return fail(err)
		}
	}
	return s, nil
}

func (s *localStore) close() error { return s.db.Close() }

func (s *localStore) fail(what string, err error) error {
	return fmt.Errorf("kafka: local state store %s: %s: %w", s.path, what, err)
}

// nextOffset is the changelog offset the store holds every record before.
func (s *localStore) nextOffset(ctx context.Context) (int64, error) {
	var v string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='next_offset'`).Scan(&v); err != nil {
		return 0, s.fail("read next_offset", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, s.fail("next_offset", err)
	}
	return n, nil
}

// wipe empties the store, to be rebuilt from the changelog's start.
func (s *localStore) wipe(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM session; DELETE FROM turn; UPDATE meta SET value='0' WHERE key='next_offset'`)
	if err != nil {
		return s.fail("wipe", err)
	}
	return nil
}

// session reads a session's live state as JSON; ok is false when the store
// has none. The slice is the caller's.
func (s *localStore) session(ctx context.Context, session string) (liveJSON []byte, ok bool, err error) {
	switch err := s.getSession.QueryRowContext(ctx, session).Scan(&liveJSON); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, s.fail("read session "+strconv.Quote(session), err)
	}
	return liveJSON, true, nil
}

// turn reads a judged turn's row: its seq and digest; ok is false when the
// store has none. The row is a committed turn only when seq is below its
// session's turn count (the changelog's turn records are written before
// their session's state record: a crash between them leaves rows of turns
// the state does not hold).
func (s *localStore) turn(ctx context.Context, session, turnID string) (seq int64, digest [digestLen]byte, ok bool, err error) {
	var d []byte
	switch err := s.getTurn.QueryRowContext(ctx, session, turnID).Scan(&seq, &d); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, digest, false, nil
	case err != nil:
		return 0, digest, false, s.fail("read turn "+strconv.Quote(turnID)+" of session "+strconv.Quote(session), err)
	}
	if len(d) != digestLen {
		return 0, digest, false, s.fail("turn "+strconv.Quote(turnID)+" of session "+strconv.Quote(session), fmt.Errorf("a digest of %d bytes", len(d)))
	}
	return seq, [digestLen]byte(d), true, nil
}

// localWrite is one row to write: a session's live state (turnID unset), or
// one of its turns (isTurn: its seq and digest); del deletes the row (a
// session's with all its turns).
type localWrite struct {
	session string
	isTurn  bool
	turnID  string
	live    []byte
	seq     int64
	digest  []byte
	del     bool
}

// write applies ws, in order, and sets next_offset to next, in one
// transaction.
func (s *localStore) write(ctx context.Context, ws []localWrite, next int64) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var stmts [6]*sql.Stmt
	stmt := func(i int, st *sql.Stmt) *sql.Stmt {
		if stmts[i] == nil {
			stmts[i] = tx.StmtContext(ctx, st)
		}
		return stmts[i]
	}
	args := make([]any, 0, 4*turnChunk)
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if n := turnRun(ws[i:]); n == turnChunk {
			args = args[:0]
			for _, w := range ws[i : i+n] {
				args = append(args, w.session, w.turnID, w.seq, w.digest)
			}
			if _, err := stmt(5, s.putTurns).ExecContext(ctx, args...); err != nil {
				return s.fail("write turns of session "+strconv.Quote(w.session), err)
			}
			i += n - 1
			continue
		}
		var err error
		switch {
		case w.isTurn && w.del:
			_, err = stmt(0, s.delTurn).ExecContext(ctx, w.session, w.turnID)
		case w.isTurn:
			_, err = stmt(1, s.putTurn).ExecContext(ctx, w.session, w.turnID, w.seq, w.digest)
		case w.del:
			if _, err = stmt(2, s.delSession).ExecContext(ctx, w.session); err == nil {
				_, err = stmt(3, s.delTurns).ExecContext(ctx, w.session)
			}
		default:
			_, err = stmt(4, s.putSession).ExecContext(ctx, w.session, w.live)
		}
		if err != nil {
			return s.fail("write session "+strconv.Quote(w.session), err)
		}
	}
	if _, err := tx.StmtContext(ctx, s.putNext).ExecContext(ctx, strconv.FormatInt(next, 10)); err != nil {
		return s.fail("write next_offset", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit", err)
	}
	return nil
}

// turnRun is how many of the first writes of ws, at most turnChunk, write
// turn rows (not deletes).
func turnRun(ws []localWrite) int {
	n := 0
	for n < len(ws) && n < turnChunk && ws[n].isTurn && !ws[n].del {
		n++
	}
	return n
}

func unmarshalLive(b []byte, st *live.State) error { return json.Unmarshal(b, st) }

// digestLen is the bytes of a decoded digest (SHA-256).
const digestLen = 32

// decodeDigest decodes a digest written as hex (persona/live.Digest).
func decodeDigest(hexDigest string) (d [digestLen]byte, err error) {
	if len(hexDigest) != 2*digestLen {
		return d, fmt.Errorf("digest %q is not %d hex digits", hexDigest, 2*digestLen)
	}
	if _, err := hex.Decode(d[:], []byte(hexDigest)); err != nil {
		return d, fmt.Errorf("digest %q: %w", hexDigest, err)
	}
	return d, nil
}
