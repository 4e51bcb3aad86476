package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"evident/persona"
	"evident/persona/ingest"
)

// turnRow writes one chat_turn JSON line of character C1 (cardsJSON: 반말,
// 나, canon 하늘, role 동생 → 하늘). at "" leaves created_at out; a question
// asks about 동생 with user_asked_recall; names lists named_entities.
func turnRow(id, session, at string, question bool, reply string, names ...string) string {
	m := map[string]any{"turn_id": id, "session_id": session, "character_id": "C1", "model_id": "m",
		"reply_text": reply, "named_entities": append([]string{}, names...)}
	if at != "" {
		m["created_at"] = at
	}
	if question {
		m["user_message"], m["user_asked_recall"] = "동생 기억나?", true
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// judgeLines judges the rows with the small test card and returns records by
// turn_id and the rejects. size is the index's run size (records per sorted
// run); a small one makes every sort spill to its temporary file.
func judgeLines(t *testing.T, size int, lines ...string) (map[string]persona.Record, []Reject) {
	t.Helper()
	j := testJudge(t)
	var out bytes.Buffer
	var rejects []Reject
	turns := bytesInput("t.jsonl", ingest.JSONL, []byte(strings.Join(lines, "\n")+"\n"))
	_, err := Judge(context.Background(), turns, Config{Judge: j, Out: &out, Workers: 3, runSize: size, TempDir: t.TempDir(),
		Reject: func(r Reject) { rejects = append(rejects, r) }})
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]persona.Record{}
	dec := json.NewDecoder(&out)
	for dec.More() {
		var r persona.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		recs[r.TurnID] = r
	}
	return recs, rejects
}

// TestRecallSourceFromIndex checks the recall source that the first pass's
// index finds, by hand, for the session-order cases of spec persona.md
// ("Input": created_at order only when every turn of the session has it;
// rule 4: the earliest earlier turn naming the entity), each with runs large
// enough to stay in memory and with runs of two records that spill.
func TestRecallSourceFromIndex(t *testing.T) {
	const miss = "글쎄, 모르겠어." // a reply that does not name 하늘
	cases := []struct {
		name  string
		rows  []string
		asker string // turn_id of the question
		want  string // its recall_source_turn; "" for none
	}{
		{
			name: "a mention later in the input but earlier in time is the source",
			rows: []string{
				turnRow("Q", "S", "2026-01-01T10:05:00Z", true, miss),
				turnRow("M", "S", "2026-01-01T10:01:00Z", false, "하늘이 왔어.", "하늘"),
			},
			asker: "Q", want: "M",
		},
		{
			name: "one turn without created_at puts the session in input order",
			rows: []string{
				turnRow("Q", "S", "2026-01-01T10:05:00Z", true, miss),
				turnRow("M", "S", "2026-01-01T10:01:00Z", false, "하늘이 왔어.", "하늘"),
				turnRow("X", "S", "", false, "응."),
			},
			asker: "Q", want: "",
		},
		{
			name: "the earliest mention in time wins over the first in the input",
			rows: []string{
				turnRow("M1", "S", "2026-01-01T10:03:00Z", false, "하늘 얘기야.", "하늘"),
				turnRow("M2", "S", "2026-01-01T10:02:00Z", false, "하늘이 왔어.", "하늘"),
				turnRow("Q", "S", "2026-01-01T10:09:00Z", true, miss),
			},
			asker: "Q", want: "M2",
		},
		{
			name: "equal times fall back to input position",
			rows: []string{
				turnRow("M1", "S", "2026-01-01T10:00:00Z", false, "하늘 얘기야.", "하늘"),
				turnRow("M2", "S", "2026-01-01T10:00:00Z", false, "하늘이 왔어.", "하늘"),
				turnRow("Q", "S", "2026-01-01T10:09:00Z", true, miss),
			},
			asker: "Q", want: "M1",
		},
		{
			name: "a mention after the question in time is not earlier",
			rows: []string{
				turnRow("M", "S", "2026-01-01T11:00:00Z", false, "하늘이 왔어.", "하늘"),
				turnRow("Q", "S", "2026-01-01T10:00:00Z", true, miss),
			},
			asker: "Q", want: "",
		},
		{
			name: "a mention in another session does not count",
			rows: []string{
				turnRow("M", "S1", "", false, "하늘이 왔어.", "하늘"),
				turnRow("Q", "S2", "", true, miss),
			},
			asker: "Q", want: "",
		},
		{
			name: "a rejected repeat of a turn_id is not an earlier turn, even earlier in time",
			rows: []string{
				turnRow("A", "S", "2026-01-01T10:05:00Z", false, "응."),
				turnRow("A", "S", "2026-01-01T10:00:00Z", false, "하늘이 왔어.", "하늘"),
				turnRow("M", "S", "2026-01-01T10:06:00Z", false, "하늘 얘기야.", "하늘"),
				turnRow("Q", "S", "2026-01-01T10:09:00Z", true, miss),
			},
			asker: "Q", want: "M",
		},
		{
			name: "a question whose reply names the entity has the source but no failure",
			rows: []string{
				turnRow("M", "S", "", false, "하늘이 왔어.", "하늘"),
				turnRow("Q", "S", "", true, "하늘이 말이지?", "하늘"),
			},
			asker: "Q", want: "",
		},
	}
	for _, tc := range cases {
		for _, size := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s (run size %d)", tc.name, size), func(t *testing.T) {
				recs, _ := judgeLines(t, size, tc.rows...)
				r, ok := recs[tc.asker]
				if !ok {
					t.Fatalf("no record for %s", tc.asker)
				}
				got := ""
				if r.RecallSourceTurn != nil {
					got = *r.RecallSourceTurn
				}
				if got != tc.want {
					t.Errorf("recall_source_turn %q, want %q (verdict %s)", got, tc.want, r.Verdict)
				}
				if tc.want != "" && r.Verdict != persona.RecallFailed {
					t.Errorf("verdict %s, want %s", r.Verdict, persona.RecallFailed)
				}
			})
		}
	}
}

