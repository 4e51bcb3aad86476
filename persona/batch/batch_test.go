package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/ingest"
)

func mustInput(t *testing.T, path string) Input {
	t.Helper()
	in, err := FileInput(path)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// run judges turns with cards and lexicon and returns the records and rejects.
func run(t *testing.T, turns, cards, lexicon Input) ([]persona.Record, []Reject, Tally) {
	t.Helper()
	j, tableRejects, err := NewJudge(cards, lexicon, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rejects := tableRejects
	tally, err := Judge(context.Background(), turns, Config{Judge: j, Out: &out, Reject: func(r Reject) { rejects = append(rejects, r) }})
	if err != nil {
		t.Fatal(err)
	}
	var recs []persona.Record
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if err := persona.ValidateJSON(sc.Bytes()); err != nil {
			t.Errorf("record does not validate against the seed's schema: %v\n%s", err, sc.Bytes())
		}
		var r persona.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs, rejects, tally
}

// seedRecord is the part of a seed example the golden test compares.
type seedRecord struct {
	TurnID           string             `json:"turn_id"`
	Verdict          persona.Verdict    `json:"verdict"`
	RuleExpected     *string            `json:"rule_expected"`
	RuleObserved     *string            `json:"rule_observed"`
	OffCanonEntities []string           `json:"off_canon_entities"`
	TouchedTerm      *string            `json:"touched_term"`
	TouchedTopic     *string            `json:"touched_topic"`
	RecallTarget     *string            `json:"recall_target"`
	RecallSourceTurn *string            `json:"recall_source_turn"`
	Evidence         []persona.Evidence `json:"evidence"`
}

// TestSeedExamples reproduces the seed's seven example records from fixture
// turns (persona/testdata/seed) and compares every rule field and the
// evidence: the seed's rows must all appear in the seed's order, and any
// extra row must carry agg (spec persona.md "Evidence, summary, hedge").
func TestSeedExamples(t *testing.T) {
	dir := "../testdata/seed"
	recs, rejects, _ := run(t, mustInput(t, filepath.Join(dir, "turns.jsonl")),
		mustInput(t, filepath.Join(dir, "cards.json")), mustInput(t, filepath.Join(dir, "lexicon.csv")))
	if len(rejects) > 0 {
		t.Fatalf("rejects: %+v", rejects)
	}
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []seedRecord
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	byID := map[string]persona.Record{}
	for _, r := range recs {
		byID[r.TurnID] = r
	}
	for _, w := range want {
		t.Run(w.TurnID+" matches the seed's "+string(w.Verdict)+" example", func(t *testing.T) {
			g, ok := byID[w.TurnID]
			if !ok {
				t.Fatal("no record")
			}
			got := seedRecord{g.TurnID, g.Verdict, g.RuleExpected, g.RuleObserved, g.OffCanonEntities,
				g.TouchedTerm, g.TouchedTopic, g.RecallTarget, g.RecallSourceTurn, nil}
			w2 := w
			w2.Evidence = nil
			if !reflect.DeepEqual(got, w2) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(w2)
				t.Errorf("fields\n got %s\nwant %s", gj, wj)
			}
			k := 0
			for _, e := range g.Evidence {
				if k < len(w.Evidence) && e.Source == w.Evidence[k].Source && e.Field == w.Evidence[k].Field &&
					e.Agg == "" && reflect.DeepEqual(e.Value, w.Evidence[k].Value) {
					k++
					continue
				}
				if e.Agg == "" {
					t.Errorf("extra evidence row without agg: %+v", e)
				}
			}
			if k != len(w.Evidence) {
				t.Errorf("seed evidence row %d %+v missing or out of order in %+v", k, w.Evidence[k], g.Evidence)
			}
		})
	}
}

const cardsJSON = `[{"character_id":"C1","name":"도강","honorific_rule":"반말","first_person":"나","canon_entities":["하늘"],"forbidden_topics":["현실 정치"],"entity_roles":[{"role":"동생","entity":"하늘"}]}]`
const lexiconCSV = "term,topic\n선거,현실 정치\n"

// testJudge is the judge of cardsJSON and lexiconCSV.
func testJudge(t *testing.T) *persona.Judge {
	t.Helper()
	j, _, err := NewJudge(bytesInput("c.json", ingest.JSONArray, []byte(cardsJSON)), bytesInput("l.csv", ingest.CSV, []byte(lexiconCSV)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestRejects feeds rows that cannot be judged among good ones: each becomes a
// reject with its line and reason, the good ones are judged in order, and
// nothing is lost.
func TestRejects(t *testing.T) {
	turns := strings.Join([]string{
		`{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"하늘이는 잘 있어.","named_entities":["하늘"]}`,
		`{"turn_id":"T2","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.", `, // malformed
		`{"turn_id":"T3","session_id":"S","character_id":"C9","model_id":"m","reply_text":"응."}`,  // unknown character
		`{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"또."}`,  // duplicate
		`{"session_id":"S","character_id":"C1","model_id":"m","reply_text":"응."}`,                 // missing turn_id
		`{"turn_id":"T4","session_id":"S","character_id":"C1","model_id":"m","user_message":"동생 기억나?","reply_text":"글쎄.","named_entities":[],"user_asked_recall":true}`,
	}, "\n") + "\n"
	recs, rejects, tally := run(t, bytesInput("t.jsonl", ingest.JSONL, []byte(turns)),
		bytesInput("c.json", ingest.JSONArray, []byte(cardsJSON)), bytesInput("l.csv", ingest.CSV, []byte(lexiconCSV)))
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.TurnID)
	}
	if !reflect.DeepEqual(ids, []string{"T1", "T4"}) {
		t.Fatalf("records %v, want T1 T4", ids)
	}
	if recs[1].Verdict != persona.RecallFailed || *recs[1].RecallSourceTurn != "T1" {
		t.Errorf("T4: %q source %v; the accepted T1 is the earlier turn", recs[1].Verdict, recs[1].RecallSourceTurn)
	}
	wantLines := []int{2, 3, 4, 5}
	wantReason := []string{"", "unknown character_id", "duplicate turn_id \"T1\" (first at line 1)", "turn_id"}
	if len(rejects) != 4 {
		t.Fatalf("rejects %+v", rejects)
	}
	for i, r := range rejects {
		if r.Line != wantLines[i] || !strings.Contains(r.Reason, wantReason[i]) || r.File != "t.jsonl" {
			t.Errorf("reject %d = %+v, want line %d reason containing %q", i, r, wantLines[i], wantReason[i])
		}
	}
	if tally.Judged != 2 || tally.Rejected != 4 || tally.ByVerdict[persona.RecallFailed] != 1 {
		t.Errorf("tally %v", tally)
	}
	if got := tally.String(); got != "judged 2 (금지 소재 접촉 0 · 세계관 밖 고유명사 0 · 말투 어긋남 0 · 앞 회차를 기억 못 함 1 · 설정대로 말함 1), rejected 4" {
		t.Errorf("tally line %q", got)
	}
}

// TestFormatsAgree judges the same turns given as JSONL, a JSON array and CSV
// and expects identical records.
func TestFormatsAgree(t *testing.T) {
	rows := []map[string]any{
		{"turn_id": "T1", "session_id": "S", "character_id": "C1", "model_id": "m", "reply_text": "선거 얘기는 그만.", "named_entities": []string{"하늘"}, "first_person": nil, "user_asked_recall": false},
		{"turn_id": "T2", "session_id": "S", "character_id": "C1", "model_id": "m", "reply_text": "알았어요.", "named_entities": nil, "first_person": "나", "user_asked_recall": false},
	}
	var jsonl, arr, csv bytes.Buffer
	arrRows, _ := json.Marshal(rows)
	arr.Write(arrRows)
	csv.WriteString("turn_id,session_id,character_id,model_id,reply_text,named_entities,first_person,user_asked_recall\n")
	for _, r := range rows {
		b, _ := json.Marshal(r)
		jsonl.Write(append(b, '\n'))
		ne := "null"
		if r["named_entities"] != nil {
			b, _ := json.Marshal(r["named_entities"])
			ne = `"` + strings.ReplaceAll(string(b), `"`, `""`) + `"`
		}
		fp := ""
		if r["first_person"] != nil {
			fp = r["first_person"].(string)
		}
		fmt.Fprintf(&csv, "%s,%s,%s,%s,%s,%s,%s,false\n", r["turn_id"], r["session_id"], r["character_id"], r["model_id"], r["reply_text"], ne, fp)
	}
	cards := bytesInput("c.json", ingest.JSONArray, []byte(cardsJSON))
	lex := bytesInput("l.csv", ingest.CSV, []byte(lexiconCSV))
	a, ra, _ := run(t, bytesInput("t.jsonl", ingest.JSONL, jsonl.Bytes()), cards, lex)
	b, rb, _ := run(t, bytesInput("t.json", ingest.JSONArray, arr.Bytes()), cards, lex)
	c, rc, _ := run(t, bytesInput("t.csv", ingest.CSV, csv.Bytes()), cards, lex)
	if len(ra)+len(rb)+len(rc) > 0 {
		t.Fatalf("rejects: %v %v %v", ra, rb, rc)
	}
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) {
		t.Errorf("formats disagree:\njsonl %+v\narray %+v\ncsv   %+v", a, b, c)
	}
	if len(a) != 2 || a[0].Verdict != persona.ForbiddenTopic || a[1].Verdict != persona.SpeechOff || a[1].OffCanonEntities != nil {
		t.Errorf("records %+v", a)
	}
}

// TestManyChunksKeepOrder pushes more rows than several pipeline chunks with
// several workers and checks input order and recall across chunk borders.
func TestManyChunksKeepOrder(t *testing.T) {
	var b bytes.Buffer
	n := chunkSize*3 + 17
	for i := 0; i < n; i++ {
		reply, names, asked, msg := "응.", "[]", false, "x"
		if i == 0 {
			reply, names = "하늘이 왔어.", `["하늘"]`
		}
		if i == n-1 {
			asked, msg = true, "동생 기억나?"
		}
		fmt.Fprintf(&b, `{"turn_id":"T%d","session_id":"S","character_id":"C1","model_id":"m","user_message":%q,"reply_text":%q,"named_entities":%s,"user_asked_recall":%v}`+"\n", i, msg, reply, names, asked)
	}
	j := testJudge(t)
	var out bytes.Buffer
	tally, err := Judge(context.Background(), bytesInput("t.jsonl", ingest.JSONL, b.Bytes()), Config{Judge: j, Out: &out, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if tally.Judged != n {
		t.Fatalf("judged %d of %d", tally.Judged, n)
	}
	dec := json.NewDecoder(&out)
	for i := 0; i < n; i++ {
		var r persona.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if r.TurnID != fmt.Sprintf("T%d", i) {
			t.Fatalf("record %d is %s", i, r.TurnID)
		}
		if i == n-1 && (r.RecallSourceTurn == nil || *r.RecallSourceTurn != "T0") {
			t.Errorf("last turn recall source %v, want T0", r.RecallSourceTurn)
		}
	}
}

// TestCheckCatchesBadRecords edits good records the way another system might
// get them wrong and expects the matching check to fail.
func TestCheckCatchesBadRecords(t *testing.T) {
	dir := "../testdata/seed"
	turns, cards, lex := mustInput(t, filepath.Join(dir, "turns.jsonl")), mustInput(t, filepath.Join(dir, "cards.json")), mustInput(t, filepath.Join(dir, "lexicon.csv"))
	recs, _, _ := run(t, turns, cards, lex)
	j, _, _ := NewJudge(cards, lex, nil)
	byID := map[string]persona.Record{}
	for _, r := range recs {
		byID[r.TurnID] = r
	}
	tests := []struct {
		name  string
		turn  string
		edit  func(*persona.Record)
		check int
	}{
		{"an invented verdict fails check 1", "T-004468", func(r *persona.Record) { r.Verdict = "대체로 괜찮음" }, 1},
		{"an empty model_id fails check 2", "T-004468", func(r *persona.Record) { r.ModelID = "" }, 2},
		{"a wrong rule_observed fails check 3", "T-004471", func(r *persona.Record) { s := "반말 · 저"; r.RuleObserved = &s }, 3},
		{"a kept verdict on a speech mismatch fails check 3", "T-004471", func(r *persona.Record) { r.Verdict = persona.Kept }, 3},
		{"a missing off-canon name fails check 4", "T-004519", func(r *persona.Record) { r.OffCanonEntities = []string{"리안"} }, 4},
		{"a touched topic that is not forbidden fails check 5", "T-004468", func(r *persona.Record) { s := "현실 정치"; r.TouchedTopic = &s }, 5},
		{"a wrong recall source fails check 6", "T-004602", func(r *persona.Record) { s := "T-004468"; r.RecallSourceTurn = &s }, 6},
		{"off_canon [] for null names fails check 7", "T-004631", func(r *persona.Record) { r.OffCanonEntities = []string{} }, 7},
		{"an invented column fails check 8", "T-004468", func(r *persona.Record) {
			r.Evidence = append(r.Evidence, persona.Evidence{Source: persona.SourceTurn, Field: "mood", Value: "좋음"})
		}, 8},
		{"a paraphrased value fails check 9", "T-004468", func(r *persona.Record) { r.Evidence[0].Value = "검을 잡아라." }, 9},
		{"a wrong sentence count fails check 9", "T-004468", func(r *persona.Record) { r.Evidence[1].Value = 3 }, 9},
		{"a 반말 summary fails check 10", "T-004468", func(r *persona.Record) { r.Summary = "설정대로 말했어." }, 10},
		{"two sentences fail check 10", "T-004468", func(r *persona.Record) { r.Summary = "좋습니다. 넘어갔습니다." }, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := byID[tt.turn]
			r.Evidence = append([]persona.Evidence(nil), r.Evidence...)
			tt.edit(&r)
			b, _ := json.Marshal(r)
			rep, err := Check(context.Background(), bytesInput("v.jsonl", ingest.JSONL, append(b, '\n')), turns, j)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Fail[tt.check-1] != 1 {
				t.Errorf("check %d did not fail: %+v", tt.check, rep.Failures)
			}
		})
	}
	t.Run("the unedited records pass every check", func(t *testing.T) {
		var all bytes.Buffer
		for _, r := range recs {
			b, _ := json.Marshal(r)
			all.Write(append(b, '\n'))
		}
		rep, err := Check(context.Background(), bytesInput("v.jsonl", ingest.JSONL, all.Bytes()), turns, j)
		if err != nil || !rep.OK() || rep.Records != len(recs) {
			t.Fatalf("err %v failures %+v", err, rep.Failures)
		}
	})
}

// FuzzCheck feeds arbitrary verdict lines to the checker: it must never panic
// and must account for every non-blank line as a record or an unreadable line.
func FuzzCheck(f *testing.F) {
	b, _ := os.ReadFile("../testdata/seed/expected.json")
	var seeds []json.RawMessage
	_ = json.Unmarshal(b, &seeds)
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"turn_id":"T-004468","evidence":[{"source":"chat_turn","field":"reply_text","agg":"count","value":"x"}]}`))
	f.Add([]byte(`{"turn_id":"T-004602","recall_source_turn":"T-004450","evidence":[{"source":"character_card","field":"entity_roles","value":{}}]}`))
	dir := "../testdata/seed"
	turns, _ := FileInput(filepath.Join(dir, "turns.jsonl"))
	cards, _ := FileInput(filepath.Join(dir, "cards.json"))
	lex, _ := FileInput(filepath.Join(dir, "lexicon.csv"))
	j, _, err := NewJudge(cards, lex, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.ReplaceAll(line, []byte("\n"), []byte(" "))
		rep, err := Check(context.Background(), bytesInput("v.jsonl", ingest.JSONL, line), turns, j)
		if err != nil {
			t.Fatal(err)
		}
		blank := len(bytes.TrimSpace(line)) == 0
		if !blank && rep.Records+rep.Unreadable != 1 {
			t.Fatalf("line counted as %d records and %d unreadable", rep.Records, rep.Unreadable)
		}
	})
}

// TestRecordCallback checks that Config.Record sees every judged record with
// its turn, in input order, and that Out may be nil.
func TestRecordCallback(t *testing.T) {
	dir := "../testdata/seed"
	j, _, err := NewJudge(mustInput(t, filepath.Join(dir, "cards.json")), mustInput(t, filepath.Join(dir, "lexicon.csv")), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	_, err = Judge(context.Background(), mustInput(t, filepath.Join(dir, "turns.jsonl")), Config{Judge: j, Workers: 3,
		Record: func(r *persona.Record, tu *persona.Turn) error {
			if r.TurnID != tu.TurnID {
				t.Errorf("record %s came with turn %s", r.TurnID, tu.TurnID)
			}
			ids = append(ids, r.TurnID)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"T-004450", "T-004468", "T-004471", "T-004519", "T-004530", "T-004602", "T-004611", "T-004631"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("records %v, want %v", ids, want)
	}
}

// TestRecordBytes holds the record encoder (json-iterator, for speed) to
// encoding/json: the same JSON value for the seed's records and for awkward
// text, and the same bytes except that json-iterator leaves U+2028 and U+2029
// unescaped (valid JSON either way; JSON Lines split only at '\n').
func TestRecordBytes(t *testing.T) {
	dir := "../testdata/seed"
	recs, _, _ := run(t, mustInput(t, filepath.Join(dir, "turns.jsonl")),
		mustInput(t, filepath.Join(dir, "cards.json")), mustInput(t, filepath.Join(dir, "lexicon.csv")))
	odd := recs[0]
	odd.Summary = "<script>&\u2028\u2029\x01\t\"\\ 😊 하늘"
	odd.Evidence = append(odd.Evidence, persona.Evidence{Source: persona.SourceTurn, Field: "reply_text", Agg: persona.AggCount, Value: 3})
	recs = append(recs, odd)
	for _, r := range recs {
		var a, b bytes.Buffer
		ea, eb := json.NewEncoder(&a), recordJSON.NewEncoder(&b)
		ea.SetEscapeHTML(false)
		if err := ea.Encode(&r); err != nil {
			t.Fatal(err)
		}
		if err := eb.Encode(&r); err != nil {
			t.Fatal(err)
		}
		std := strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(a.String())
		if std != b.String() {
			t.Errorf("encoders differ for %s:\nencoding/json %s\njson-iterator %s", r.TurnID, a.String(), b.String())
		}
		var va, vb any
		if json.Unmarshal(a.Bytes(), &va) != nil || json.Unmarshal(b.Bytes(), &vb) != nil || !reflect.DeepEqual(va, vb) {
			t.Errorf("%s: the two encodings do not decode to the same value", r.TurnID)
		}
	}
}

// TestCheckCoverage: a verdict file must hold one record per judgeable turn;
// a dropped turn and a repeated record are failures even when every record
// passes the ten checks.
func TestCheckCoverage(t *testing.T) {
	dir := "../testdata/seed"
	turns, cards, lex := mustInput(t, filepath.Join(dir, "turns.jsonl")), mustInput(t, filepath.Join(dir, "cards.json")), mustInput(t, filepath.Join(dir, "lexicon.csv"))
	recs, _, _ := run(t, turns, cards, lex)
	j, _, _ := NewJudge(cards, lex, nil)
	var b bytes.Buffer
	for i, r := range recs {
		if r.TurnID == "T-004519" {
			continue // dropped
		}
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
		if i == 0 {
			b.Write(append(line, '\n')) // repeated
		}
	}
	rep, err := Check(context.Background(), bytesInput("v.jsonl", ingest.JSONL, b.Bytes()), turns, j)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Missing != 1 || rep.Repeated != 1 || rep.Records != len(recs) {
		t.Fatalf("missing %d repeated %d records %d ok %v", rep.Missing, rep.Repeated, rep.Records, rep.OK())
	}
	last := rep.Failures[len(rep.Failures)-1]
	if last.TurnID != "T-004519" || last.Reason != "no record for this turn of the log" {
		t.Errorf("last failure %+v", last)
	}
	t.Run("an empty verdict file fails for every turn", func(t *testing.T) {
		rep, _ := Check(context.Background(), bytesInput("v.jsonl", ingest.JSONL, nil), turns, j)
		if rep.OK() || rep.Missing != len(recs) {
			t.Errorf("missing %d of %d", rep.Missing, len(recs))
		}
	})
}

// TestRepeatedRowIsNotAnEarlierTurn: a row repeating an accepted turn_id is
// rejected and must not count as an earlier turn for recall, even when it is
// the only row naming the asked entity.
func TestRepeatedRowIsNotAnEarlierTurn(t *testing.T) {
	turns := strings.Join([]string{
		`{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.","named_entities":[]}`,
		`{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"하늘이 왔어.","named_entities":["하늘"]}`,
		`{"turn_id":"T2","session_id":"S","character_id":"C1","model_id":"m","user_message":"동생 기억나?","reply_text":"글쎄.","named_entities":[],"user_asked_recall":true}`,
	}, "\n") + "\n"
	recs, rejects, _ := run(t, bytesInput("t.jsonl", ingest.JSONL, []byte(turns)),
		bytesInput("c.json", ingest.JSONArray, []byte(cardsJSON)), bytesInput("l.csv", ingest.CSV, []byte(lexiconCSV)))
	if len(recs) != 2 || len(rejects) != 1 || rejects[0].Line != 2 {
		t.Fatalf("records %d rejects %+v", len(recs), rejects)
	}
	if recs[1].Verdict != persona.Kept || recs[1].RecallSourceTurn != nil {
		t.Errorf("T2: %q source %v; the rejected repeat named 하늘, no turn did", recs[1].Verdict, recs[1].RecallSourceTurn)
	}
}
