package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"evident/persona"
	"evident/persona/live"
)

// timedTurn is liveTurn with created_at and named entities.
func timedTurn(id, at string, named []string, asked bool, msg, reply string) LiveTurn {
	lt := liveTurn(id, "", asked, msg, reply)
	lt.Turn.CreatedAt, lt.Turn.NamedEntities = at, named
	lt.Digest = live.Digest(lt.Turn)
	return lt
}

func manyNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("인물%04d", i)
	}
	return out
}

// countWrites adds triggers counting the rows written to the state tables
// (inserted, updated or deleted) and returns a reader of the counts.
func countWrites(t *testing.T, db *DB) func() (mentions, cited int) {
	t.Helper()
	for _, q := range []string{
		"CREATE TABLE test_writes (tbl TEXT PRIMARY KEY, n INTEGER NOT NULL)",
		"INSERT INTO test_writes VALUES ('live_mention', 0), ('live_cited', 0)",
	} {
		if _, err := db.sql.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tbl := range []string{"live_mention", "live_cited"} {
		for _, ev := range []string{"INSERT", "UPDATE", "DELETE"} {
			q := fmt.Sprintf("CREATE TRIGGER test_%s_%s AFTER %s ON %s BEGIN UPDATE test_writes SET n = n + 1 WHERE tbl = '%s'; END", tbl, ev, ev, tbl, tbl)
			if _, err := db.sql.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	return func() (int, int) {
		var m, c int
		if err := db.sql.QueryRow("SELECT (SELECT n FROM test_writes WHERE tbl = 'live_mention'), (SELECT n FROM test_writes WHERE tbl = 'live_cited')").Scan(&m, &c); err != nil {
			t.Fatal(err)
		}
		return m, c
	}
}

// A turn naming 1,000 entities with a 200 KB reply is stored as one cited
// row holding the reply once and 1,000 small mention rows; the next turn of
// the session writes its header and only the rows it changes (one mention,
// one cited turn), whether the state comes from the cache or from the rows,
// and a recall of one of the 1,000 cites the big turn with its reply.
func TestABigTurnIsStoredOnceAndTheNextTurnWritesOnlyWhatItChanges(t *testing.T) {
	for _, cache := range []int64{DefaultLiveCache, 0} {
		t.Run(fmt.Sprintf("with a live cache of %d bytes", cache), func(t *testing.T) {
			db := openMem(t)
			db.SetLiveCache(cache)
			ds := liveDataset(t, db)
			j := liveJudge(t)
			writes := countWrites(t, db)
			reply := strings.Repeat("오늘은 등대 쪽으로 가 보자. ", 6000) // 204,000 bytes
			names := append(manyNames(999), "도윤")
			judgeLive(t, db, ds, j, timedTurn("T0", "2026-01-01T10:00:00Z", names, false, "누구누구?", reply))
			var replyBytes, cited, mentions int
			if err := db.sql.QueryRow("SELECT sum(length(CAST(reply_text AS BLOB))), count(*), (SELECT count(*) FROM live_mention WHERE session_id = 'S1') FROM live_cited WHERE session_id = 'S1'").Scan(&replyBytes, &cited, &mentions); err != nil {
				t.Fatal(err)
			}
			if replyBytes != len(reply) || cited != 1 || mentions != 1000 {
				t.Fatalf("stored %d reply bytes in %d cited rows and %d mentions; want %d in 1 and 1000", replyBytes, cited, mentions, len(reply))
			}
			st, _, err := db.LiveState(t.Context(), "S1")
			if err != nil {
				t.Fatal(err)
			}
			if limit := len(reply) + 1000*(len("인물0000")+40) + 200; len(st) > limit {
				t.Fatalf("state %d bytes, want at most %d: one reply and the names", len(st), limit)
			}
			m0, c0 := writes()
			judgeLive(t, db, ds, j, timedTurn("T1", "2026-01-01T10:01:00Z", []string{"물새섬", "인물0007"}, false, "또?", "물새섬에 가자."))
			if m, c := writes(); m-m0 != 1 || c-c0 != 1 {
				t.Fatalf("the next turn wrote %d mention rows and %d cited rows, want 1 and 1 (물새섬 and T1)", m-m0, c-c0)
			}
			res, _ := judgeLive(t, db, ds, j, timedTurn("T2", "2026-01-01T10:02:00Z", []string{}, true, "동생 이름이 뭐였지?", "글쎄."))
			r := recordOf(t, res[0].Record)
			if r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T0" || !strings.Contains(string(res[0].Record), "오늘은 등대 쪽으로") {
				t.Fatalf("recall source %v, want T0 with its reply cited: %.300s", r.RecallSourceTurn, res[0].Record)
			}
		})
	}
}

// A mention's by_time moving to an earlier-created turn, and then again,
// deletes the cited row no mention refers to any more; within one call, a
// turn cited and dropped again is never written. The rows then hold what
// stepping the same turns in memory holds.
func TestACitedTurnNoMentionRefersToIsDeleted(t *testing.T) {
	turns := func(p string) []LiveTurn {
		return []LiveTurn{
			timedTurn(p+"A", "2026-01-01T10:05:00Z", []string{"도윤"}, false, "가족은?", "동생 도윤이 있어."),
			timedTurn(p+"B", "2026-01-01T10:03:00Z", []string{"도윤"}, false, "또?", "도윤이는 배를 고쳐."),
			timedTurn(p+"C", "2026-01-01T10:01:00Z", []string{"도윤"}, false, "그리고?", "도윤이 좋아."),
		}
	}
	tests := []struct {
		name        string
		calls       [][]LiveTurn
		wantWritten int // cited rows inserted or deleted
	}{
		{"one call a turn: B is inserted, then deleted", [][]LiveTurn{turns("1")[:1], turns("1")[1:2], turns("1")[2:]}, 4},
		{"one call of three: B is never written", [][]LiveTurn{turns("3")}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openMem(t)
			ds := liveDataset(t, db)
			j := liveJudge(t)
			writes := countWrites(t, db)
			var want live.State
			for _, call := range tc.calls {
				judgeLive(t, db, ds, j, call...)
				for _, lt := range call {
					if _, _, err := live.Step(j, &want, lt.Turn); err != nil {
						t.Fatal(err)
					}
				}
			}
			var seqs string
			if err := db.sql.QueryRow("SELECT group_concat(seq) FROM (SELECT seq FROM live_cited WHERE session_id = 'S1' ORDER BY seq)").Scan(&seqs); err != nil {
				t.Fatal(err)
			}
			if _, c := writes(); seqs != "0,2" || c != tc.wantWritten {
				t.Fatalf("cited seqs %q after %d cited-row writes, want 0,2 (A, C) after %d", seqs, c, tc.wantWritten)
			}
			got, _, err := db.LiveState(t.Context(), "S1")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want.AppendJSON(nil)) {
				t.Fatalf("stored state\n %s\nwant\n %s", got, want.AppendJSON(nil))
			}
		})
	}
}