// referenceJudge is the straightforward in-memory first pass the index
// replaces: a map of accepted turn ids and persona.Sessions. It returns the
// JSON records and the rejects as "line: reason".
func referenceJudge(t *testing.T, j *persona.Judge, lines []string) (records []string, rejects []string) {
	t.Helper()
	type row struct {
		turn persona.Turn
		err  error
	}
	rows := make([]row, len(lines))
	seen := map[string]int{} // turn_id → line of the accepted row
	accepted := make([]bool, len(lines))
	sessions := persona.NewSessionsFor(j.RecallEntities())
	for i, l := range lines {
		raw := ingest.Raw{Line: i + 1, JSON: []byte(l)}
		rows[i].turn, rows[i].err = ingest.DecodeTurn(raw)
		if rows[i].err != nil {
			continue
		}
		if _, ok := j.Card(rows[i].turn.CharacterID); !ok {
			continue
		}
		if _, dup := seen[rows[i].turn.TurnID]; dup {
			continue
		}
		seen[rows[i].turn.TurnID] = i + 1
		accepted[i] = true
		sessions.Add(&rows[i].turn, i)
	}
	for i := range lines {
		tr := &rows[i].turn
		switch {
		case rows[i].err != nil:
			rejects = append(rejects, fmt.Sprintf("%d: %v", i+1, rows[i].err))
		case !accepted[i] && seen[tr.TurnID] != 0:
			if _, ok := j.Card(tr.CharacterID); ok {
				rejects = append(rejects, fmt.Sprintf("%d: duplicate turn_id %q (first at line %d)", i+1, tr.TurnID, seen[tr.TurnID]))
				continue
			}
			fallthrough
		default:
			rec, err := j.Judge(tr, i, sessions)
			if err != nil {
				rejects = append(rejects, fmt.Sprintf("%d: %v", i+1, err))
				continue
			}
			b, err := recordJSON.Marshal(&rec)
			if err != nil {
				t.Fatal(err)
			}
			records = append(records, string(b))
		}
	}
	return records, rejects
}

