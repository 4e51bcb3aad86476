package live_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"evident/persona"
	"evident/persona/live"
)

func strp(s string) *string { return &s }

// stateCases are states with every field set and unset and strings that
// need each kind of escape json.Marshal writes.
var stateCases = []struct {
	name  string
	state *live.State
}{
	{"the zero state is turns 0 and nothing else", &live.State{}},
	{"an untimed state with a latest stamp", &live.State{Turns: 3, Untimed: true, Latest: &live.Stamp{TurnID: "T2", CreatedAt: "2024-01-01T00:00:00Z"}}},
	{"mentions are written in sorted key order with null replies and omitted created_at", &live.State{Turns: 2, Mentions: map[string]*live.Firsts{
		"하나": {ByArrival: live.Mention{TurnID: "T1", ReplyText: strp("도윤이 왔어."), Seq: 0, CreatedAt: "2024-01-01T00:00:00Z"}, ByTime: live.Mention{TurnID: "T1", Seq: 0}},
		"도윤": {ByArrival: live.Mention{TurnID: "T0", Seq: 1}, ByTime: live.Mention{TurnID: "T0", ReplyText: strp(""), Seq: 1}},
		"A":  nil,
	}}},
	{"strings needing escapes: quotes, controls, HTML, U+2028, invalid UTF-8", &live.State{Turns: 1, Latest: &live.Stamp{TurnID: "\"\\\b\f\n\r\t\x01\x1f<>&", CreatedAt: "\u2028\u2029 \xff\xfe끝"},
		Mentions: map[string]*live.Firsts{"<&>\x00": {ByArrival: live.Mention{TurnID: "a\xc3", ReplyText: strp("\xed\xa0\x80 surrogate half")}}}}},
}

func TestAppendJSONIsJSONMarshal(t *testing.T) {
	for _, c := range stateCases {
		t.Run(c.name, func(t *testing.T) {
			want, err := json.Marshal(c.state)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.state.AppendJSON([]byte("prefix")); !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Fatalf("AppendJSON:\n %s\nwant prefix +\n %s", got, want)
			}
		})
	}
	var nilState *live.State
	if got := nilState.AppendJSON(nil); string(got) != "null" {
		t.Fatalf("nil state: %s", got)
	}
}

// Resume reads AppendJSON's bytes back to the same state (its JSON form is
// the one stored before AppendJSON existed).
func TestResumeReadsAppendJSONBack(t *testing.T) {
	s := stateCases[2].state
	back, err := live.Resume(s.AppendJSON(nil))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := s.AppendJSON(nil), back.AppendJSON(nil); !bytes.Equal(a, b) {
		t.Fatalf("round trip:\n %s\n %s", a, b)
	}
	if back.Mentions["하나"].ByArrival.ReplyText == nil || *back.Mentions["하나"].ByArrival.ReplyText != "도윤이 왔어." {
		t.Fatalf("reply_text lost: %+v", back.Mentions["하나"])
	}
}

// FuzzAppendJSON: for any strings, State.AppendJSON and Digest's JSON are
// json.Marshal's bytes.
func FuzzAppendJSON(f *testing.F) {
	f.Add("T1", "도윤", "2024-01-01T00:00:00Z", "reply <b>", 3, true)
	f.Add("\xff", "\u2028", "", "\x00\"\\", 0, false)
	f.Add("", "", "bad time", "\ud7ff\U0010ffff", -1, true)
	f.Fuzz(func(t *testing.T, id, entity, at, reply string, seq int, untimed bool) {
		s := &live.State{Turns: seq, Untimed: untimed, Latest: &live.Stamp{TurnID: id, CreatedAt: at},
			Mentions: map[string]*live.Firsts{entity: {ByArrival: live.Mention{TurnID: id, ReplyText: &reply, Seq: seq, CreatedAt: at},
				ByTime: live.Mention{TurnID: reply, Seq: -seq}}, reply: nil}}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON:\n %q\nwant\n %q", got, want)
		}
		tu := persona.Turn{TurnID: id, SessionID: entity, CharacterID: reply, ModelID: at, UserMessage: &reply, ReplyText: &entity,
			NamedEntities: []string{entity, reply}, UserAskedRecall: untimed, CreatedAt: at, PromptID: id}
		if seq%2 == 0 {
			tu.NamedEntities, tu.UserMessage, tu.FirstPerson, tu.HonorificLevel = nil, nil, &id, &at
		}
		b, err := json.Marshal(&tu)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got, want := live.Digest(&tu), hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("Digest of %+v: %s, want %s", tu, got, want)
		}
	})
}

// BenchmarkAppendJSON encodes a demo-sized state (21 entities with Korean
// replies, about 5 KB) against json.Marshal.
func BenchmarkAppendJSON(b *testing.B) {
	s := &live.State{Turns: 52, Latest: &live.Stamp{TurnID: "T-52", CreatedAt: "2024-05-01T10:00:00+09:00"}, Mentions: map[string]*live.Firsts{}}
	for i := range 21 {
		m := live.Mention{TurnID: "T-" + string(rune('A'+i)), ReplyText: strp("오늘은 등대 쪽으로 가 보자. 도윤이도 같이 가기로 했어."), Seq: i, CreatedAt: "2024-05-01T09:00:00+09:00"}
		s.Mentions["인물"+string(rune('가'+i))] = &live.Firsts{ByArrival: m, ByTime: m}
	}
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = s.AppendJSON(buf[:0])
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
