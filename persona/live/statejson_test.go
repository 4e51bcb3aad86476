package live_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

// stepAll steps turns into a new state with the small judge and returns it.
func stepAll(t *testing.T, turns ...*persona.Turn) *live.State {
	t.Helper()
	j := smallJudge(t)
	var st live.State
	for _, tu := range turns {
		if _, _, err := live.Step(j, &st, tu); err != nil {
			t.Fatalf("%s: %v", tu.TurnID, err)
		}
	}
	return &st
}

// The stored form is the documented JSON: the state of three turns — T1
// naming 도윤 and 물새섬 (one cited turn, two mentions), T2 naming nothing,
// T3 untimed naming 하나 with a null reply — written by hand.
func TestTheStoredFormIsTheDocumentedJSON(t *testing.T) {
	t3 := turn("T3", "", []string{"하나", "하나"}, false, "너는?", "")
	t3.ReplyText = nil
	st := stepAll(t,
		turn("T1", "2026-01-01T10:00:00Z", []string{"도윤", "물새섬", "도윤"}, false, "가족은?", "동생 도윤이 <물새섬>에 있어."),
		turn("T2", "2026-01-01T10:05:00Z", []string{}, false, "응", "그래."),
		t3)
	want := `{"turns":3,"untimed":true,"latest":{"turn_id":"T2","created_at":"2026-01-01T10:05:00Z"},` +
		`"mentions":{"도윤":{"by_arrival":0,"by_time":0},"물새섬":{"by_arrival":0,"by_time":0},"하나":{"by_arrival":2,"by_time":2}},` +
		`"cited":[{"seq":0,"turn_id":"T1","reply_text":"동생 도윤이 \u003c물새섬\u003e에 있어.","created_at":"2026-01-01T10:00:00Z"},` +
		`{"seq":2,"turn_id":"T3","reply_text":null}]}`
	if got := string(st.AppendJSON(nil)); got != want {
		t.Fatalf("stored form\n %s\nwant\n %s", got, want)
	}
	if st.Bytes() != len(want) {
		t.Fatalf("Bytes %d, want the form's length %d", st.Bytes(), len(want))
	}
	var nilState *live.State
	if got := nilState.AppendJSON(nil); string(got) != "null" {
		t.Fatalf("nil state: %s", got)
	}
}

// The state of a row naming 1,000 entities with a 200 KB reply holds the
// reply once: its stored form is the reply plus the names and a few bytes a
// name (each mention carried its own copy of the reply before: 200 MB).
func TestAThousandNamesWithABigReplyKeepTheReplyOnce(t *testing.T) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = "인물" + strings.Repeat("가", i%7) + string(rune('A'+i%26)) + strings.Repeat("x", i/26)
	}
	reply := strings.Repeat("오늘은 등대 쪽으로 가 보자. ", 6000) // 204,000 bytes
	st := stepAll(t, turn("T1", "2026-01-01T10:00:00Z", names, false, "누구누구?", reply))
	js := st.AppendJSON(nil)
	nameBytes := 0
	for _, n := range names {
		nameBytes += len(n)
	}
	// Per name: its quotes, ':{"by_arrival":0,"by_time":0}' and a comma.
	if limit := len(reply) + nameBytes + 1000*40 + 200; len(js) > limit {
		t.Fatalf("stored form %d bytes, want at most %d (one reply of %d + %d bytes of names + 40 a name)", len(js), limit, len(reply), nameBytes)
	}
	if n := bytes.Count(js, []byte("오늘은 등대")); n != 6000 {
		t.Fatalf("the reply's sentence appears %d times, want 6000 (one copy)", n)
	}
	if st.Names() != 1000 || st.CitedTurns() != 1 || st.Bytes() != len(js) {
		t.Fatalf("names %d cited %d bytes %d (form %d), want 1000, 1 and the form's length", st.Names(), st.CitedTurns(), st.Bytes(), len(js))
	}
}

// The stored form reads back to the same state, by UnmarshalJSON and by
// Resume, and the state recalls as before.
func TestTheStoredFormReadsBackToTheSameState(t *testing.T) {
	st := stepAll(t,
		turn("A", "2026-01-01T10:05:00Z", []string{"도윤"}, false, "가족은?", "동생 도윤이 있어."),
		turn("B", "2026-01-01T10:02:00Z", []string{"도윤", "물새섬"}, false, "또?", "도윤이는 \u2028배를 고쳐."))
	js := st.AppendJSON(nil)
	var back live.State
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.AppendJSON(nil); !bytes.Equal(got, js) || back.Bytes() != len(js) {
		t.Fatalf("round trip:\n %s\n %s (Bytes %d)", js, got, back.Bytes())
	}
	r, err := live.Resume(js)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := r.Mention("도윤")
	c, ok2 := r.Cited(f.ByTime)
	if !ok || !ok2 || f != (live.Firsts{ByArrival: 0, ByTime: 1}) || c.TurnID != "B" || *c.ReplyText != "도윤이는 \u2028배를 고쳐." {
		t.Fatalf("도윤 %+v (%v), cited %+v (%v); want by_arrival 0, by_time 1 = B", f, ok, c, ok2)
	}
	if m, err := json.Marshal(struct {
		Live live.State `json:"live"`
	}{back}); err != nil || string(m) != `{"live":`+string(js)+`}` {
		t.Fatalf("json.Marshal of a State field: %s, %v", m, err)
	}
}

