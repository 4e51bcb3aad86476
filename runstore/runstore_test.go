package runstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/demo"
	"evident/persona/ingest"
	"evident/persona/speech"
	"evident/runstore"
	"evident/store"
)

func openMem(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func demoTables() runstore.Tables {
	return runstore.Tables{Turns: demo.Turns(), Cards: demo.Cards(), Lexicon: demo.Lexicon()}
}

// demoRun is a fresh in-memory store holding the demo imported and judged
// (runstore.Run, strict), and that run.
func demoRun(t *testing.T) (*store.DB, store.RunInfo) {
	t.Helper()
	db := openMem(t)
	res, err := runstore.Run(context.Background(), db, demoTables(), runstore.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return db, res.Run
}

func text(name, body string) ingest.Source {
	f, err := ingest.FormatOf(name)
	if err != nil {
		panic(err)
	}
	return ingest.NewTable(name, f, func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil })
}

// judgeFiles is what evident judge writes for the demo, decoded.
func judgeFiles(t *testing.T, p *speech.Profile) []persona.Record {
	t.Helper()
	j, _, err := batch.NewJudge(demo.Cards(), demo.Lexicon(), p)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := (&batch.Run{Judge: j, Turns: demo.Turns()}).Do(context.Background(), batch.Outputs{Lines: &buf}); err != nil {
		t.Fatal(err)
	}
	var out []persona.Record
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var r persona.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func normalise(t *testing.T, recs []persona.Record) string {
	t.Helper()
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRunDemo(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	res, err := runstore.Run(ctx, db, demoTables(), runstore.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the demo is imported whole and judged into one run with the demo's tally", func(t *testing.T) {
		if res.Turns != 195 || res.Cards != 4 || res.Lexicon != 49 || len(res.Rejects) != 0 {
			t.Errorf("imported %d turns, %d cards, %d lexicon rows, %d rejects", res.Turns, res.Cards, res.Lexicon, len(res.Rejects))
		}
		want := "judged 195 (금지 소재 접촉 15 · 세계관 밖 고유명사 18 · 말투 어긋남 36 · 앞 회차를 기억 못 함 9 · 설정대로 말함 117), rejected 0"
		if got := res.Run.Tally.String(); got != want {
			t.Errorf("tally %q, want %q", got, want)
		}
		if res.Run.DatasetID != res.DatasetID || res.Run.Profile != "seed" {
			t.Errorf("run %+v", res.Run.RunMeta)
		}
		for _, table := range []string{"chat_turn", "character_card", "topic_lexicon"} {
			if len(res.Run.Fingerprints[table]) != 64 {
				t.Errorf("fingerprint of %s = %q", table, res.Run.Fingerprints[table])
			}
		}
	})
	t.Run("judging the stored dataset gives the same records as judging the files", func(t *testing.T) {
		got, err := db.Records(ctx, res.Run.ID, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := normalise(t, got), normalise(t, judgeFiles(t, nil)); a != b {
			t.Error("stored records differ from evident judge's")
		}
	})
	t.Run("every stored record passes the ten checks and the schema", func(t *testing.T) {
		rep, err := runstore.Check(ctx, db, res.Run)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Records != 195 || !rep.OK() {
			t.Fatalf("records %d, failures %v", rep.Records, rep.Failures)
		}
		for i := range 10 {
			if rep.Pass[i] != 195 {
				t.Errorf("check %d passed %d", i+1, rep.Pass[i])
			}
		}
	})
	t.Run("the summary sidecar says the rules wrote every summary", func(t *testing.T) {
		es, err := db.Entries(ctx, res.Run.ID, store.Filter{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.SummarySource != persona.SummaryRule {
				t.Errorf("%s: summary source %q", e.Record.TurnID, e.SummarySource)
			}
		}
	})
	t.Run("a check against a card changed after the run fails check 4 for the names it added", func(t *testing.T) {
		cards, err := db.Cards(ctx, res.DatasetID)
		if err != nil {
			t.Fatal(err)
		}
		c := cards[0]
		c.CanonEntities = append(c.CanonEntities, "금성호")
		if err := db.UpdateCard(ctx, res.DatasetID, c); err != nil {
			t.Fatal(err)
		}
		rep, err := runstore.Check(ctx, db, res.Run)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Fail[3] == 0 {
			t.Errorf("check 4 fails %d", rep.Fail[3])
		}
	})
}

func TestJudgeDatasetWithProfile(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	imp, err := runstore.Import(ctx, db, demoTables(), runstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := db.Runs(ctx)
	if len(runs) != 0 {
		t.Fatalf("Import made %d runs", len(runs))
	}
	p := speech.Extended().With([]string{"구려"}, []string{"소요"})
	run, err := runstore.JudgeDataset(ctx, db, imp.DatasetID, runstore.Options{Profile: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the run stores the profile's endings and exceptions the way an --endings file writes them", func(t *testing.T) {
		want := []string{"요", "죠", "니다", "십시오", "ㅂ니까", "십쇼", "ㅂ시다", "ㅂ디다", "구려", "!필요", "!중요", "!주요", "!수요", "!강요", "!요요", "!개요", "!소요", "!동요", "!아니다", "!소요"}
		if run.Profile != "extended" || !reflect.DeepEqual(run.Endings, want) {
			t.Errorf("profile %q endings %q", run.Profile, run.Endings)
		}
	})
	t.Run("ProfileOf rebuilds the same profile", func(t *testing.T) {
		q, err := runstore.ProfileOf(run)
		if err != nil {
			t.Fatal(err)
		}
		if q.Name != p.Name || !reflect.DeepEqual(q.Endings, p.Endings) || !reflect.DeepEqual(q.Exceptions, p.Exceptions) {
			t.Errorf("ProfileOf = %+v, want %+v", q, p)
		}
	})
	t.Run("the run's records are evident judge's with the same profile", func(t *testing.T) {
		got, err := db.Records(ctx, run.ID, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if normalise(t, got) != normalise(t, judgeFiles(t, p)) {
			t.Error("records differ")
		}
		rep, err := runstore.Check(ctx, db, run)
		if err != nil || !rep.OK() {
			t.Errorf("check: %v %v", err, rep)
		}
	})
	t.Run("a run stored without endings gets the built-in profile of its name", func(t *testing.T) {
		q, err := runstore.ProfileOf(store.RunInfo{RunMeta: store.RunMeta{Profile: "extended"}})
		if err != nil || !reflect.DeepEqual(q.Endings, speech.Extended().Endings) {
			t.Errorf("ProfileOf = %+v, %v", q, err)
		}
	})
}

const goodCards = `{"character_id":"C1","name":"하나","honorific_rule":"반말","first_person":"나","canon_entities":["하늘"],"forbidden_topics":[],"entity_roles":[]}
`

const lexicon = "term,topic\n선거,현실 정치\n"

func TestRejects(t *testing.T) {
	ctx := context.Background()
	turns := `{"turn_id":"A1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"그래."}
{"turn_id":"A2","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.
{"turn_id":"A3","session_id":"S","model_id":"m","reply_text":"좋아."}
{"turn_id":"A1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"또."}
{"turn_id":"A5","session_id":"S","character_id":"C9","model_id":"m","reply_text":"누구."}
`
	tables := runstore.Tables{Turns: text("t.jsonl", turns), Cards: text("c.jsonl", goodCards), Lexicon: text("l.csv", lexicon)}

	t.Run("a strict import with rejected rows stores nothing and names every line", func(t *testing.T) {
		db := openMem(t)
		_, err := runstore.Run(ctx, db, tables, runstore.Options{Strict: true})
		var rej *runstore.RejectsError
		if !errors.As(err, &rej) {
			t.Fatalf("err = %v, want *RejectsError", err)
		}
		var lines []int
		for _, r := range rej.Rejects {
			lines = append(lines, r.Line)
		}
		if !reflect.DeepEqual(lines, []int{2, 3, 4, 5}) {
			t.Errorf("rejected lines %v, want [2 3 4 5]", lines)
		}
		sets, _ := db.Datasets(ctx)
		runs, _ := db.Runs(ctx)
		if len(sets) != 0 || len(runs) != 0 {
			t.Errorf("%d datasets and %d runs after a refused import", len(sets), len(runs))
		}
	})
	t.Run("without strict the judgeable rows are stored and the rejects kept on the run", func(t *testing.T) {
		db := openMem(t)
		var seen []int
		res, err := runstore.Run(ctx, db, tables, runstore.Options{Reject: func(r persona.Reject) { seen = append(seen, r.Line) }})
		if err != nil {
			t.Fatal(err)
		}
		if res.Turns != 1 || res.Run.Tally.Judged != 1 || res.Run.Tally.Rejected != 4 || len(seen) != 4 {
			t.Errorf("turns %d, tally %v, seen %v", res.Turns, res.Run.Tally, seen)
		}
		stored, err := db.Rejects(ctx, res.Run.ID)
		if err != nil || len(stored) != 4 || stored[0].File != "t.jsonl" || stored[0].Line != 2 {
			t.Errorf("stored rejects %+v, %v", stored, err)
		}
	})
	t.Run("JudgeToStore is Run with rejects kept", func(t *testing.T) {
		db := openMem(t)
		id, tally, err := runstore.JudgeToStore(ctx, db, tables.Turns, tables.Cards, tables.Lexicon, nil)
		if err != nil || id != 1 || tally.Judged != 1 || tally.Rejected != 4 {
			t.Errorf("JudgeToStore = %d, %v, %v", id, tally, err)
		}
	})
	t.Run("a rejected card row refuses a strict import too", func(t *testing.T) {
		db := openMem(t)
		bad := runstore.Tables{Turns: tables.Turns, Cards: text("c.jsonl", goodCards+`{"character_id":"C2"}`+"\n"), Lexicon: tables.Lexicon}
		_, err := runstore.Import(ctx, db, bad, runstore.Options{Strict: true})
		var rej *runstore.RejectsError
		if !errors.As(err, &rej) || rej.Rejects[0].File != "c.jsonl" || rej.Rejects[0].Line != 2 {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("an empty turn table is ErrEmpty and stores nothing", func(t *testing.T) {
		db := openMem(t)
		_, err := runstore.Import(ctx, db, runstore.Tables{Turns: text("t.jsonl", ""), Cards: tables.Cards, Lexicon: tables.Lexicon}, runstore.Options{})
		if !errors.Is(err, runstore.ErrEmpty) {
			t.Errorf("err = %v", err)
		}
		sets, _ := db.Datasets(ctx)
		if len(sets) != 0 {
			t.Errorf("%d datasets", len(sets))
		}
	})
	t.Run("a table that cannot be read at all is a fatal error naming file and line", func(t *testing.T) {
		db := openMem(t)
		_, err := runstore.Import(ctx, db, runstore.Tables{Turns: text("t.json", `[{"turn_id":"A1"`), Cards: tables.Cards, Lexicon: tables.Lexicon}, runstore.Options{})
		if err == nil || !strings.Contains(err.Error(), "t.json") || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a run without a dataset cannot be checked", func(t *testing.T) {
		if _, err := runstore.Check(ctx, openMem(t), store.RunInfo{}); !errors.Is(err, runstore.ErrNoDataset) {
			t.Errorf("err = %v", err)
		}
	})
}
