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
// after each poll), so dropping one loses nothing.
type lru struct {
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
	e := c.m[k]
	if e == nil {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*lruEntry).s, true
}

func (c *lru) put(k stateKey, s *live.State) {
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
	for e := c.ll.Front(); e != nil; {
		next := e.Next()
		if en := e.Value.(*lruEntry); en.k.part == p {
			c.ll.Remove(e)
			delete(c.m, en.k)
		}
		e = next
	}
}

func (c *lru) clear() { c.ll.Init(); clear(c.m) }

func (c *lru) len() int { return c.ll.Len() }

// localStore is one input partition's local state store, a SQLite file
// (Config.StateDir): the live state of each session, and the digest of each
// judged turn with its record while that turn is not yet committed, plus the
// changelog offset it holds everything before. The changelog topic stays the
// source of truth; the file only saves reading it all again.
type localStore struct {
	db                                  *sql.DB
	path                                string
	getLive, getTurn, getTurns, putLive *sql.Stmt
	putTurn, delTurns, delLive          *sql.Stmt
}

const localSchema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session(session_id TEXT PRIMARY KEY, live BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turn(session_id TEXT NOT NULL, turn_id TEXT NOT NULL, digest BLOB NOT NULL,
  PRIMARY KEY(session_id, turn_id)) WITHOUT ROWID;
`

// localCacheKiB is SQLite's page cache per local store file, in KiB.
const localCacheKiB = 16 << 10

// localFormat is stored in meta; a file of another format is rebuilt from
// the changelog.
const localFormat = "2"

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
	if _, err := db.ExecContext(ctx, localSchema); err != nil {
		return fail(err)
	}
	var format string
	switch err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='format'`).Scan(&format); {
	case errors.Is(err, sql.ErrNoRows):
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
		{&s.getLive, `SELECT live FROM session WHERE session_id=?`},
		{&s.getTurn, `SELECT digest FROM turn WHERE session_id=? AND turn_id=?`},
		{&s.getTurns, `SELECT turn_id, digest FROM turn WHERE session_id=?`},
		{&s.putLive, `INSERT INTO session(session_id, live) VALUES(?, ?) ON CONFLICT(session_id) DO UPDATE SET live=excluded.live`},
		{&s.putTurn, `INSERT INTO turn(session_id, turn_id, digest) VALUES(?, ?, ?) ON CONFLICT(session_id, turn_id) DO UPDATE SET digest=excluded.digest`},
		{&s.delTurns, `DELETE FROM turn WHERE session_id=?`},
		{&s.delLive, `DELETE FROM session WHERE session_id=?`},
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

// live reads a session's state; ok is false when the store has none.
func (s *localStore) live(ctx context.Context, session string) (st *live.State, ok bool, err error) {
	var b []byte
	switch err := s.getLive.QueryRowContext(ctx, session).Scan(&b); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, s.fail("read session "+strconv.Quote(session), err)
	}
	st = &live.State{}
	if err := unmarshalLive(b, st); err != nil {
		return nil, false, s.fail("session "+strconv.Quote(session), err)
	}
	return st, true, nil
}

// turn reads a judged turn's digest (hex); ok is false when the store has
// none.
func (s *localStore) turn(ctx context.Context, session, turnID string) (digest string, ok bool, err error) {
	var d []byte
	switch err := s.getTurn.QueryRowContext(ctx, session, turnID).Scan(&d); {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, s.fail("read turn "+strconv.Quote(turnID), err)
	}
	return hex.EncodeToString(d), true, nil
}

// turns adds the digests of the stored turns of session to turns (entries
// already there win: they are this poll's).
func (s *localStore) turns(ctx context.Context, session string, turns map[string]string) error {
	rows, err := s.getTurns.QueryContext(ctx, session)
	if err != nil {
		return s.fail("read turns of "+strconv.Quote(session), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var d []byte
		if err := rows.Scan(&id, &d); err != nil {
			return s.fail("read turns of "+strconv.Quote(session), err)
		}
		if _, ok := turns[id]; !ok {
			turns[id] = hex.EncodeToString(d)
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail("read turns of "+strconv.Quote(session), err)
	}
	return nil
}

// localTurn is one judged turn: its turn_id, digest (hex) and, while its
// poll is being handled, its record (never stored in the file).
type localTurn struct {
	id, digest string
	record     []byte
}

// localWrite is one session's change: its new live state, as JSON (nil with
// del: a tombstone), and either its new turns or (replace) all its turns.
type localWrite struct {
	session string
	live    []byte
	turns   []localTurn
	replace bool
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
	putLive, putTurn := tx.Stmt(s.putLive), tx.Stmt(s.putTurn)
	delTurns, delLive := tx.Stmt(s.delTurns), tx.Stmt(s.delLive)
	var digest []byte
	for _, w := range ws {
		if w.replace || w.del {
			if _, err := delTurns.ExecContext(ctx, w.session); err != nil {
				return s.fail("write", err)
			}
		}
		if w.del {
			if _, err := delLive.ExecContext(ctx, w.session); err != nil {
				return s.fail("write", err)
			}
			continue
		}
		if _, err := putLive.ExecContext(ctx, w.session, w.live); err != nil {
			return s.fail("write", err)
		}
		for _, t := range w.turns {
			// The digest is kept as its 32 bytes (hex in the changelog).
			if digest, err = hex.AppendDecode(digest[:0], []byte(t.digest)); err != nil {
				return s.fail("digest of turn "+strconv.Quote(t.id), err)
			}
			if _, err := putTurn.ExecContext(ctx, w.session, t.id, digest); err != nil {
				return s.fail("write", err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value=? WHERE key='next_offset'`, strconv.FormatInt(next, 10)); err != nil {
		return s.fail("write", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit", err)
	}
	return nil
}

func unmarshalLive(b []byte, st *live.State) error { return json.Unmarshal(b, st) }
