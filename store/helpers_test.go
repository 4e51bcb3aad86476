package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"evident/persona"
)

// openMem opens a fresh in-memory database closed at the end of the test.
func openMem(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openFile opens a fresh database file in a temp dir; it returns its path.
func openFile(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "evident.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// fixedClock makes db stamp rows with start, start+1s, start+2s, …
func fixedClock(db *DB, start time.Time) {
	n := 0
	db.now = func() time.Time {
		n++
		return start.Add(time.Duration(n-1) * time.Second)
	}
}

func sp(s string) *string { return &s }

// seed is the seed's example tables (persona/testdata/seed) and the records
// the real judge writes for them.
type seed struct {
	turns   []persona.Turn
	cards   []persona.Card
	lexicon []persona.LexiconRow
	records []persona.Record
}

func loadSeed(t testing.TB) seed {
	t.Helper()
	var s seed
	dir := filepath.Join("..", "persona", "testdata", "seed")
	f, err := os.Open(filepath.Join(dir, "turns.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var tu persona.Turn
		if err := json.Unmarshal(sc.Bytes(), &tu); err != nil {
			t.Fatal(err)
		}
		s.turns = append(s.turns, tu)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cards.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s.cards); err != nil {
		t.Fatal(err)
	}
	s.lexicon = []persona.LexiconRow{{Term: "선거", Topic: "현실 정치"}, {Term: "국회", Topic: "현실 정치"}, {Term: "처방", Topic: "의료 조언"}}
	j, err := persona.NewJudge(s.cards, s.lexicon, nil)
	if err != nil {
		t.Fatal(err)
	}
	sessions := persona.NewSessions()
	for i := range s.turns {
		sessions.Add(&s.turns[i], i)
	}
	for i := range s.turns {
		rec, err := j.Judge(&s.turns[i], i, sessions)
		if err != nil {
			t.Fatal(err)
		}
		s.records = append(s.records, rec)
	}
	return s
}

// tallyOf is the tally a batch run of recs reports.
func tallyOf(recs []persona.Record, rejected int) persona.Tally {
	t := persona.Tally{ByVerdict: map[persona.Verdict]int{}, Rejected: rejected}
	for _, r := range recs {
		t.ByVerdict[r.Verdict]++
		t.Judged++
	}
	return t
}

// writeRun stores recs (with turns[i] when turns is non-nil) as one
// committed run.
func writeRun(t testing.TB, db *DB, meta RunMeta, recs []persona.Record, turns []persona.Turn) RunInfo {
	t.Helper()
	ctx := context.Background()
	w, err := db.BeginRun(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	for i, r := range recs {
		var tu *persona.Turn
		if turns != nil {
			tu = &turns[i]
		}
		if err := w.Add(r, tu); err != nil {
			t.Fatal(err)
		}
	}
	info, err := w.Commit(tallyOf(recs, 0))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// synth is a synthetic turn and its record: character C{i%3}, model
// m{i%2}, session S{i/12}, verdict Verdicts[i%5]; every seventh reply says
// "Coffee", every eleventh summary holds "100%".
func synth(i int) (persona.Turn, persona.Record) {
	id := fmt.Sprintf("T%05d", i)
	reply := fmt.Sprintf("답장 %d번이야.", i)
	if i%7 == 0 {
		reply = fmt.Sprintf("Coffee 한 잔 할래? (%d)", i)
	}
	summary := fmt.Sprintf("%d번 회차는 문장 2개를 읽었습니다.", i)
	if i%11 == 0 {
		summary = fmt.Sprintf("%d번 회차는 100%% 반말입니다.", i)
	}
	tu := persona.Turn{TurnID: id, SessionID: fmt.Sprintf("S%d", i/12), CharacterID: fmt.Sprintf("C%d", i%3),
		ModelID: fmt.Sprintf("m%d", i%2), ReplyText: sp(reply), PromptID: fmt.Sprintf("P%d", i/2),
		NamedEntities: []string{}}
	rec := persona.Record{TurnID: id, SessionID: tu.SessionID, CharacterID: tu.CharacterID, ModelID: tu.ModelID,
		Verdict: persona.Verdicts[i%5], RuleExpected: sp("반말 · 나"), RuleObserved: sp("반말 · 나"),
		OffCanonEntities: []string{},
		Evidence: []persona.Evidence{
			{Source: persona.SourceTurn, Field: "reply_text", Value: reply},
			{Source: persona.SourceTurn, Field: "reply_text", Agg: persona.AggCount, Value: 2},
			{Source: persona.SourceCard, Field: "honorific_rule", Value: "반말"},
		},
		Summary: summary}
	return tu, rec
}

func synthSet(n int) ([]persona.Turn, []persona.Record) {
	turns := make([]persona.Turn, n)
	recs := make([]persona.Record, n)
	for i := range n {
		turns[i], recs[i] = synth(i)
	}
	return turns, recs
}

// count returns a table's row count, read straight from SQLite.
func count(t testing.TB, db *DB, table string) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// importing begins an import named name and its run (Importer.BeginRun,
// testMeta), adds cards, lexicon, then each turn with its record; the
// caller commits or rolls back.
func importing(t testing.TB, ctx context.Context, db *DB, name string, turns []persona.Turn, recs []persona.Record,
	cards []persona.Card, lexicon []persona.LexiconRow) (*Importer, *RunWriter) {
	t.Helper()
	im, err := db.BeginImport(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cards {
		if err := im.AddCard(cards[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range lexicon {
		if err := im.AddLexicon(lexicon[i]); err != nil {
			t.Fatal(err)
		}
	}
	w, err := im.BeginRun(testMeta)
	if err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		if err := im.AddTurn(&turns[i]); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(recs[i], &turns[i]); err != nil {
			t.Fatal(err)
		}
	}
	return im, w
}
