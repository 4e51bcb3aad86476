package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"evident/persona"
)

// TestImportedRun: a run judged while its dataset is imported
// (Importer.BeginRun, runstore.Run's one pass).
func TestImportedRun(t *testing.T) {
	ctx := context.Background()
	t.Run("the run and its dataset commit, import first, and read back as a run of the dataset", func(t *testing.T) {
		db, _ := openFile(t)
		db.batchRows = 7
		turns, recs := synthSet(40)
		im, w := importing(t, ctx, db, "one pass", turns, recs, nil, nil)
		sum := im.TurnsFingerprint()
		id, err := im.Commit()
		if err != nil {
			t.Fatal(err)
		}
		w.SetFingerprint(TableTurns, sum)
		run, err := w.Commit(tallyOf(recs, 0))
		if err != nil {
			t.Fatal(err)
		}
		if run.DatasetID != id {
			t.Fatalf("run of dataset %d, want %d", run.DatasetID, id)
		}
		got, err := db.Records(ctx, run.ID, Filter{})
		if err != nil || len(got) != 40 {
			t.Fatalf("%d records, %v", len(got), err)
		}
		src, err := db.DatasetTable(ctx, id, TableTurns)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := src.Open()
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := rows.ReadRows(nil, 16, 1<<20); err != nil {
				break
			}
		}
		want, ok := src.Fingerprint()
		if !ok || want != sum || run.Fingerprints[TableTurns] != sum {
			t.Errorf("TurnsFingerprint %s, stored table's %s (%v), run's %s", sum, want, ok, run.Fingerprints[TableTurns])
		}
	})
	t.Run("a run committed before its import is refused and rolled back", func(t *testing.T) {
		db := openMem(t)
		turns, recs := synthSet(3)
		im, w := importing(t, ctx, db, "x", turns, recs, nil, nil)
		defer im.Rollback()
		if _, err := w.Commit(tallyOf(recs, 0)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Commit before the import's: %v, want ErrInvalid", err)
		}
		if n := count(t, db, "run") + count(t, db, "verdict"); n != 0 {
			t.Fatalf("%d run and verdict rows after the refused commit", n)
		}
		if _, err := im.Commit(); err != nil {
			t.Fatalf("the import still commits: %v", err)
		}
	})
	t.Run("rolling back the run and then the import leaves nothing", func(t *testing.T) {
		db := openMem(t)
		db.batchRows = 2
		turns, recs := synthSet(9)
		im, w := importing(t, ctx, db, "x", turns, recs, nil, nil)
		if err := w.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := im.Rollback(); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"dataset", "chat_turn", "run", "verdict"} {
			if n := count(t, db, table); n != 0 {
				t.Errorf("%d %s rows left", n, table)
			}
		}
	})
	t.Run("BeginRun on an ended import fails with ErrClosed", func(t *testing.T) {
		db := openMem(t)
		im, err := db.BeginImport(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		im.Rollback()
		if _, err := im.BeginRun(testMeta); !errors.Is(err, ErrClosed) {
			t.Errorf("err = %v, want ErrClosed", err)
		}
	})
}

// TestKilledImportRun: a process killed while it writes an import and its
// run (batches of both committed) leaves neither visible, and the next Open
// removes both, the run before the dataset it references.
func TestKilledImportRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := t.TempDir() + "/evident.db"
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EVIDENT_STORE_KILL_DB="+path, "EVIDENT_STORE_KILL_MODE=importrun")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	ro, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := count(t, ro, "chat_turn"), count(t, ro, "verdict"); a != 20000 || b != 20000 {
		t.Fatalf("%d chat_turn and %d verdict rows committed by the killed writer, want 20,000 each", a, b)
	}
	if rs, err := ro.Runs(context.Background()); err != nil || len(rs) != 0 {
		t.Fatalf("runs %+v, %v", rs, err)
	}
	ro.Close()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"dataset", "chat_turn", "run", "verdict"} {
		if n := count(t, db, table); n != 0 {
			t.Errorf("%d %s rows left after the reclaim", n, table)
		}
	}
	if got := lockFiles(t, path); len(got) != 0 {
		t.Fatalf("lock files left after the reclaim: %q", got)
	}
}

