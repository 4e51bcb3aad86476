package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/demo"
	"evident/persona/ingest"
	"evident/persona/live"
)

func demoJudge(t *testing.T) *persona.Judge {
	t.Helper()
	j, _, err := batch.NewJudge(demo.Cards(), demo.Lexicon(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// readTurns decodes every row of src that decodes, in input order.
func readTurns(t *testing.T, src ingest.Source) []persona.Turn {
	t.Helper()
	rows, err := src.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []persona.Turn
	for {
		buf, rerr := rows.ReadRows(nil, 512, 1<<20)
		for _, raw := range buf {
			if raw.Err != nil {
				continue
			}
			if tu, err := ingest.DecodeTurn(raw); err == nil {
				out = append(out, tu)
			}
		}
		if rerr == io.EOF {
			return out
		}
		if rerr != nil {
			t.Fatal(rerr)
		}
	}
}

func encode(t *testing.T, r *persona.Record) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The demo log, fed one turn at a time in its input (arrival) order, gets
// byte for byte the batch judge's records, and every live record passes the
// ten checks with the live history; the state survives a JSON round trip
// after every turn (a restart between any two turns changes nothing).
func TestLiveRecordsEqualBatchRecordsOnTheDemoLog(t *testing.T) {
	j := demoJudge(t)
	var out bytes.Buffer
	if _, err := (&batch.Run{Judge: j, Turns: demo.Turns()}).Do(context.Background(), batch.Outputs{Lines: &out}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.SplitAfter(out.String(), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			TurnID string `json:"turn_id"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		want[r.TurnID] = line
	}
	turns := readTurns(t, demo.Turns())
	byID := map[string]*persona.Turn{}
	for i := range turns {
		if byID[turns[i].TurnID] == nil {
			byID[turns[i].TurnID] = &turns[i]
		}
	}
	lookup := func(id string) (*persona.Turn, bool) { tu, ok := byID[id]; return tu, ok }

	states := map[string][]byte{}
	judged, recalls := 0, 0
	seen := map[string]bool{}
	for i := range turns {
		tu := &turns[i]
		if seen[tu.TurnID] {
			continue // the batch judge rejects a repeated turn_id; live does so in the store
		}
		seen[tu.TurnID] = true
		var st live.State
		if b := states[tu.SessionID]; b != nil {
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
		}
		h := st.History(tu)
		pos := st.Header().Turns
		rec, o, err := live.Step(j, &st, tu)
		if errors.Is(err, persona.ErrUnknownCharacter) {
			if _, ok := want[tu.TurnID]; ok {
				t.Fatalf("%s: live rejects a turn the batch judged", tu.TurnID)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if o.Late {
			t.Fatalf("%s: the demo log's created_at never goes backwards in a session, yet the turn is late", tu.TurnID)
		}
		if got := encode(t, &rec); got != want[tu.TurnID] {
			t.Errorf("%s:\nlive  %s\nbatch %s", tu.TurnID, got, want[tu.TurnID])
		}
		for _, c := range j.Check(&rec, persona.Context{Turn: tu, Pos: pos, History: h, TurnByID: lookup}) {
			if !c.Pass {
				t.Errorf("%s: check %d: %s", tu.TurnID, c.ID, c.Reason)
			}
		}
		if rec.RecallSourceTurn != nil {
			recalls++
		}
		judged++
		if o.Change.Seq != pos {
			t.Fatalf("%s: change at seq %d, want %d", tu.TurnID, o.Change.Seq, pos)
		}
		b, err := json.Marshal(&st)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != st.Bytes() {
			t.Fatalf("%s: stored form %d bytes, Bytes %d", tu.TurnID, len(b), st.Bytes())
		}
		states[tu.SessionID] = b
	}
	if judged != len(want) {
		t.Fatalf("live judged %d turns, batch %d", judged, len(want))
	}
	if recalls == 0 {
		t.Fatal("the demo log has no failed recall: the test would not see the state at work")
	}
}

func ptr(s string) *string { return &s }

var cardsJSON = `[{"character_id":"C1","name":"하나","honorific_rule":"반말","first_person":"나",
 "canon_entities":["도윤","물새섬"],"forbidden_topics":[],"entity_roles":[{"role":"동생","entity":"도윤"}]}]`

func smallJudge(t testing.TB) *persona.Judge {
	t.Helper()
	cards := ingest.NewTable("cards.json", ingest.JSONArray, func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(cardsJSON)), nil })
	lex := ingest.NewTable("lexicon.csv", ingest.CSV, func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("term,topic\n")), nil })
	j, _, err := batch.NewJudge(cards, lex, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func turn(id, at string, named []string, asked bool, msg, reply string) *persona.Turn {
	return &persona.Turn{TurnID: id, SessionID: "S", CharacterID: "C1", ModelID: "m", CreatedAt: at,
		UserMessage: ptr(msg), ReplyText: ptr(reply), FirstPerson: ptr("나"), NamedEntities: named, UserAskedRecall: asked}
}

// A turn that arrives after a turn with a later created_at is judged against
// every turn that arrived before it: T2 (created 10:05) named 도윤, T3
// (created 10:01, arrived third) asks about the brother and does not name
// him, so the recall rule fires citing T2, and the hedge names T2. Batch
// order (by created_at) would not count T2 as earlier.
func TestALateTurnIsJudgedAgainstWhatArrivedBeforeItAndItsHedgeSaysSo(t *testing.T) {
	j := smallJudge(t)
	var st live.State
	for _, tu := range []*persona.Turn{
		turn("T1", "2026-01-01T10:00:00Z", []string{}, false, "안녕", "안녕. 잘 왔어."),
		turn("T2", "2026-01-01T10:05:00Z", []string{"도윤"}, false, "가족은?", "동생 도윤이 있어."),
	} {
		if _, o, err := live.Step(j, &st, tu); err != nil || o.Late {
			t.Fatalf("%s: %v late=%v", tu.TurnID, err, o.Late)
		}
	}
	rec, o, err := live.Step(j, &st, turn("T3", "2026-01-01T10:01:00Z", []string{}, true, "동생 이름이 뭐였지?", "글쎄, 잘 모르겠어."))
	if err != nil {
		t.Fatal(err)
	}
	if !o.Late || o.After != "T2" {
		t.Fatalf("outcome %+v, want late after T2", o)
	}
	if rec.Verdict != persona.RecallFailed || rec.RecallSourceTurn == nil || *rec.RecallSourceTurn != "T2" {
		t.Fatalf("verdict %s source %v, want %s citing T2", rec.Verdict, rec.RecallSourceTurn, persona.RecallFailed)
	}
	if rec.Hedge == nil || !strings.Contains(*rec.Hedge, "이미 판정한 회차 T2보다 이르지만 늦게 도착해") {
		t.Fatalf("hedge %v does not say the turn arrived late", rec.Hedge)
	}
	if h := st.Header(); h.Latest.TurnID != "T2" || h.Turns != 3 {
		t.Fatalf("state latest %+v turns %d, want T2 and 3", h.Latest, h.Turns)
	}
}

// In a timed session the earliest mention by created_at is cited, and once a
// turn without created_at arrives the session goes by arrival order.
func TestRecallCitesTheEarliestMentionInSessionOrder(t *testing.T) {
	j := smallJudge(t)
	tests := []struct {
		name  string
		turns []*persona.Turn
		askAt string
		want  string
	}{
		{"a timed session cites the mention with the earliest created_at", []*persona.Turn{
			turn("A", "2026-01-01T10:05:00Z", []string{"도윤"}, false, "가족은?", "동생 도윤이 있어."),
			turn("B", "2026-01-01T10:02:00Z", []string{"도윤"}, false, "또?", "도윤이는 배를 고쳐."),
		}, "2026-01-01T10:09:00Z", "B"},
		{"an untimed session cites the first mention to arrive", []*persona.Turn{
			turn("A", "2026-01-01T10:05:00Z", []string{"도윤"}, false, "가족은?", "동생 도윤이 있어."),
			turn("B", "", []string{"도윤"}, false, "또?", "도윤이는 배를 고쳐."),
		}, "2026-01-01T10:09:00Z", "A"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st live.State
			for _, tu := range tc.turns {
				if _, _, err := live.Step(j, &st, tu); err != nil {
					t.Fatal(err)
				}
			}
			rec, _, err := live.Step(j, &st, turn("Q", tc.askAt, []string{}, true, "동생 이름?", "몰라."))
			if err != nil {
				t.Fatal(err)
			}
			if rec.RecallSourceTurn == nil || *rec.RecallSourceTurn != tc.want {
				t.Fatalf("recall source %v, want %s", rec.RecallSourceTurn, tc.want)
			}
		})
	}
}

// A turn of an unknown character is an error and leaves the state as it was.
func TestAnUnknownCharacterIsRejectedAndLeavesTheStateUnchanged(t *testing.T) {
	j := smallJudge(t)
	var st live.State
	tu := turn("X", "2026-01-01T10:00:00Z", []string{"도윤"}, false, "?", "도윤.")
	tu.CharacterID = "NOPE"
	if _, _, err := live.Step(j, &st, tu); !errors.Is(err, persona.ErrUnknownCharacter) {
		t.Fatalf("err %v, want ErrUnknownCharacter", err)
	}
	if got := string(st.AppendJSON(nil)); got != `{"turns":0}` {
		t.Fatalf("state changed: %s", got)
	}
}

// Digest tells rows apart by every column, null and [] included.
func TestDigestTellsRowsApartByEveryColumn(t *testing.T) {
	a := turn("T", "", nil, false, "m", "r")
	b := *a
	b.NamedEntities = []string{}
	c := *a
	c.ReplyText = ptr("r2")
	a2 := *a
	if live.Digest(a) != live.Digest(&a2) || len(live.Digest(a)) != 64 {
		t.Fatal("digest is not a stable 64-hex-digit value")
	}
	if live.Digest(a) == live.Digest(&b) || live.Digest(a) == live.Digest(&c) {
		t.Fatal("different rows share a digest")
	}
}
