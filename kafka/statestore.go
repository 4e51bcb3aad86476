package kafka

import (
	"container/list"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	_ "modernc.org/sqlite" // the local state store's SQLite, pure Go

	"evident/persona/live"
)

// DefaultCacheSessions is the session states a Consumer keeps decoded in
// memory when Config.CacheSessions is 0 (the brief of issue 17: memory flat in
// the number of sessions beyond the state store's cache).
const DefaultCacheSessions = 10_000

// stateKey names one session's state: its input partition and session_id.
type stateKey struct {
	part    int32
	session string
}

// lru is the bounded cache of decoded live states in front of the local
// stores: at most max entries, the least recently used dropped first. An
// entry is always also in its partition's local store (written through
// after each poll), so dropping one loses nothing. It is safe for
// concurrent use (a poll's partitions are judged in parallel).
type lru struct {
	mu  sync.Mutex
	max int
	ll  *list.List // of *lruEntry, most recent first
	m   map[stateKey]*list.Element
}

type lruEntry struct {
	k stateKey
	s *live.State
}

func newLRU(max int) *lru { return &lru{max: max, ll: list.New(), m: map[stateKey]*list.Element{}} }

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
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil {
		e.Value.(*lruEntry).s = s
		c.ll.MoveToFront(e)
		return
	}
	c.m[k] = c.ll.PushFront(&lruEntry{k, s})
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*lruEntry).k)
	}
}

// dropPartition forgets the entries of input partition p (revoked, or
// assigned again: the local store may have been caught up since).
func (c *lru) dropPartition(p int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.ll.Front(); e != nil; {
		next := e.Next()
		if en := e.Value.(*lruEntry); en.k.part == p {
			c.ll.Remove(e)
			delete(c.m, en.k)
		}
		e = next
	}
}

func (c *lru) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ll.Init()
	clear(c.m)
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// localStore is one input partition's local state store, a SQLite file
// (Config.StateDir): per session, its live state (JSON) and the turn_id and
// digest of each of its judged turns (a turn list), plus the changelog
// offset it holds everything before. The changelog topic stays the source of
// truth; the file only saves reading it all again.
//
// One row per session, not per turn: a poll writes each session it touched
// once (its whole turn list, old and new), so the file costs a statement per
// session rather than per turn (format 2 wrote a row per turn, a third of
// the consumer's CPU).
type localStore struct {
	db                                          *sql.DB
	path                                        string
	getSession, putSession, delSession, putNext *sql.Stmt
}

const localSchema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session(session_id TEXT PRIMARY KEY, live BLOB NOT NULL, turns BLOB NOT NULL);
`

// localCacheKiB is SQLite's page cache per local store file, in KiB.
const localCacheKiB = 16 << 10

// localFormat is stored in meta; a file of another format is rebuilt from
// the changelog. 3: a session row holds its turn list (2: a row per turn).
const localFormat = "3"

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
		{&s.getSession, `SELECT live, turns FROM session WHERE session_id=?`},
		{&s.putSession, `INSERT INTO session(session_id, live, turns) VALUES(?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET live=excluded.live, turns=excluded.turns`},
		{&s.delSession, `DELETE FROM session WHERE session_id=?`},
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
	_, err := s.db.ExecContext(ctx, `DELETE FROM session; UPDATE meta SET value='0' WHERE key='next_offset'`)
	if err != nil {
		return s.fail("wipe", err)
	}
	return nil
}

// session reads a session's row: its live state as JSON and its turn list
// (turnList's encoding; checked). ok is false when the store has none. The
// slices are the caller's.
func (s *localStore) session(ctx context.Context, session string) (liveJSON, turns []byte, ok bool, err error) {
	switch err := s.getSession.QueryRowContext(ctx, session).Scan(&liveJSON, &turns); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, false, s.fail("read session "+strconv.Quote(session), err)
	}
	if err := eachTurn(turns, func([]byte, int) {}); err != nil {
		return nil, nil, false, s.fail("turns of session "+strconv.Quote(session), err)
	}
	return liveJSON, turns, true, nil
}

// localWrite is one session's new row: its live state as JSON and its whole
// turn list (turnList's encoding); del (live and turns nil) is a tombstone.
type localWrite struct {
	session string
	live    []byte
	turns   []byte
	del     bool
}

// write applies ws and sets next_offset to next, in one transaction.
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
	put, del := tx.StmtContext(ctx, s.putSession), tx.StmtContext(ctx, s.delSession)
	for _, w := range ws {
		if w.del {
			if _, err := del.ExecContext(ctx, w.session); err != nil {
				return s.fail("delete session "+strconv.Quote(w.session), err)
			}
			continue
		}
		turns := w.turns
		if turns == nil {
			turns = []byte{} // NOT NULL: a session with no turn yet
		}
		if _, err := put.ExecContext(ctx, w.session, w.live, turns); err != nil {
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

func unmarshalLive(b []byte, st *live.State) error { return json.Unmarshal(b, st) }

// A turn list is a session's judged turns as stored in its row: for each,
// the length of its turn_id (uvarint), the turn_id's bytes and the 32 bytes
// of its digest (persona/live.Digest, decoded from hex), in the order judged.

// digestLen is the bytes of a decoded digest (SHA-256).
const digestLen = 32

// appendTurn appends one turn to the turn list b.
func appendTurn(b []byte, id string, digest *[digestLen]byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	return append(b, digest[:]...)
}

// errTurnList is a turn list that is not in turnList's encoding.
var errTurnList = errors.New("malformed turn list")

// eachTurn calls f with each turn of list b: its turn_id (a slice of b) and
// the offset in b of its digest's digestLen bytes. The error is errTurnList,
// at the first entry that does not fit; f has been called for the entries
// before it.
func eachTurn(b []byte, f func(id []byte, at int)) error {
	for i := 0; i < len(b); {
		n, k := binary.Uvarint(b[i:])
		if k <= 0 || n > uint64(len(b)-i-k) || uint64(len(b)-i-k)-n < digestLen {
			return errTurnList
		}
		i += k
		f(b[i:i+int(n):i+int(n)], i+int(n))
		i += int(n) + digestLen
	}
	return nil
}

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
