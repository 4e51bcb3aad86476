package live

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"evident/persona"
)

// add records t in s as Step does after judging it (no judge needed).
func add(s *State, t *persona.Turn) Change {
	at, timed := persona.SessionTime(t)
	p := s.plan(t, at, timed)
	before := p.bytes
	ch := s.apply(t, at, timed, &p)
	if s.Bytes() != before {
		panic("plan's bytes are not the state's")
	}
	return ch
}

// checkForm fails unless s's stored form is valid JSON of Bytes' length
// that reads back to the same bytes.
func checkForm(t *testing.T, s *State) {
	t.Helper()
	js := s.AppendJSON(nil)
	if !json.Valid(js) {
		t.Fatalf("not JSON: %q", js)
	}
	if s.Bytes() != len(js) {
		t.Fatalf("Bytes %d, stored form %d bytes: %q", s.Bytes(), len(js), js)
	}
	var back State
	if err := back.UnmarshalJSON(js); err != nil {
		t.Fatalf("read back %q: %v", js, err)
	}
	// The same JSON values (invalid UTF-8 was written as \ufffd and reads
	// back as U+FFFD, as with json.Marshal), and Bytes still its length.
	got := back.AppendJSON(nil)
	var a, b any
	if json.Unmarshal(js, &a) != nil || json.Unmarshal(got, &b) != nil || !reflect.DeepEqual(a, b) || back.Bytes() != len(got) {
		t.Fatalf("round trip:\n %q\n %q (Bytes %d)", js, got, back.Bytes())
	}
}

// Bytes is the stored form's length after every kind of change: new
// entities, a ByTime moving (and the turn it left dropped), an untimed turn,
// a new latest stamp, strings needing each escape, seqs crossing a digit.
func TestBytesIsTheLengthOfAppendJSON(t *testing.T) {
	var s State
	checkForm(t, &s)
	r := func(x string) *string { return &x }
	turns := []*persona.Turn{
		{TurnID: "T0", CreatedAt: "2026-01-01T10:09:00Z", NamedEntities: []string{"도윤", "<&>\x00", "도윤"}, ReplyText: r("\"\\\b\f\n\r\t\x01\x1f \u2028\u2029 \xff\xfe끝")},
		{TurnID: "T1", CreatedAt: "2026-01-01T10:08:00Z", NamedEntities: []string{"도윤"}, ReplyText: r("moves by_time")},
		{TurnID: "T2", CreatedAt: "2026-01-01T10:07:00Z", NamedEntities: []string{"도윤"}},
	}
	for i := range 12 { // seqs 3..14 cross from one digit to two
		turns = append(turns, &persona.Turn{TurnID: "N" + string(rune('a'+i)), CreatedAt: "2026-01-01T10:10:00Z", NamedEntities: []string{string(rune('a' + i))}, ReplyText: r("x")})
	}
	turns = append(turns, &persona.Turn{TurnID: "U\xc3", NamedEntities: []string{"a", "새"}, ReplyText: nil},
		&persona.Turn{TurnID: "L", CreatedAt: "2026-01-01T11:00:00Z"})
	for _, tu := range turns {
		add(&s, tu)
		checkForm(t, &s)
	}
}

// Step reports what it changed: the entities added or moved, whether the
// turn became a cited turn, and the cited turns left without a reference.
func TestStepReportsWhatItChanged(t *testing.T) {
	var s State
	r := func(x string) *string { return &x }
	tests := []struct {
		name  string
		turn  *persona.Turn
		want  Change
		cited int
	}{
		{"a turn naming two new entities adds both and becomes cited", &persona.Turn{TurnID: "A", CreatedAt: "2026-01-01T10:05:00Z", NamedEntities: []string{"도윤", "섬", "도윤"}, ReplyText: r("a")},
			Change{Seq: 0, Entities: []string{"도윤", "섬"}, Added: true}, 1},
		{"a turn naming nothing changes only the header", &persona.Turn{TurnID: "B", CreatedAt: "2026-01-01T10:06:00Z", NamedEntities: []string{}},
			Change{Seq: 1}, 1},
		{"a later-created turn naming a known entity changes nothing of it", &persona.Turn{TurnID: "C", CreatedAt: "2026-01-01T10:07:00Z", NamedEntities: []string{"도윤"}},
			Change{Seq: 2}, 1},
		{"an earlier-created turn moves by_time and becomes cited", &persona.Turn{TurnID: "D", CreatedAt: "2026-01-01T10:03:00Z", NamedEntities: []string{"도윤"}, ReplyText: r("d")},
			Change{Seq: 3, Entities: []string{"도윤"}, Added: true}, 2},
		{"an even earlier one moves it again and drops the turn it left", &persona.Turn{TurnID: "E", CreatedAt: "2026-01-01T10:01:00Z", NamedEntities: []string{"도윤"}, ReplyText: r("e")},
			Change{Seq: 4, Entities: []string{"도윤"}, Added: true, Dropped: []int{3}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := add(&s, tc.turn)
			if got.Seq != tc.want.Seq || got.Added != tc.want.Added || !slices.Equal(got.Entities, tc.want.Entities) || !slices.Equal(got.Dropped, tc.want.Dropped) {
				t.Fatalf("change %+v, want %+v", got, tc.want)
			}
			if s.CitedTurns() != tc.cited {
				t.Fatalf("%d cited turns, want %d", s.CitedTurns(), tc.cited)
			}
			checkForm(t, &s)
		})
	}
	if f, _ := s.Mention("도윤"); f != (Firsts{ByArrival: 0, ByTime: 4}) {
		t.Fatalf("도윤 %+v, want by_arrival 0 (A), by_time 4 (E)", f)
	}
}

// FuzzAppendJSON: for any strings and order of turns, the stored form is
// JSON of Bytes' length that reads back to itself, its strings are quoted as
// json.Marshal quotes them, and Digest's JSON is json.Marshal's bytes.
func FuzzAppendJSON(f *testing.F) {
	f.Add("T1", "도윤", "2024-01-01T00:00:00Z", "reply <b>", 3, true)
	f.Add("\xff", "\u2028", "", "\x00\"\\", 0, false)
	f.Add("", "", "bad time", "\ud7ff\U0010ffff", -1, true)
	f.Fuzz(func(t *testing.T, id, entity, at, reply string, seq int, untimed bool) {
		for _, x := range []string{id, entity, at, reply} {
			q, _ := json.Marshal(x)
			if got := appendMarshalString(nil, x); !bytes.Equal(got, q) || quotedLen(x) != len(q) {
				t.Fatalf("quote %q: %s (%d), want %s", x, got, quotedLen(x), q)
			}
		}
		var s State
		times := []string{at, "2024-01-01T00:00:00Z", "2023-01-01T00:00:00Z", ""}
		for k := range 4 + seq%4 {
			tu := &persona.Turn{TurnID: id + string(rune('0'+k)), CreatedAt: times[(k+seq%3+3)%4], ReplyText: &reply,
				NamedEntities: []string{entity, reply, entity + id}}
			if untimed && k == 2 {
				tu.CreatedAt, tu.ReplyText = "", nil
			}
			add(&s, tu)
			checkForm(t, &s)
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
		if got, want := Digest(&tu), hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("Digest of %+v: %s, want %s", tu, got, want)
		}
	})
}