// A call with a turn over the state limit is refused at that row with the
// step's *live.LimitError, and nothing of the call is stored: not the turns
// before it, not their state rows.
func TestATurnOverTheStateLimitStoresNothingOfItsCall(t *testing.T) {
	db := openMem(t)
	ds := liveDataset(t, db)
	j := liveJudge(t)
	lim := live.Limits{MaxStateBytes: 1000}
	turns := []LiveTurn{
		timedTurn("T0", "2026-01-01T10:00:00Z", []string{"도윤"}, false, "가족은?", "동생 도윤이 있어."),
		timedTurn("T1", "2026-01-01T10:01:00Z", []string{"물새섬"}, false, "어디?", strings.Repeat("섬", 400)),
	}
	_, _, err := db.JudgeLive(t.Context(), ds, RunMeta{Profile: "seed"}, turns, func(i int, st *live.State) (persona.Record, live.Change, error) {
		rec, o, err := lim.Step(j, st, turns[i].Turn)
		return rec, o.Change, err
	})
	var re *LiveRowError
	var le *live.LimitError
	if !errors.As(err, &re) || re.Row != 1 || !errors.As(err, &le) || le.Limit != live.LimitStateBytes || le.Max != 1000 || le.TurnID != "T1" {
		t.Fatalf("error %v, want row 2's state_bytes limit error", err)
	}
	var n int
	if err := db.sql.QueryRow("SELECT (SELECT count(*) FROM live_turn) + (SELECT count(*) FROM live_session) + (SELECT count(*) FROM live_cited) + (SELECT count(*) FROM live_mention)").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the refused call left %d rows (%v)", n, err)
	}
}

