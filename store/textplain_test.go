package store

import (
	"context"
	"slices"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// plainTexts are replies of every shape the search must fold: NFC Korean
// (plain), the same in NFD, ASCII capitals, invalid UTF-8, an empty reply.
// The summaries of synth hold "번 회차" (plain).
var plainTexts = []string{
	"먹쇠가 왔어.",                      // 0 plain
	norm.NFD.String("먹쇠가 등대에 갔어."), // 1 NFD: not plain
	"Coffee 한 잔",                   // 2 a capital: not plain
	"먹쇠\xff 왔다",                    // 3 invalid UTF-8: not plain
	"",                             // 4 plain
	"coffee와 먹쇠",                   // 5 plain
	"NUL\x00inside 먹쇠",             // 6 a NUL (SQLite's text functions stop there): not plain
}

// TestPlainRowsSearchAsEvidentContainsDoes: a verdict row is stored
// text_plain exactly when its summary and reply need no normalising, and a
// search over rows of every shape gives what the Go rule
// (containsFolded(normalizeText(text), normalizeQuery(q))) gives, both when
// the rows are read (no index yet) and through the index.
func TestPlainRowsSearchAsEvidentContainsDoes(t *testing.T) {
	ctx := context.Background()
	db, _ := openFile(t)
	turns, recs := synthSet(len(plainTexts))
	for i, text := range plainTexts {
		turns[i].ReplyText = sp(text)
		recs[i].Evidence[0].Value = text
	}
	run := writeRun(t, db, testMeta, recs, turns)
	rows, err := db.sql.Query("SELECT seq, text_plain FROM verdict WHERE run_id = ? ORDER BY seq", run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var plain []int
	for rows.Next() {
		var seq, p int
		if err := rows.Scan(&seq, &p); err != nil {
			t.Fatal(err)
		}
		if p == 1 {
			plain = append(plain, seq)
		}
	}
	rows.Close()
	if want := []int{0, 4, 5}; !slices.Equal(plain, want) {
		t.Fatalf("text_plain rows %v, want %v", plain, want)
	}
	for _, when := range []string{"rows read", "through the index"} {
		if when == "through the index" {
			if err := db.IndexRunText(ctx, run.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range []string{"먹쇠", "먹", "COFFEE", "coffee", norm.NFD.String("먹쇠가"), "등대", "\uFFFD", "회차", "없는", "inside", "side 먹"} {
			var want []int
			for i, text := range plainTexts {
				nq := normalizeQuery(q)
				if containsFolded(normalizeText(text), nq) || containsFolded(normalizeText(recs[i].Summary), nq) {
					want = append(want, i)
				}
			}
			es, err := db.Entries(ctx, run.ID, Filter{Text: q})
			if err != nil {
				t.Fatal(err)
			}
			if got := seqsOf(es); !slices.Equal(got, want) {
				t.Errorf("%s: search %q: seqs %v, want %v", when, q, got, want)
			}
		}
	}
}