func TestNFCFastPath(t *testing.T) {
	for _, c := range []struct {
		name, s string
		fast    bool
	}{
		{"ASCII", "Coffee 한 잔", true},
		{"precomposed Hangul and CJK punctuation", "먹쇠가 왔어. 「청명검」… 『네』", true},
		{"precomposed Hangul only", "먹쇠가 왔어.", true},
		{"Latin-1 precomposed é", "café", true},
		{"a conjoining jamo (NFD Hangul)", "\u1106\u1165\u11a8", false},
		{"a combining acute", "cafe\u0301", false},
		{"invalid UTF-8", "a\xffb", false},
		{"an em quad (singleton decomposition)", "a\u2001b", false},
		{"a Hangul tone mark (combining)", "가\u302e", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := nfcFast(c.s); got != c.fast {
				t.Errorf("nfcFast(%q) = %v, want %v", c.s, got, c.fast)
			}
			if c.fast && !norm.NFC.IsNormalString(c.s) {
				t.Errorf("%q is answered fast but is not NFC", c.s)
			}
			if got, want := normalizeText(c.s), norm.NFC.String(strings.ToValidUTF8(c.s, "\uFFFD")); got != want {
				t.Errorf("normalizeText(%q) = %q, want %q", c.s, got, want)
			}
		})
	}
}

func TestNFCStableRunesAreNFCStarters(t *testing.T) {
	for r := rune(0); r <= 0xD7A3; r++ {
		if !nfcStable(r) || !utf8.ValidRune(r) {
			continue
		}
		p := norm.NFC.PropertiesString(string(r))
		if !norm.NFC.IsNormalString(string(r)) || p.CCC() != 0 || norm.NFC.String(string(r)) != string(r) {
			t.Fatalf("U+%04X is in nfcStable's ranges but not a stable NFC starter", r)
		}
		// No rune of the ranges composes with a following one: a few pairs
		// with each, including the Hangul jamo that do compose (outside).
		for _, next := range []rune{'a', 0xAC00, 0x3001, 0x2026} {
			if s := string([]rune{r, next}); !norm.NFC.IsNormalString(s) {
				t.Fatalf("%q is not NFC", s)
			}
		}
	}
}

func TestTheSearchIndexMergesSixteenSegments(t *testing.T) {
	db := openMem(t)
	var v int
	if err := db.sql.QueryRow(`SELECT v FROM verdict_fts_config WHERE k = 'automerge'`).Scan(&v); err != nil || v != 16 {
		t.Fatalf("automerge %d, %v; want 16 (migration 0010)", v, err)
	}
}