// Migration 0013 turns each stored state of the earlier form (one JSON
// value in which every mention carried its turn's reply) into rows: one
// cited row per turn, however many copies the JSON held, one mention row per
// entity, the header; and the next turn recalls from them.
func TestMigration0013TurnsStoredStatesIntoRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "evident.db")
	raw, err := sql.Open("sqlite", path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	before := fstest.MapFS{}
	for v := 1; v <= 12; v++ {
		m, err := fs.Glob(migrationFS, fmt.Sprintf("migrations/%04d_*.sql", v))
		if err != nil || len(m) != 1 {
			t.Fatalf("migration %d: %v %v", v, m, err)
		}
		b, _ := fs.ReadFile(migrationFS, m[0])
		before[m[0]] = &fstest.MapFile{Data: b}
	}
	if err := migrate(ctx, &DB{sql: raw, now: time.Now}, before); err != nil {
		t.Fatal(err)
	}
	reply := "동생 도윤이 \"물새섬\"에 있어."
	var mentions []string
	for i := range 200 { // 200 entities first named by T1: 200 copies of its reply
		mentions = append(mentions, fmt.Sprintf(`"e%03d":{"by_arrival":{"turn_id":"T1","reply_text":%q,"seq":0,"created_at":"2026-01-01T10:00:00Z"},"by_time":{"turn_id":"T1","reply_text":%q,"seq":0,"created_at":"2026-01-01T10:00:00Z"}}`, i, reply, reply))
	}
	mentions = append(mentions, `"도윤":{"by_arrival":{"turn_id":"T1","reply_text":"동생 도윤이 \"물새섬\"에 있어.","seq":0,"created_at":"2026-01-01T10:00:00Z"},"by_time":{"turn_id":"T2","reply_text":null,"seq":1,"created_at":"2026-01-01T09:00:00Z"}}`)
	old := `{"turns":3,"untimed":true,"latest":{"turn_id":"T1","created_at":"2026-01-01T10:00:00Z"},"mentions":{` + strings.Join(mentions, ",") + `}}`
	if _, err := raw.Exec("INSERT INTO live_session (session_id, state, turns, updated_at) VALUES ('S1', ?, 3, 'now'), ('S2', '{\"turns\":1}', 1, 'now')", old); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cited, ments int
	var replies string
	if err := db.sql.QueryRow("SELECT count(*), group_concat(coalesce(reply_text, 'NULL'), '|'), (SELECT count(*) FROM live_mention) FROM live_cited").Scan(&cited, &replies, &ments); err != nil {
		t.Fatal(err)
	}
	if cited != 2 || replies != reply+"|NULL" || ments != 201 {
		t.Fatalf("%d cited rows (%s), %d mentions; want 2 (T1 once, T2), 201", cited, replies, ments)
	}
	st, n, err := db.LiveState(ctx, "S1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := live.Resume(st)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Header()
	f, _ := s.Mention("도윤")
	if n != 3 || !h.Untimed || h.Latest == nil || h.Latest.TurnID != "T1" || f != (live.Firsts{ByArrival: 0, ByTime: 1}) || s.Names() != 201 {
		t.Fatalf("migrated state: %d turns, header %+v, 도윤 %+v, %d names", n, h, f, s.Names())
	}
	if st2, n2, err := db.LiveState(ctx, "S2"); err != nil || n2 != 1 || string(st2) != `{"turns":1}` {
		t.Fatalf("S2: %s %d %v", st2, n2, err)
	}
	// Untimed: recall cites the first mention by arrival, T1, with its reply.
	ds := liveDataset(t, db)
	res, _ := judgeLive(t, db, ds, liveJudge(t), liveTurn("T4", "", true, "동생 이름이 뭐였지?", "글쎄."))
	r := recordOf(t, res[0].Record)
	if r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T1" || !strings.Contains(string(res[0].Record), `물새섬`) {
		t.Fatalf("recall after the migration: %s", res[0].Record)
	}
}
