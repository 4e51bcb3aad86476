package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one file migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string // file name
	sql     string
}

// loadMigrations reads migrations/*.sql from fsys, ordered by version. Names
// must start with a positive number followed by '_'; versions must be 1, 2, 3,
// … without gaps or repeats.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, p := range names {
		name := path.Base(p)
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", name)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// LatestSchemaVersion is the schema version this build migrates to: the
// number of the last embedded migration.
func LatestSchemaVersion() int {
	ms, err := loadMigrations(migrationFS)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// SchemaVersion returns the highest migration version applied to the
// database (0 for none).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.sql.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}

// readVersion is SchemaVersion that also answers 0 for a database without
// a schema_migrations table (a new file), with reads only.
func (db *DB) readVersion(ctx context.Context) (int, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx,
		"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	return db.SchemaVersion(ctx)
}

// migrate applies the migrations of fsys that the database lacks, each in its
// own transaction with its schema_migrations row. Nothing is written, and no
// lock taken, when the database is already at the latest version. The version is re-read
// inside each transaction (BEGIN IMMEDIATE), so two processes opening a new
// file at once apply every migration once.
func migrate(ctx context.Context, db *DB, fsys fs.FS) error {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return err
	}
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	tooNew := func(have int) error {
		return fmt.Errorf("%w: %s has schema version %d, this program knows up to %d; use a newer evident or another --db",
			ErrSchemaTooNew, db.path, have, known)
	}
	// Read first, without a lock: an up-to-date database (the usual case)
	// is opened without ever asking for the write lock, so Open does not
	// wait behind an import or a run of another process.
	have, err := db.readVersion(ctx)
	if err != nil {
		return err
	}
	if have > known {
		return tooNew(have)
	}
	if have == known {
		return nil
	}
	if err := db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
) STRICT`)
		return err
	}); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			var have int
			if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&have); err != nil {
				return err
			}
			if have > known {
				return tooNew(have)
			}
			if have >= m.version {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, db.stamp())
			return err
		})
		if errors.Is(err, ErrSchemaTooNew) {
			return err
		}
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}