// TestShortSearchesUseTheIndex: a query of one or two characters is served
// by the padded trigram index (migration 0010) with the scan's answer, and a
// run indexed without padding, or a query the index cannot serve, still
// gets that answer by reading the rows.
func TestShortSearchesUseTheIndex(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	texts := []string{"먹쇠가 왔어.", "앞에 먹쇠", "응", "다른 말", "Coffee 먹", norm.NFD.String("국어 먹쇠"), ""}
	var turns []persona.Turn
	var recs []persona.Record
	for i, text := range texts {
		tu, r := synth(i)
		tu.ReplyText = sp(text)
		r.Evidence[0].Value = text
		turns, recs = append(turns, tu), append(recs, r)
	}
	// 300 replies 가X다 (X a different syllable each): 가 has more than
	// maxShortTerms trigrams, so it is answered by reading the rows.
	for i := range 300 {
		tu, r := synth(len(texts) + i)
		text := "가" + string(rune(0xAC01+i)) + "다"
		tu.ReplyText = sp(text)
		r.Evidence[0].Value = text
		turns, recs = append(turns, tu), append(recs, r)
	}
	run := writeRun(t, db, testMeta, recs, turns)
	want := func(q string) []int {
		nq := normalizeQuery(q)
		var out []int
		for i, r := range recs {
			if containsFolded(normalizeText(r.Summary), nq) || containsFolded(normalizeText(*turns[i].ReplyText), nq) {
				out = append(out, i)
			}
		}
		return out
	}
	queries := []string{"먹쇠", "먹", "쇠", "응", "COF", "co", "국", norm.NFD.String("국"), "어", "가", "없", "\uE000"}
	for _, padded := range []int{1, 0} {
		if _, err := db.sql.Exec("UPDATE run_search SET padded = ?", padded); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			t.Run(fmt.Sprintf("padded=%d: %q finds what the scan finds", padded, q), func(t *testing.T) {
				es, err := db.Entries(ctx, run.ID, Filter{Text: q})
				if err != nil {
					t.Fatal(err)
				}
				if got, w := seqsOf(es), want(q); !slices.Equal(got, w) {
					t.Fatalf("seqs %v, want %v", got, w)
				}
			})
		}
	}
	t.Run("the index serves a two-character query on a padded run, and not 가 with its 300 trigrams", func(t *testing.T) {
		m, none, ok, err := db.shortMatch(ctx, runIndex{pool: db.sql, schema: "main"}, "먹쇠", 1)
		if err != nil || !ok || none || m != "\"먹쇠가\" OR \"먹쇠\uE000\"" {
			t.Fatalf("shortMatch(먹쇠) = %q, %v, %v, %v", m, none, ok, err)
		}
		if _, _, ok, err := db.shortMatch(ctx, runIndex{pool: db.sql, schema: "main"}, "가", 1); ok || err != nil {
			t.Fatalf("shortMatch(가): ok %v, %v", ok, err)
		}
		if _, none, ok, _ := db.shortMatch(ctx, runIndex{pool: db.sql, schema: "main"}, "없", 1); !ok || !none {
			t.Fatalf("shortMatch(없): ok %v, none %v", ok, none)
		}
		if _, _, ok, _ := db.shortMatch(ctx, runIndex{pool: db.sql, schema: "main"}, "É", 1); ok {
			t.Fatal("a letter the tokenizer folds beyond ASCII must read the rows")
		}
	})
	t.Run("rows are read instead of the index when docs² > need × indexed rows", func(t *testing.T) {
		var rows int
		if err := db.sql.QueryRow("SELECT max(rowid) FROM verdict").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			docs, need int
			scan       bool
		}{
			{rows, 1, true},             // in every row, one match needed: read rows
			{rows, rows, false},         // every row needed: equal cost, keep the index
			{1, 1, rows < 1},            // one posting: the index unless the store is empty
			{rows * 2, rows * 4, false}, // 2 postings a row but a count of 4 a row: the index
		} {
			got, err := db.shortScan(ctx, tc.docs, tc.need)
			if err != nil || got != tc.scan {
				t.Errorf("shortScan(%d docs, need %d) over %d rows = %v, %v; want %v", tc.docs, tc.need, rows, got, err, tc.scan)
			}
		}
		// 먹쇠 is in a few rows: a count (need = the cap) uses the index.
		if _, _, ok, _ := db.shortMatch(ctx, runIndex{pool: db.sql, schema: "main"}, "먹쇠", db.SearchCap()); !ok {
			t.Error("a count of 먹쇠 should use the index")
		}
	})
}