// TestIndexAgreesWithReference judges a few thousand random rows — sessions
// interleaved, created_at shuffled or missing, repeated turn ids, unknown
// characters, broken lines, recall questions — through the spilling index
// (runs of 7 records) and through referenceJudge, and wants the same records
// byte for byte and the same rejects.
func TestIndexAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	replies := []string{"응.", "하늘이 왔어.", "하늘 얘기는 나중에 해 줄게.", "글쎄, 모르겠어.", "네, 알겠어요."}
	var lines []string
	for i := range 3000 {
		session := fmt.Sprintf("S%d", r.IntN(40))
		id := fmt.Sprintf("T%d", i)
		if i > 0 && r.IntN(30) == 0 {
			id = fmt.Sprintf("T%d", r.IntN(i)) // a repeated turn_id
		}
		at := base.Add(time.Duration(r.IntN(600)) * time.Second).Format(time.RFC3339)
		if session == "S3" || session == "S17" || r.IntN(400) == 0 {
			at = "" // sessions in input order
		}
		reply := replies[r.IntN(len(replies))]
		var names []string
		if strings.Contains(reply, "하늘") {
			names = []string{"하늘"}
		}
		line := turnRow(id, session, at, r.IntN(5) == 0, reply, names...)
		switch r.IntN(100) {
		case 0:
			line = line[:len(line)/2] // broken JSON
		case 1:
			line = strings.Replace(line, `"C1"`, `"C9"`, 1) // unknown character
		}
		lines = append(lines, line)
	}
	j := testJudge(t)
	wantRecs, wantRejects := referenceJudge(t, j, lines)
	if len(wantRejects) < 50 || len(wantRecs) < 2500 {
		t.Fatalf("the random rows should mix turns and rejects: %d records, %d rejects", len(wantRecs), len(wantRejects))
	}
	var out bytes.Buffer
	var gotRejects []string
	_, err := Judge(context.Background(), bytesInput("t.jsonl", ingest.JSONL, []byte(strings.Join(lines, "\n")+"\n")),
		Config{Judge: j, Out: &out, Workers: 3, runSize: 7, TempDir: t.TempDir(),
			Reject: func(r Reject) { gotRejects = append(gotRejects, fmt.Sprintf("%d: %s", r.Line, r.Reason)) }})
	if err != nil {
		t.Fatal(err)
	}
	gotRecs := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(gotRecs) != len(wantRecs) {
		t.Fatalf("%d records, want %d", len(gotRecs), len(wantRecs))
	}
	sources := 0
	for i := range wantRecs {
		if gotRecs[i] != wantRecs[i] {
			t.Fatalf("record %d differs:\n got %s\nwant %s", i, gotRecs[i], wantRecs[i])
		}
		if strings.Contains(wantRecs[i], `"recall_source_turn":"`) {
			sources++
		}
	}
	if sources < 20 {
		t.Errorf("only %d records cite a recall source; the rows should exercise the index", sources)
	}
	if !reflect.DeepEqual(gotRejects, wantRejects) {
		t.Errorf("rejects differ:\n got %q\nwant %q", gotRejects, wantRejects)
	}
}

// TestIndexTempDirUnusable: when the index cannot create its temporary file,
// Judge returns an error that says so, and does not hang.
func TestIndexTempDirUnusable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j := testJudge(t)
	var lines []string
	for i := range 50 {
		lines = append(lines, turnRow(fmt.Sprintf("T%d", i), "S", "", false, "응."))
	}
	done := make(chan error, 1)
	go func() {
		_, err := Judge(context.Background(), bytesInput("t.jsonl", ingest.JSONL, []byte(strings.Join(lines, "\n"))),
			Config{Judge: j, Out: &bytes.Buffer{}, runSize: 2, TempDir: filepath.Join(file, "sub")})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "first-pass index") {
			t.Fatalf("error %v, want one from the first-pass index", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Judge did not return after its index failed")
	}
}

