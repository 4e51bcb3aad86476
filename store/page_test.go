package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"evident/persona"
)

// seqsOf lists the seqs of entries.
func seqsOf(es []Entry) []int {
	out := []int{}
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

func TestKeysetPagesAndFiltersOnTheIndexes(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	turns, recs := synthSet(60)
	run := writeRun(t, db, testMeta, recs, turns)
	if err := db.IndexRunText(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	reply := func(i int) string { return *turns[i].ReplyText }
	tests := []struct {
		name   string
		filter Filter
		keep   func(i int) bool
	}{
		{"no filter", Filter{}, func(int) bool { return true }},
		{"a character", Filter{Character: "C1"}, func(i int) bool { return i%3 == 1 }},
		{"a model and a verdict", Filter{Model: "m0", Verdict: persona.SpeechOff}, func(i int) bool { return i%2 == 0 && i%5 == 2 }},
		{"a character, a model and a verdict", Filter{Character: "C0", Model: "m1", Verdict: persona.Kept},
			func(i int) bool { return i%3 == 0 && i%2 == 1 && i%5 == 4 }},
		{"a session", Filter{Session: "S2"}, func(i int) bool { return i/12 == 2 }},
		{"indexed text of four letters, any case", Filter{Text: "cOFFee"}, func(i int) bool { return strings.Contains(reply(i), "Coffee") }},
		{"indexed text with a verdict", Filter{Text: "반말입니다", Verdict: persona.ForbiddenTopic},
			func(i int) bool { return i%11 == 0 && i%5 == 0 }},
		{"two letters, read from the rows", Filter{Text: "0%"}, func(i int) bool { return i%11 == 0 }},
		{"one turn", Filter{TurnID: "T00042"}, func(i int) bool { return i == 42 }},
	}
	for _, tt := range tests {
		t.Run(tt.name+": pages of 7 from a cursor give every match once, in run order", func(t *testing.T) {
			var want []int
			for i := range recs {
				if tt.keep(i) {
					want = append(want, i)
				}
			}
			got := []int{}
			f := tt.filter
			f.Limit = 7
			for {
				page, err := db.Entries(ctx, run.ID, f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, seqsOf(page)...)
				if len(page) < 7 {
					break
				}
				f.From = page[len(page)-1].Seq + 1
			}
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("seqs %v, want %v", got, want)
			}
			counts, err := db.CountByVerdict(ctx, run.ID, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, n := range counts {
				total += n
			}
			if total != len(want) {
				t.Errorf("counted %d, want %d", total, len(want))
			}
			if len(want) > 3 { // page N starts where the offset says
				seq, ok, err := db.SeqAt(ctx, run.ID, tt.filter, 3)
				if err != nil || !ok || seq != want[3] {
					t.Errorf("SeqAt(3) = %d, %v, %v; want %d", seq, ok, err, want[3])
				}
			}
			if _, ok, _ := db.SeqAt(ctx, run.ID, tt.filter, len(want)); ok {
				t.Error("SeqAt past the end found a record")
			}
		})
	}
	t.Run("Until stops before a seq", func(t *testing.T) {
		es, err := db.Entries(ctx, run.ID, Filter{Character: "C2", From: 10, Until: 30})
		if err != nil {
			t.Fatal(err)
		}
		if got := seqsOf(es); !slices.Equal(got, []int{11, 14, 17, 20, 23, 26, 29}) {
			t.Fatalf("seqs %v", got)
		}
	})
	t.Run("CountRun counts the synthetic run by hand", func(t *testing.T) {
		s, err := db.CountRun(ctx, run.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		if s.Records != 60 || s.SessionCount != 5 || len(s.Sessions) != 5 || len(s.Characters) != 3 || len(s.Models) != 2 {
			t.Fatalf("summary %+v", s)
		}
		for _, v := range persona.Verdicts {
			if s.ByVerdict[v] != 12 {
				t.Errorf("%s: %d, want 12", v, s.ByVerdict[v])
			}
		}
		// C0 is i%3 == 0: 20 turns, of which i%5 == 0 (금지 소재 접촉) are i = 0, 15, 30, 45.
		if c := s.Characters[0]; c.Value != "C0" || c.Total != 20 || c.ByVerdict[persona.ForbiddenTopic] != 4 {
			t.Errorf("C0 %+v", c)
		}
		if m := s.Models[1]; m.Value != "m1" || m.Total != 30 {
			t.Errorf("m1 %+v", m)
		}
	})
	t.Run("CountBy follows a filter and leaves out values without matches", func(t *testing.T) {
		gs, err := db.CountBy(ctx, run.ID, "model", Filter{Character: "C0", Verdict: persona.Kept})
		if err != nil {
			t.Fatal(err)
		}
		// i%3 == 0 and i%5 == 4: i = 9, 24, 39, 54 → m1, m0, m1, m0.
		if len(gs) != 2 || gs[0].Value != "m0" || gs[0].Total != 2 || gs[1].Total != 2 || gs[1].ByVerdict[persona.Kept] != 2 {
			t.Fatalf("groups %+v", gs)
		}
		if _, err := db.CountBy(ctx, run.ID, "session", Filter{}); err == nil {
			t.Fatal("counted by an unsupported column")
		}
	})
	t.Run("turns and gold are looked up by turn_id, absent ids left out", func(t *testing.T) {
		dsTurns := turns[:3]
		ds, err := db.ImportDataset(ctx, "lookup", dsTurns, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := db.TurnsByID(ctx, ds, []string{"T00001", "T00099", "T00002"})
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 || *m["T00001"].ReplyText != "답장 1번이야." {
			t.Fatalf("turns %+v", m)
		}
		if err := db.PutGold(ctx, []Gold{{TurnID: "T00002", Verdict: persona.Kept}}, "t"); err != nil {
			t.Fatal(err)
		}
		g, err := db.GoldOf(ctx, []string{"T00001", "T00002"})
		if err != nil || len(g) != 1 || g["T00002"].Verdict != persona.Kept {
			t.Fatalf("gold %+v, %v", g, err)
		}
		var joined []string
		err = db.GoldRecords(ctx, run.ID, func(r persona.Record, g Gold) error {
			joined = append(joined, r.TurnID+"="+string(g.Verdict))
			return nil
		})
		if err != nil || !slices.Equal(joined, []string{"T00002=설정대로 말함"}) {
			t.Fatalf("joined %v, %v", joined, err)
		}
	})
}

func TestSearchComparesNFCOnBothSides(t *testing.T) {
	ctx := context.Background()
	nfc := "한국어 검색"
	nfd := norm.NFD.String(nfc)
	if nfd == nfc {
		t.Fatal("the NFD form must differ")
	}
	for _, indexed := range []bool{false, true} {
		db := openMem(t)
		var recs []persona.Record
		var turns []persona.Turn
		for i, text := range []string{"앞에 " + nfc + " 뒤", "앞에 " + nfd + " 뒤", "다른 말"} {
			tu, r := synth(i)
			tu.ReplyText = sp(text)
			r.Evidence[0].Value = text
			turns, recs = append(turns, tu), append(recs, r)
		}
		run := writeRun(t, db, testMeta, recs, turns)
		if !indexed { // as a run stored without its index: search reads the rows
			if _, err := db.sql.Exec(`DELETE FROM run_search`); err != nil {
				t.Fatal(err)
			}
		}
		if indexed {
			if err := db.IndexRunText(ctx, run.ID); err != nil {
				t.Fatal(err)
			}
			if err := db.IndexRunText(ctx, run.ID); err != nil { // a second call does nothing
				t.Fatal(err)
			}
		}
		for _, q := range []string{nfc, nfd, "국어", norm.NFD.String("국어"), "국"} {
			name := fmt.Sprintf("indexed=%v: a query of %d bytes finds the NFC and the NFD reply", indexed, len(q))
			t.Run(name, func(t *testing.T) {
				es, err := db.Entries(ctx, run.ID, Filter{Text: q})
				if err != nil {
					t.Fatal(err)
				}
				if got := seqsOf(es); !slices.Equal(got, []int{0, 1}) {
					t.Fatalf("seqs %v, want [0 1]", got)
				}
			})
		}
	}
}

func TestSearchIndexIsRecordedAndResumable(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	turns, recs := synthSet(IndexBatch + 3)
	run := writeRun(t, db, testMeta, recs, turns)
	countIndexed := func() int {
		var n int
		if err := db.sql.QueryRow(`SELECT count(*) FROM verdict_fts WHERE verdict_fts MATCH '"회차는"'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A run is indexed in the transactions that write it (run.go indexRow).
	if ok, err := db.TextIndexed(ctx, run.ID); !ok || err != nil {
		t.Fatalf("a committed run: indexed %v, %v", ok, err)
	}
	if n := countIndexed(); n != IndexBatch+3 {
		t.Fatalf("%d rows in the index after commit, want %d", n, IndexBatch+3)
	}
	// A run stored without its index (an older store) is indexed by IndexRunText.
	if _, err := db.sql.Exec(`INSERT INTO verdict_fts (verdict_fts) VALUES ('delete-all')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`DELETE FROM run_search`); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.TextIndexed(ctx, run.ID); ok {
		t.Fatal("indexed before IndexRunText")
	}
	if err := db.IndexRunText(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.TextIndexed(ctx, run.ID); !ok || err != nil {
		t.Fatalf("indexed %v, %v", ok, err)
	}
	var n int
	if err := db.sql.QueryRow(`SELECT count(*) FROM verdict_fts WHERE verdict_fts MATCH '"회차는"'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != IndexBatch+3 { // every synthetic summary says 회차는
		t.Fatalf("%d rows in the index, want %d (two batches, no row twice)", n, IndexBatch+3)
	}
}

func FuzzTextSearch(f *testing.F) {
	for _, s := range []string{"Coffee", "coffee", "100%", "_", "번이", "\"", "a\"b\"c", "ㅎㅏㄴ", "한", "AND", "NEAR(", "*"} {
		f.Add(s)
	}
	db := openMem(f)
	turns, recs := synthSet(30)
	run := writeRun(f, db, testMeta, recs, turns)
	if err := db.IndexRunText(context.Background(), run.ID); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		es, err := db.Entries(context.Background(), run.ID, Filter{Text: q})
		if err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		nq := normalizeQuery(q)
		var want []int
		for i, r := range recs {
			if strings.ContainsRune(nq, 0) {
				continue // documented: a query with NUL matches nothing
			}
			if nq == "" || containsFolded(normalizeText(r.Summary), nq) || containsFolded(normalizeText(*turns[i].ReplyText), nq) {
				want = append(want, i)
			}
		}
		if got := seqsOf(es); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("query %q: seqs %v, want %v", q, got, want)
		}
	})
}
