package store

import (
	"context"
	"database/sql/driver"
	"fmt"
)

// A rolled-back import or run leaves the pages its batches wrote on
// SQLite's free list: the file keeps its size (a 300,000-turn import
// interrupted after 4 s left a 66 MB store holding nothing) and the next
// import reuses them. shrinkAfterRollback gives them back to the file
// system when that is cheap: when the store's live pages are at most
// vacuumLiveMax bytes (VACUUM copies the live pages, so this bounds its
// work) and its free pages at least vacuumFreeMin bytes. A bigger store
// keeps its free pages for the next import, as SQLite does. (Variables so
// that tests can lower them.)
var (
	vacuumLiveMax int64 = 16 << 20
	vacuumFreeMin int64 = 4 << 20
)

// shrinkAfterRollback VACUUMs a file store left mostly free by a rollback
// (see vacuumLiveMax) and truncates its WAL. It is best effort and waits for
// nothing: it does nothing when another writer of this DB is open, and its
// VACUUM runs with SQLite's busy timeout at 0, so a writer of another
// process makes it give up at once. Errors are returned for the caller to
// ignore or log; the rollback itself has already succeeded.
func (db *DB) shrinkAfterRollback(ctx context.Context) error {
	if db.memory() || db.readOnly || db.immutable {
		return nil
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if db.bulkRefs > 1 {
		return nil // another import or run of this process will reuse the pages
	}
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var pages, free, size int64
	if err := conn.QueryRowContext(ctx, "SELECT p.page_count, f.freelist_count, s.page_size FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() s").Scan(&pages, &free, &size); err != nil {
		return fmt.Errorf("store: free pages: %w", err)
	}
	if (pages-free)*size > vacuumLiveMax || free*size < vacuumFreeMin {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "VACUUM")
	if err == nil {
		_, err = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if _, rerr := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", BusyTimeout.Milliseconds())); rerr != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // database/sql closes it
	}
	if err != nil {
		return fmt.Errorf("store: vacuum after rollback: %w", err)
	}
	return nil
}