// TestIndexRecordsRoundTrip encodes the three record kinds as the sorts'
// temporary file holds them and reads them back unchanged (a candidate's
// events as their keys only: sort 1 needs no more).
func TestIndexRecordsRoundTrip(t *testing.T) {
	reply := "하늘이 왔어."
	ev := event{session: "S-1", kind: evMention, entity: "하늘", pos: 41, sec: -62135596800, nsec: 999999999, turnID: "T-9", reply: &reply}
	c := candidate{hash: 1<<64 - 1, id: "T-9", pos: 41, line: 42, events: []event{
		{session: "S-1", kind: evMention, entity: "하늘", pos: 41}, {session: "S-1", kind: evUntimed, pos: 41, cancel: true}}}
	n := note{pos: 7, kind: noteSource, line: 0, entity: "하늘", turnID: "T-9", reply: &reply}
	d := decoder{b: appendCandidate(nil, c)}
	if got := readCandidate(&d); d.err != nil || len(d.b) != 0 || !reflect.DeepEqual(got, c) {
		t.Errorf("candidate: got %+v (err %v, %d bytes left), want %+v", got, d.err, len(d.b), c)
	}
	d = decoder{b: appendNote(nil, n)}
	if got := readNote(&d); d.err != nil || len(d.b) != 0 || !reflect.DeepEqual(got, n) {
		t.Errorf("note: got %+v (err %v), want %+v", got, d.err, n)
	}
	d = decoder{b: appendEvent(nil, ev)}
	if got := readEvent(&d); d.err != nil || len(d.b) != 0 || !reflect.DeepEqual(got, ev) {
		t.Errorf("event: got %+v (err %v), want %+v", got, d.err, ev)
	}
	b := appendEvent(nil, ev)
	d = decoder{b: b[:len(b)-3]}
	if readEvent(&d); d.err == nil {
		t.Error("a truncated event read without error")
	}
}

// FuzzIndexRecords: reading any bytes as an index record returns a value or
// an error, never a panic or a huge allocation (the records come from our
// own temporary file, but a damaged disk must not crash a run).
func FuzzIndexRecords(f *testing.F) {
	reply := "응."
	f.Add(appendCandidate(nil, candidate{id: "T1", pos: 3, line: 4, events: []event{{session: "S", kind: evQuestion, entity: "하늘"}}}))
	f.Add(appendNote(nil, note{pos: 1, kind: noteSource, turnID: "T0", reply: &reply}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x05, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := decoder{b: b}
		if c := readCandidate(&d); d.err == nil && len(c.events) > len(b) {
			t.Errorf("%d events from %d bytes", len(c.events), len(b))
		}
		d = decoder{b: b}
		readNote(&d)
		d = decoder{b: b}
		readEvent(&d)
	})
}