// The earlier stored form, each mention with its turn's turn_id,
// reply_text, seq and created_at, is read: the copies of one turn become one
// cited turn, and the state then recalls, and encodes, as if judged now.
func TestTheEarlierStoredFormIsReadWithOneCopyOfEachTurn(t *testing.T) {
	old := `{"turns":3,"latest":{"turn_id":"A","created_at":"2026-01-01T10:05:00Z"},"mentions":{` +
		`"도윤":{"by_arrival":{"turn_id":"A","reply_text":"동생 도윤이 물새섬에 있어.","seq":0,"created_at":"2026-01-01T10:05:00Z"},` +
		`"by_time":{"turn_id":"B","reply_text":null,"seq":1,"created_at":"2026-01-01T10:02:00Z"}},` +
		`"물새섬":{"by_arrival":{"turn_id":"A","reply_text":"동생 도윤이 물새섬에 있어.","seq":0,"created_at":"2026-01-01T10:05:00Z"},` +
		`"by_time":{"turn_id":"A","reply_text":"동생 도윤이 물새섬에 있어.","seq":0,"created_at":"2026-01-01T10:05:00Z"}}}}`
	st, err := live.Resume([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	b := turn("B", "2026-01-01T10:02:00Z", []string{"도윤"}, false, "또?", "")
	b.ReplyText = nil
	want := stepAll(t,
		turn("A", "2026-01-01T10:05:00Z", []string{"도윤", "물새섬"}, false, "가족은?", "동생 도윤이 물새섬에 있어."),
		b,
		turn("C", "2026-01-01T10:06:00Z", []string{}, false, "응", "그래."))
	// The earlier form's latest stamp is whatever it held: set C's.
	got := string(st.AppendJSON(nil))
	wantJS := strings.Replace(string(want.AppendJSON(nil)), `"turn_id":"C","created_at":"2026-01-01T10:06:00Z"`, `"turn_id":"A","created_at":"2026-01-01T10:05:00Z"`, 1)
	if got != wantJS {
		t.Fatalf("read\n %s\nwant\n %s", got, wantJS)
	}
	if st.CitedTurns() != 2 {
		t.Fatalf("%d cited turns, want 2 (A once, B)", st.CitedTurns())
	}
}

// A stored form that is inconsistent is an error naming what, not a state
// that would panic at its first recall.
func TestAnInconsistentStoredFormIsAnError(t *testing.T) {
	tests := []struct{ name, js, want string }{
		{"a mention refers to a turn no cited entry holds", `{"turns":2,"mentions":{"도윤":{"by_arrival":1,"by_time":1}}}`, `entity "도윤" refers to turns 1 and 1`},
		{"a cited turn is past turns", `{"turns":1,"cited":[{"seq":1,"turn_id":"T","reply_text":null}]}`, `cited turn "T" at seq 1 (turns 1`},
		{"a cited turn no mention refers to", `{"turns":1,"cited":[{"seq":0,"turn_id":"T","reply_text":null}]}`, `cited turn "T" at seq 0 is referred to by no entity`},
		{"negative turns", `{"turns":-1}`, `turns -1`},
		{"not JSON", `{"turns":`, `unexpected end`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := live.Resume([]byte(tc.js))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// BenchmarkAppendJSON encodes a demo-sized state (21 entities, each first
// named by a turn of its own with a Korean reply).
func BenchmarkAppendJSON(b *testing.B) {
	j := smallJudgeB(b)
	var st live.State
	for i := range 21 {
		tu := turn("T-"+string(rune('A'+i)), "2024-05-01T09:00:00+09:00", []string{"인물" + string(rune('가'+i))}, false, "누구?", "오늘은 등대 쪽으로 가 보자. 도윤이도 같이 가기로 했어.")
		if _, _, err := live.Step(j, &st, tu); err != nil {
			b.Fatal(err)
		}
	}
	var buf []byte
	for b.Loop() {
		buf = st.AppendJSON(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

func smallJudgeB(b *testing.B) *persona.Judge { return smallJudge(b) }
