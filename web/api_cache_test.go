package web_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"evident/store"
	"evident/web"
)

// evident serve's --live-cache (web.SetLiveCache): MiB, 64 by default, 0
// keeps no session state in memory, a negative or huge size is refused and
// changes nothing.
func TestTheLiveCacheFlagSetsTheCapInMiB(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "evident.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, _, err := web.EnsureDemo(ctx, db); err != nil {
		t.Fatal(err)
	}
	if web.DefaultLiveCacheMiB != 64 || store.DefaultLiveCache != 64<<20 {
		t.Fatalf("default %d MiB, store's %d bytes; want 64 MiB", web.DefaultLiveCacheMiB, store.DefaultLiveCache)
	}
	s, err := web.New(db, web.Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	post := func(id string) {
		t.Helper()
		body := `{"turn_id":"` + id + `","session_id":"S-` + id + `","character_id":"CHR-0100","model_id":"m","prompt_id":"P-001","created_at":"2026-10-03T21:00:00+09:00","user_message":"안녕하세요?","reply_text":"들어와. 바람 찬데.","first_person":null,"named_entities":[],"honorific_level":"반말","user_asked_recall":false}`
		resp, err := http.Post(ts.URL+"/api/v1/turns", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", id, resp.StatusCode, b)
		}
	}
	post("L1")
	if n, used := db.LiveCacheStats(); n != 1 || used <= 0 {
		t.Fatalf("default cap: %d sessions, %d bytes kept; want the one session", n, used)
	}
	for _, tc := range []struct {
		mib  int64
		want string
	}{
		{-1, "--live-cache is -1: give the live state cache's size in MiB, 0 to keep no session state in memory (default 64)"},
		{web.MaxLiveCacheMiB + 1, "--live-cache is 1048577 MiB: at most 1048576 (1 TiB)"},
	} {
		if err := web.SetLiveCache(db, tc.mib); err == nil || err.Error() != tc.want {
			t.Errorf("SetLiveCache(%d): %v, want %q", tc.mib, err, tc.want)
		}
	}
	if n, _ := db.LiveCacheStats(); n != 1 {
		t.Fatalf("after refused sizes: %d sessions kept, want the 1 still", n)
	}
	if err := web.SetLiveCache(db, 0); err != nil {
		t.Fatal(err)
	}
	if n, used := db.LiveCacheStats(); n != 0 || used != 0 {
		t.Fatalf("--live-cache 0: %d sessions, %d bytes kept; want none", n, used)
	}
	post("L2")
	if n, _ := db.LiveCacheStats(); n != 0 {
		t.Fatalf("--live-cache 0 after a turn: %d sessions kept, want none", n)
	}
	if err := web.SetLiveCache(db, 1); err != nil {
		t.Fatal(err)
	}
	post("L3")
	if n, used := db.LiveCacheStats(); n != 1 || used <= 0 || used > 1<<20 {
		t.Fatalf("--live-cache 1: %d sessions, %d bytes; want one session within 1 MiB", n, used)
	}
}
