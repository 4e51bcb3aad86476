package kafka

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"evident/persona/live"
)

// sampleTurns are turn_ids that take each path of appendJSONString (plain
// ASCII, a quote, a backslash, a control character, Hangul, HTML
// characters) with distinct digests.
func sampleTurns() (ids []string, digests [][digestLen]byte) {
	ids = []string{"T-1", `q"uote`, `back\slash`, "tab\there", "한글-2", "<a&b>", ""}
	for i := range ids {
		var d [digestLen]byte
		for k := range d {
			d[k] = byte(i*31 + k)
		}
		digests = append(digests, d)
	}
	return ids, digests
}

func sampleList() []byte {
	ids, ds := sampleTurns()
	var b []byte
	for i, id := range ids {
		b = appendTurn(b, id, &ds[i])
	}
	return b
}

// A turn list gives back its turns in the order written, and the changelog
// value built from it is sessionState's JSON: it decodes, as an older
// evident's reader does, to the same live state and turn_id → hex digest
// map that json.Marshal of the state would give.
func TestATurnListReadsBackAndItsChangelogValueIsTheStatesJSON(t *testing.T) {
	ids, ds := sampleTurns()
	list := sampleList()
	var gotIDs []string
	var gotDs [][digestLen]byte
	if err := eachTurn(list, func(id []byte, at int) {
		gotIDs = append(gotIDs, string(id))
		gotDs = append(gotDs, [digestLen]byte(list[at:at+digestLen]))
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotIDs, ids) || !reflect.DeepEqual(gotDs, ds) {
		t.Fatalf("read back %q %x, want %q %x", gotIDs, gotDs, ids, ds)
	}

	reply := "동생 도윤이가 있어."
	r := live.Restore(live.Header{Turns: 7, Latest: &live.Stamp{TurnID: "T-1", CreatedAt: "2026-10-03T21:00:00+09:00"}})
	r.Cite(live.Cited{Seq: 0, TurnID: "T-1", ReplyText: &reply})
	r.Mention("도윤", live.Firsts{ByArrival: 0, ByTime: 0})
	pst, err := r.State()
	if err != nil {
		t.Fatal(err)
	}
	st := *pst
	lb, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	v, gotLive := appendState(nil, &st, list)
	if !bytes.Equal(gotLive, lb) {
		t.Fatalf("live state %s, want json.Marshal's %s", gotLive, lb)
	}
	want := sessionState{Live: st, Turns: map[string]string{}}
	for i, id := range ids {
		want.Turns[id] = hex.EncodeToString(ds[i][:])
	}
	wantJSON, err := json.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	var got, ref sessionState
	if err := json.Unmarshal(v, &got); err != nil {
		t.Fatalf("changelog value %s: %v", v, err)
	}
	if err := json.Unmarshal(wantJSON, &ref); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ref) {
		t.Fatalf("changelog value decodes to %+v, want %+v", got, ref)
	}
	if empty, _ := appendState(nil, &st, nil); !bytes.HasSuffix(empty, []byte(`,"turns":{}}`)) || !json.Valid(empty) {
		t.Fatalf("state without turns: %s", empty)
	}
}

// A turn list that does not fit its encoding (cut short anywhere, a length
// past the end) is refused with errTurnList; the empty list has no turns.
func TestAMalformedTurnListIsRefused(t *testing.T) {
	list := sampleList()
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"a list cut inside its last digest", list[:len(list)-1]},
		{"a list cut after a length", list[:1]},
		{"a length past the end", append([]byte{0x7f}, bytes.Repeat([]byte{'x'}, 40)...)},
		{"a length that overflows", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"an unterminated length", []byte{0x80}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := eachTurn(tc.b, func([]byte, int) {}); !errors.Is(err, errTurnList) {
				t.Fatalf("err %v, want errTurnList", err)
			}
		})
	}
	n := 0
	if err := eachTurn(nil, func([]byte, int) { n++ }); err != nil || n != 0 {
		t.Fatalf("empty list: %d turns, %v", n, err)
	}
}

// A changelog state whose digest is not 64 hex digits cannot become a turn
// list: the error names the turn.
func TestTurnListOfNamesADigestThatIsNotHex(t *testing.T) {
	good := strings.Repeat("ab", digestLen)
	for _, tc := range []struct{ name, digest string }{
		{"too short", "abcd"},
		{"not hex", strings.Repeat("zz", digestLen)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := turnListOf(map[string]string{"T-1": good, "T-2": tc.digest})
			if err == nil || !strings.Contains(err.Error(), `turn "T-2"`) {
				t.Fatalf("err %v, want one naming turn T-2", err)
			}
		})
	}
	b, err := turnListOf(map[string]string{"T-2": good, "T-1": good})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	eachTurn(b, func(id []byte, _ int) { ids = append(ids, string(id)) })
	if !reflect.DeepEqual(ids, []string{"T-1", "T-2"}) {
		t.Fatalf("turn ids %q, want [T-1 T-2] (sorted)", ids)
	}
}

// FuzzEachTurn: any bytes are read without panic or an offset outside them,
// and the turns of a list read without error, written again by appendTurn,
// read back the same (a length written in more bytes than it needs reads
// fine, so the bytes themselves may differ).
func FuzzEachTurn(f *testing.F) {
	f.Add(sampleList())
	f.Add([]byte{})
	f.Add([]byte{0x80})
	f.Add(append([]byte{0x83, 0x00, 'a', 'b', 'c'}, make([]byte, digestLen)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		read := func(b []byte) (turns []string, err error) {
			err = eachTurn(b, func(id []byte, at int) {
				if at < 0 || at+digestLen > len(b) {
					t.Fatalf("digest offset %d out of %d bytes", at, len(b))
				}
				turns = append(turns, string(id)+"="+hex.EncodeToString(b[at:at+digestLen]))
			})
			return turns, err
		}
		turns, err := read(b)
		if err != nil {
			if !errors.Is(err, errTurnList) {
				t.Fatalf("err %v, want errTurnList", err)
			}
			return
		}
		var out []byte
		eachTurn(b, func(id []byte, at int) { out = appendTurn(out, string(id), (*[digestLen]byte)(b[at:at+digestLen])) })
		again, err := read(out)
		if err != nil || !reflect.DeepEqual(again, turns) {
			t.Fatalf("%x read %q; written again %x read %q (%v)", b, turns, out, again, err)
		}
	})
}
