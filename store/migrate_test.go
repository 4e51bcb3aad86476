package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

func TestMigrations(t *testing.T) {
	ctx := context.Background()

	t.Run("the embedded migrations are numbered 1, 2, … without gaps", func(t *testing.T) {
		ms, err := loadMigrations(migrationFS)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 || LatestSchemaVersion() != len(ms) {
			t.Fatalf("got %d migrations, latest version %d", len(ms), LatestSchemaVersion())
		}
		_, err = loadMigrations(fstest.MapFS{
			"migrations/0001_a.sql": {Data: []byte("SELECT 1")},
			"migrations/0003_c.sql": {Data: []byte("SELECT 1")},
		})
		if err == nil {
			t.Fatal("a gap in the numbering was accepted")
		}
		_, err = loadMigrations(fstest.MapFS{"migrations/first.sql": {Data: []byte("SELECT 1")}})
		if err == nil {
			t.Fatal("a migration without a number was accepted")
		}
	})

	t.Run("a new in-memory database is migrated to the latest version", func(t *testing.T) {
		db := openMem(t)
		v, err := db.SchemaVersion(ctx)
		if err != nil || v != LatestSchemaVersion() {
			t.Fatalf("version %d, %v; want %d", v, err, LatestSchemaVersion())
		}
	})

	t.Run("re-opening a migrated file applies nothing", func(t *testing.T) {
		db, path := openFile(t)
		applied := func(db *DB) string {
			var s string
			rows, err := db.sql.Query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var v int
				var n, at string
				rows.Scan(&v, &n, &at)
				s += fmt.Sprintf("%d %s %s\n", v, n, at)
			}
			return s
		}
		before := applied(db)
		db.Close()
		time.Sleep(2 * time.Millisecond) // a re-applied migration would get a new applied_at
		db2, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db2.Close()
		if after := applied(db2); after != before {
			t.Fatalf("schema_migrations changed on re-open:\n%s\nthen\n%s", before, after)
		}
		if n := count(t, db2, "schema_migrations"); n != LatestSchemaVersion() {
			t.Fatalf("%d schema_migrations rows, want %d", n, LatestSchemaVersion())
		}
	})

	t.Run("a database from a newer program is refused", func(t *testing.T) {
		db, path := openFile(t)
		future := LatestSchemaVersion() + 1
		if _, err := db.sql.Exec("INSERT INTO schema_migrations VALUES (?, '9999_future.sql', 'x')", future); err != nil {
			t.Fatal(err)
		}
		db.Close()
		db2, err := Open(ctx, path)
		if err == nil {
			db2.Close()
			t.Fatal("opened a database with a future schema version")
		}
		if !errors.Is(err, ErrSchemaTooNew) {
			t.Fatalf("error %v, want ErrSchemaTooNew", err)
		}
		t.Log(err)
	})

	t.Run("a failing migration is rolled back and leaves the versions before it", func(t *testing.T) {
		raw, err := sql.Open("sqlite", "file:/migrate-test?vfs=memdb&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		raw.SetMaxOpenConns(1)
		defer raw.Close()
		db := &DB{sql: raw, now: time.Now}
		fsys := fstest.MapFS{
			"migrations/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
			"migrations/0002_b.sql": {Data: []byte("CREATE TABLE b (x INTEGER); INSERT INTO nowhere VALUES (1);")},
		}
		if err := migrate(ctx, db, fsys); err == nil {
			t.Fatal("a broken migration succeeded")
		}
		if v, _ := db.SchemaVersion(ctx); v != 1 {
			t.Fatalf("version %d, want 1", v)
		}
		var n int
		raw.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'b'").Scan(&n)
		if n != 0 {
			t.Fatal("table b of the failed migration exists")
		}
		// Fixed, the migration applies once and only once.
		fsys["migrations/0002_b.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE b (x INTEGER);")}
		for range 2 {
			if err := migrate(ctx, db, fsys); err != nil {
				t.Fatal(err)
			}
		}
		if v, _ := db.SchemaVersion(ctx); v != 2 {
			t.Fatalf("version %d, want 2", v)
		}
	})
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	t.Run("a file database runs in WAL mode with foreign keys on", func(t *testing.T) {
		db, _ := openFile(t)
		var mode string
		var fk int
		db.sql.QueryRow("PRAGMA journal_mode").Scan(&mode)
		db.sql.QueryRow("PRAGMA foreign_keys").Scan(&fk)
		if mode != "wal" || fk != 1 {
			t.Fatalf("journal_mode %q foreign_keys %d", mode, fk)
		}
	})
	t.Run("two in-memory databases are separate and each is shared by its connections", func(t *testing.T) {
		a, b := openMem(t), openMem(t)
		if _, err := a.Decide(ctx, Decision{Queue: QueueEnding, Key: "쇼", Value: "add", Who: "t"}); err != nil {
			t.Fatal(err)
		}
		// Force other connections of a's pool into use.
		c1, _ := a.sql.Conn(ctx)
		c2, _ := a.sql.Conn(ctx)
		defer c1.Close()
		defer c2.Close()
		for _, c := range []*sql.Conn{c1, c2} {
			var n int
			if err := c.QueryRowContext(ctx, "SELECT count(*) FROM decision").Scan(&n); err != nil || n != 1 {
				t.Fatalf("a connection of a sees %d decisions (%v)", n, err)
			}
		}
		if n := count(t, b, "decision"); n != 0 {
			t.Fatalf("b sees %d decisions of a", n)
		}
	})
	t.Run("the default path is evident/evident.db under XDG_DATA_HOME", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("XDG_DATA_HOME", dir)
		p, err := DefaultPath()
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "evident", "evident.db"); p != want {
			t.Fatalf("got %s, want %s", p, want)
		}
		db, err := Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	})
	t.Run("an empty path or one with '?' is refused", func(t *testing.T) {
		for _, p := range []string{"", "a?b.db"} {
			if _, err := Open(ctx, p); !errors.Is(err, ErrInvalid) {
				t.Errorf("Open(%q): %v, want ErrInvalid", p, err)
			}
		}
	})
}