// TestCountsFromTheSummaryEqualTheIndexCounts: CountByVerdict and CountBy
// answer a filter of character, model and verdict from the stored
// summary's Cross counts with the figures SQL counts on the index.
func TestCountsFromTheSummaryEqualTheIndexCounts(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	turns, recs := synthSet(97)
	run := writeRun(t, db, testMeta, recs, turns)
	type result struct {
		verdicts    map[persona.Verdict]int
		chars, mods []GroupCount
	}
	var filters []Filter
	for _, c := range []string{"", "C0", "C2", "C9"} {
		for _, m := range []string{"", "m1", "mx"} {
			for _, v := range []persona.Verdict{"", persona.Verdicts[0], persona.Verdicts[3]} {
				filters = append(filters, Filter{Character: c, Model: m, Verdict: v})
			}
		}
	}
	all := func() []result {
		var out []result
		for _, f := range filters {
			var r result
			var err error
			if r.verdicts, err = db.CountByVerdict(ctx, run.ID, f); err != nil {
				t.Fatal(err)
			}
			if r.chars, err = db.CountBy(ctx, run.ID, "character", f); err != nil {
				t.Fatal(err)
			}
			if r.mods, err = db.CountBy(ctx, run.ID, "model", f); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	bySQL := all()
	s, err := db.CountRun(ctx, run.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cross) != 6 { // 3 characters × 2 models
		t.Fatalf("%d cross pairs, want 6", len(s.Cross))
	}
	if err := db.PutRunSummary(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	fromSummary := all()
	for i, f := range filters {
		if !reflect.DeepEqual(bySQL[i], fromSummary[i]) {
			t.Errorf("filter %+v: from the summary %+v, by SQL %+v", f, fromSummary[i], bySQL[i])
		}
	}
	// The summary is really read: a changed Cross changes the answer.
	s.Cross[0].ByVerdict[persona.Verdicts[0]] += 1000
	if err := db.PutRunSummary(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	got, err := db.CountByVerdict(ctx, run.ID, Filter{Character: s.Cross[0].Character})
	if err != nil || got[persona.Verdicts[0]] != bySQL[9].verdicts[persona.Verdicts[0]]+1000 {
		t.Errorf("counts %v, %v: not read from the summary", got, err)
	}
}

// TestTextCountsAreReadOnce: the three counts of a search page (per
// verdict, character, model) are those SQL counts on the rows, and the rows
// are read once for them (the counts of the filter are kept).
func TestTextCountsAreReadOnce(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	turns, recs := synthSet(97)
	run := writeRun(t, db, testMeta, recs, turns)
	want := func(f Filter) (map[persona.Verdict]int, map[string]int, map[string]int) {
		verdicts, chars, mods := zeroVerdicts(), map[string]int{}, map[string]int{}
		q := normalizeQuery(f.Text)
		for i, r := range recs {
			if !containsFolded(normalizeText(r.Summary), q) && !containsFolded(normalizeText(*turns[i].ReplyText), q) {
				continue
			}
			if (f.Character != "" && r.CharacterID != f.Character) || (f.Verdict != "" && r.Verdict != f.Verdict) {
				continue
			}
			verdicts[r.Verdict]++
			chars[r.CharacterID]++
			mods[r.ModelID]++
		}
		return verdicts, chars, mods
	}
	totals := func(gs []GroupCount) map[string]int {
		out := map[string]int{}
		for _, g := range gs {
			out[g.Value] = g.Total
		}
		return out
	}
	for _, f := range []Filter{{Text: "Coffee"}, {Text: "반말", Character: "C1"}, {Text: "번이", Verdict: persona.Verdicts[2]}, {Text: "없는 말"}} {
		for pass := range 2 {
			t.Run(fmt.Sprintf("%+v, pass %d", f, pass), func(t *testing.T) {
				v, c, m := want(f)
				gotV, err := db.CountByVerdict(ctx, run.ID, f)
				if err != nil {
					t.Fatal(err)
				}
				gotC, err := db.CountBy(ctx, run.ID, "character", f)
				if err != nil {
					t.Fatal(err)
				}
				gotM, err := db.CountBy(ctx, run.ID, "model", f)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gotV, v) || !reflect.DeepEqual(totals(gotC), c) || !reflect.DeepEqual(totals(gotM), m) {
					t.Errorf("counts %v %v %v, want %v %v %v", gotV, totals(gotC), totals(gotM), v, c, m)
				}
			})
		}
	}
	if n := len(db.textCounts.m); n != 4 {
		t.Errorf("%d filters' counts kept, want 4 (one per text filter, whatever its character or verdict)", n)
	}
}

func TestTextCountsKeepAtMost32Filters(t *testing.T) {
	var c textCountCache
	for i := range 40 {
		c.put(textCountKey{runID: 1, f: Filter{Text: fmt.Sprint(i)}}, textCounts{cross: []CrossCount{}})
	}
	if len(c.m) != maxTextCounts || len(c.order) != maxTextCounts {
		t.Fatalf("%d kept (%d in order), want %d", len(c.m), len(c.order), maxTextCounts)
	}
	if _, ok := c.get(textCountKey{runID: 1, f: Filter{Text: "0"}}); ok {
		t.Error("the oldest filter is still kept")
	}
	if _, ok := c.get(textCountKey{runID: 1, f: Filter{Text: "39"}}); !ok {
		t.Error("the newest filter is not kept")
	}
}