// TestFirstPassHoldsNoPerTurnState measures the live heap at the end of the
// first pass (Config.Counted, after forced collections), where the old
// in-memory index held every turn id and each session's first mentions
// (about 80 bytes a row here: 9.8 MB more for 120,000 more rows), for inputs
// of 30,000 and 150,000 rows. The difference must stay under 3 MiB. Both
// sizes spill every sort, so both hold the sorts' bounded buffers (runs being
// built, merge batches in flight, 64 KiB of read buffer per run).
func TestFirstPassHoldsNoPerTurnState(t *testing.T) {
	j := testJudge(t)
	liveAfterPass1 := func(n int) uint64 {
		var b strings.Builder
		for i := range n {
			reply, names := "응.", []string(nil)
			if i%3 == 0 {
				reply, names = "하늘이 왔어.", []string{"하늘"}
			}
			b.WriteString(turnRow(fmt.Sprintf("T%07d", i), fmt.Sprintf("S%d", i/50), "", i%7 == 0, reply, names...))
			b.WriteByte('\n')
		}
		path := filepath.Join(t.TempDir(), "t.jsonl") // a file: the input is not on the heap
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		var live uint64
		_, err := Judge(context.Background(), mustInput(t, path), Config{
			Judge: j, Workers: 2, runSize: 2048, TempDir: t.TempDir(),
			Counted: func(turns int) {
				if turns != n {
					t.Errorf("Counted(%d), want %d", turns, n)
				}
				runtime.GC()
				runtime.GC() // the second empties sync.Pool victim caches
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return live
	}
	small, large := liveAfterPass1(30000), liveAfterPass1(150000)
	t.Logf("live heap after pass 1: %d KiB at 30,000 rows, %d KiB at 150,000", small>>10, large>>10)
	if large > small+3<<20 {
		t.Errorf("live heap grew by %d KiB from 30,000 to 150,000 rows; the first pass keeps per-turn state in memory", (large-small)>>10)
	}
}

// changingInput returns first on the first Open and then on every later one,
// like a file appended to or truncated between the judge's two passes.
func changingInput(first, then []byte) Input {
	opens := 0
	return ingest.NewTable("t.jsonl", ingest.JSONL, func() (io.ReadCloser, error) {
		opens++
		if opens == 1 {
			return io.NopCloser(bytes.NewReader(first)), nil
		}
		return io.NopCloser(bytes.NewReader(then)), nil
	})
}

// failingWriter fails every write with err.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestRunErrors: a run whose input changes between the passes, or whose
// output fails, ends with an error that says so (not a cancellation).
func TestRunErrors(t *testing.T) {
	j := testJudge(t)
	var b bytes.Buffer
	for i := range 3000 {
		b.WriteString(turnRow(fmt.Sprintf("T%d", i), "S", "", false, "응.") + "\n")
	}
	rows := b.Bytes()
	more := append(slices.Clone(rows), []byte(turnRow("T0", "S", "", false, "또.")+"\n")...)
	fewer := rows[:bytes.LastIndexByte(rows[:len(rows)-1], '\n')+1]
	diskFull := errors.New("write out.jsonl: no space left on device")
	cases := []struct {
		name string
		in   func() Input // a fresh one per run: changingInput counts its opens
		out  io.Writer
		want string
	}{
		{"rows appended between the passes", func() Input { return changingInput(rows, more) }, io.Discard, "t.jsonl changed during the run: it now has more than the 3000 rows the first pass read"},
		{"rows cut off between the passes", func() Input { return changingInput(rows, fewer) }, io.Discard, "t.jsonl changed during the run: it now has 2999 rows, the first pass read 3000"},
		{"the output fails", func() Input { return bytesInput("t.jsonl", ingest.JSONL, rows) }, failingWriter{diskFull}, "write records: write out.jsonl: no space left on device"},
	}
	for _, tc := range cases {
		for _, size := range []int{0, 100} {
			t.Run(fmt.Sprintf("%s (run size %d)", tc.name, size), func(t *testing.T) {
				_, err := Judge(context.Background(), tc.in(), Config{Judge: j, Out: tc.out, runSize: size, TempDir: t.TempDir()})
				if err == nil || err.Error() != tc.want {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
			})
		}
	}
}

// TestChunksBoundedInBytes: long rows travel in small chunks (chunkBytes),
// short ones in chunks of chunkSize rows.
func TestChunksBoundedInBytes(t *testing.T) {
	long := strings.Repeat("가", 40000) // 120,000 bytes
	var b bytes.Buffer
	for i := range 10 {
		b.WriteString(turnRow(fmt.Sprintf("L%d", i), "S", "", false, long) + "\n")
	}
	for i := range chunkSize + 1 {
		b.WriteString(turnRow(fmt.Sprintf("T%d", i), "S", "", false, "응.") + "\n")
	}
	var sizes []int
	err := pipeline(context.Background(), bytesInput("t.jsonl", ingest.JSONL, b.Bytes()), 2, nil,
		func(context.Context, *chunk) {}, func(c *chunk) error { sizes = append(sizes, len(c.raws)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	// 120 KB rows: a chunk closes once it holds 256 KiB, after its third row.
	want := []int{3, 3, 3, 1 + 511, 2}
	if !reflect.DeepEqual(sizes, want) {
		t.Errorf("chunk sizes %v, want %v", sizes, want)
	}
}
