package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// holdWriteLock begins a write transaction on its own connection to path
// and keeps it open (with a row written) until the test ends, as another
// process's import would.
func holdWriteLock(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO decision (queue, key, value, who, decided_at) VALUES ('ending', 'x', 'add', 'w', 'now')"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
	})
}

func TestOpenWhileWriting(t *testing.T) {
	ctx := context.Background()
	s := loadSeed(t)

	t.Run("Open and OpenReadOnly of an up-to-date store do not wait for a writer's transaction", func(t *testing.T) {
		db, path := openFile(t)
		run := writeRun(t, db, testMeta, s.records, s.turns)
		holdWriteLock(t, db)
		// Waiting for the lock would fail after BusyTimeout with SQLITE_BUSY.
		other, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("Open while another connection writes: %v", err)
		}
		other.Close()
		ro, err := OpenReadOnly(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		got, err := ro.Run(ctx, run.ID)
		if err != nil || got.Tally.Judged != len(s.records) {
			t.Fatalf("read-only Run: %+v, %v", got, err)
		}
		if ds, err := ro.Decisions(ctx, ""); err != nil || len(ds) != 0 {
			t.Fatalf("read-only Decisions saw the uncommitted one: %v, %v", ds, err)
		}
	})
}

func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	s := loadSeed(t)

	t.Run("every write of a read-only DB fails with ErrReadOnly and changes nothing", func(t *testing.T) {
		db, path := openFile(t)
		writeRun(t, db, testMeta, s.records, s.turns)
		ro, err := OpenReadOnly(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if !ro.ReadOnly() || ro.Immutable() {
			t.Fatalf("ReadOnly %v Immutable %v, want true false (the directory is writable)", ro.ReadOnly(), ro.Immutable())
		}
		_, err1 := ro.Decide(ctx, Decision{Queue: QueueEnding, Key: "쇼", Value: "add", Who: "w"})
		err2 := ro.PutGold(ctx, []Gold{{TurnID: s.turns[0].TurnID, Verdict: s.records[0].Verdict}}, "g")
		_, err3 := ro.BeginImport(ctx, "x")
		_, err4 := ro.BeginRun(ctx, testMeta)
		for i, err := range []error{err1, err2, err3, err4} {
			if !errors.Is(err, ErrReadOnly) {
				t.Errorf("write %d: %v, want ErrReadOnly", i+1, err)
			}
		}
		if n := count(t, db, "decision") + count(t, db, "gold") + count(t, db, "dataset"); n != 0 {
			t.Fatalf("%d rows written through the read-only DB", n)
		}
	})

	t.Run("a store of an older schema is refused, and so is one of a newer", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			sql  string
			want error
		}{
			{"older", fmt.Sprintf("DELETE FROM schema_migrations WHERE version = %d", LatestSchemaVersion()), ErrSchemaTooOld},
			{"newer", fmt.Sprintf("INSERT INTO schema_migrations VALUES (%d, '9999_future.sql', 'x')", LatestSchemaVersion()+1), ErrSchemaTooNew},
		} {
			db, path := openFile(t)
			if _, err := db.sql.Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			db.Close()
			ro, err := OpenReadOnly(ctx, path)
			if err == nil {
				ro.Close()
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s schema: %v, want %v naming the file", tc.name, err, tc.want)
			}
		}
	})

	t.Run("a missing file, a directory and the in-memory path are refused", func(t *testing.T) {
		dir := t.TempDir()
		for _, p := range []string{filepath.Join(dir, "none.db"), dir, MemoryPath, ""} {
			if ro, err := OpenReadOnly(ctx, p); err == nil {
				ro.Close()
				t.Errorf("OpenReadOnly(%q) succeeded", p)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
			t.Error("OpenReadOnly created the missing file")
		}
	})
}

