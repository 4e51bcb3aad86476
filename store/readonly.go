package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// OpenReadOnly opens an existing database file for reading only (issue 13
// item 3: report, review export and eval's reads). It never migrates,
// never writes and never takes the write lock, so it does not wait for an
// import or run of another process, and it works on a file the user may
// only read. Every write method of the DB it returns fails with
// ErrReadOnly, and it does not reclaim dead writers' rows (Open does).
//
// The file is opened with SQLite's mode=ro. A WAL database needs its -shm
// index; SQLite (3.22 or later) creates it, or reads one it cannot write.
// When neither works — the file sits in a directory this process cannot
// write, and no -shm is there — and no write-ahead log with content is
// there either, the file is opened with immutable=1: nobody can be writing
// it (a writer needs to create the -wal and -shm beside it), so SQLite
// reads it with no locking at all. A -wal with content that cannot be read
// that way is an error that says so: reading the file alone would miss
// committed rows.
//
// Errors: ErrInvalid for "" or MemoryPath (a new in-memory database is
// empty); the file does not exist or is not a SQLite database;
// ErrSchemaTooNew when a newer program wrote it; ErrSchemaTooOld when its
// schema is older than this program's (open it once with Open, which
// migrates it).
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	switch {
	case path == "":
		return nil, fmt.Errorf("%w: empty database path", ErrInvalid)
	case path == MemoryPath:
		return nil, fmt.Errorf("%w: a new in-memory database is empty; there is nothing to open read-only", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("store: open %s read-only: is a directory", path)
	}
	db, err := openRO(ctx, abs, path, false)
	if err != nil && !walHasContent(abs) {
		if idb, ierr := openRO(ctx, abs, path, true); ierr == nil {
			db, err = idb, nil
		}
	} else if err != nil {
		err = fmt.Errorf("%w (its write-ahead log %s-wal holds commits and its index %s-shm cannot be created here: open it once with write access, or copy the three files somewhere writable)", err, path, path)
	}
	if err != nil {
		return nil, err
	}
	have, err := db.readVersion(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
	}
	switch known := LatestSchemaVersion(); {
	case have > known:
		db.Close()
		return nil, fmt.Errorf("%w: %s has schema version %d, this program knows up to %d; use a newer evident or another --db",
			ErrSchemaTooNew, path, have, known)
	case have < known:
		db.Close()
		return nil, fmt.Errorf("%w: %s has schema version %d, this program needs %d; open it once with a command that writes (evident import, evident serve) to migrate it",
			ErrSchemaTooOld, path, have, known)
	}
	db.openSideReadOnly(ctx, abs)
	return db, nil
}

// openRO opens abs with mode=ro (and immutable=1 when asked) and reads the
// schema once, which is when SQLite first opens the file and its WAL index.
func openRO(ctx context.Context, abs, path string, immutable bool) (*DB, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Set("_busy_timeout", fmt.Sprint(BusyTimeout.Milliseconds()))
	q.Set("_foreign_keys", "1")
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
	}
	db := newDB(sdb, path)
	db.dsn = dsn
	db.readOnly, db.immutable = true, immutable
	if _, err := db.readVersion(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("store: open %s read-only: %w", path, err)
	}
	return db, nil
}

// walHasContent reports whether abs has a -wal file that is not empty (or
// cannot be looked at, which counts as having content).
func walHasContent(abs string) bool {
	fi, err := os.Stat(abs + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	return err != nil || fi.Size() > 0
}

// ReadOnly reports whether the DB came from OpenReadOnly; Immutable whether
// it was opened with SQLite's immutable=1 (see OpenReadOnly).
func (db *DB) ReadOnly() bool { return db.readOnly }

// Immutable: see ReadOnly.
func (db *DB) Immutable() bool { return db.immutable }