// TestReadOnlyFile: a store the user may only read — the file 0444 in a
// directory 0555, as another user's — opens read-only and reads (issue 13:
// report on a store file the user may only read). As root, permissions do
// not bind, so the reading runs in a child process as nobody (uid 65534).
func TestReadOnlyFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process when root")
	}
	ctx := context.Background()
	s := loadSeed(t)
	dir, err := os.MkdirTemp("", "evident-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(dir, 0o755)
		os.RemoveAll(dir)
	})
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "evident.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	run := writeRun(t, db, testMeta, s.records, s.turns)
	if _, err := db.Decide(ctx, Decision{Queue: QueueEnding, Key: "쇼", Value: "add", Who: "editor"}); err != nil {
		t.Fatal(err)
	}
	db.Close() // the last connection removes -wal and -shm
	var out []byte
	if os.Getuid() == 0 {
		bin := filepath.Join(dir, "store.test")
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		lockDown(t, dir, path)
		cmd := exec.Command(bin, "-test.run=^TestReadOnlyFileHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "EVIDENT_STORE_RO_DB="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Stderr = os.Stderr
		if out, err = cmd.Output(); err != nil {
			t.Fatalf("child as nobody: %v (%s)", err, out)
		}
		out = []byte(jsonLine(string(out)))
	} else {
		lockDown(t, dir, path)
		out = readOnlyReport(path)
	}
	var got roReport
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	want := roReport{Immutable: true, Run: run.ID, Judged: len(s.records), Decisions: 1, WriteErr: ErrReadOnly.Error()}
	// Open for writing fails saying what to do (evident serve on such a store)
	if !strings.HasPrefix(got.OpenErr, "store: the store can only be read here: store: open "+path+": ") ||
		!strings.HasSuffix(got.OpenErr, "; commands that only read (report, review export, eval) open it in place; to write, copy it somewhere writable") {
		t.Errorf("Open of a store that can only be read: %q", got.OpenErr)
	}
	if got.Err != "" || got.Immutable != want.Immutable || got.Run != want.Run || got.Judged != want.Judged ||
		got.Decisions != want.Decisions || !strings.Contains(got.WriteErr, want.WriteErr) {
		t.Fatalf("read-only store read as %+v, want %+v", got, want)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "evident.db-") && e.Name() != filepath.Base(SidePath(path)) { // the sidecar was there before
			t.Errorf("reading left %s", e.Name())
		}
	}
}

func lockDown(t *testing.T, dir, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
}

// jsonLine is the child's line that holds its JSON report.
func jsonLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "{") {
			return l
		}
	}
	return s
}

type roReport struct {
	Err       string `json:"err,omitempty"`
	Immutable bool   `json:"immutable"`
	Run       int64  `json:"run"`
	Judged    int    `json:"judged"`
	Decisions int    `json:"decisions"`
	WriteErr  string `json:"write_err"`
	OpenErr   string `json:"open_err"` // Open (for writing) of the same file
}

// readOnlyReport opens path read-only and reports what it read, as JSON.
func readOnlyReport(path string) []byte {
	ctx := context.Background()
	var r roReport
	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		r.Err = err.Error()
	} else {
		defer db.Close()
		r.Immutable = db.Immutable()
		if run, err := db.LatestRun(ctx); err != nil {
			r.Err = err.Error()
		} else {
			r.Run, r.Judged = run.ID, run.Tally.Judged
		}
		if ds, err := db.Decisions(ctx, ""); err != nil {
			r.Err = err.Error()
		} else {
			r.Decisions = len(ds)
		}
		if _, err := db.Decide(ctx, Decision{Queue: QueueEnding, Key: "x", Value: "add", Who: "w"}); err != nil {
			r.WriteErr = err.Error()
		}
	}
	if db, err := Open(ctx, path); err != nil {
		r.OpenErr = err.Error()
	} else {
		db.Close()
	}
	b, _ := json.Marshal(r)
	return b
}

// TestReadOnlyFileHelper is the child of TestReadOnlyFile.
func TestReadOnlyFileHelper(t *testing.T) {
	path := os.Getenv("EVIDENT_STORE_RO_DB")
	if path == "" {
		t.Skip("child process of TestReadOnlyFile")
	}
	fmt.Println(string(readOnlyReport(path)))
}
