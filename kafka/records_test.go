package kafka

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"evident/persona"
	"evident/persona/live"
)

// sampleIDs are turn_ids and session_ids that a key must carry as they are:
// plain ASCII, a quote, a backslash, a control character, Hangul, HTML
// characters, the empty string.
var sampleIDs = []string{"T-1", `q"uote`, `back\slash`, "tab\there", "한글-2", "<a&b>", ""}

func sampleDigest(i int) (d [digestLen]byte) {
	for k := range d {
		d[k] = byte(i*31 + k)
	}
	return d
}

// A turn record's key splits back into its session_id and turn_id, for
// every pair of sample ids, and a state record's key (a session_id alone)
// is no turn record's; its value reads back its digest and seq, at seqs
// that take one to five varint bytes.
func TestATurnRecordReadsBackItsSessionTurnDigestAndSeq(t *testing.T) {
	for i, session := range sampleIDs {
		for j, turnID := range sampleIDs {
			k := appendTurnKey(nil, session, turnID)
			s, id, ok := splitTurnKey(k)
			if !ok || s != session || id != turnID {
				t.Fatalf("key %q split to %q %q %v, want %q %q", k, s, id, ok, session, turnID)
			}
			d := sampleDigest(i*7 + j)
			for _, seq := range []int{0, 127, 128, 1 << 21, math.MaxInt32} {
				gotSeq, gotD, err := decodeTurnValue(appendTurnValue(nil, &d, seq))
				if err != nil || gotSeq != int64(seq) || !bytes.Equal(gotD, d[:]) {
					t.Fatalf("seq %d: read back %d %x (%v)", seq, gotSeq, gotD, err)
				}
			}
		}
		if _, _, ok := splitTurnKey([]byte(session)); ok {
			t.Fatalf("state key %q read as a turn record's", session)
		}
	}
}

// A turn record's value that is not a digest and one varint seq is refused
// with errTurnValue, whatever is wrong with it.
func TestAMalformedTurnRecordIsRefused(t *testing.T) {
	d := sampleDigest(1)
	good := appendTurnValue(nil, &d, 300) // two varint bytes
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"a digest without its seq", good[:digestLen]},
		{"a value shorter than a digest", good[:10]},
		{"a seq cut inside its varint", good[:digestLen+1]},
		{"a byte after the seq", append(append([]byte{}, good...), 0)},
		{"a seq past the largest arrival position", appendTurnValue(nil, &d, math.MaxInt32+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := decodeTurnValue(tc.v); !errors.Is(err, errTurnValue) {
				t.Fatalf("err %v, want errTurnValue", err)
			}
		})
	}
}

// FuzzDecodeTurnValue: any bytes are read without panic, and a value read
// without error, written again, is the same bytes (one encoding per value).
func FuzzDecodeTurnValue(f *testing.F) {
	d := sampleDigest(2)
	f.Add(appendTurnValue(nil, &d, 0))
	f.Add(appendTurnValue(nil, &d, 1<<20))
	f.Add([]byte{})
	f.Add(append(d[:], 0x80))
	f.Fuzz(func(t *testing.T, v []byte) {
		seq, dg, err := decodeTurnValue(v)
		if err != nil {
			return
		}
		again := appendTurnValue(nil, (*[digestLen]byte)(dg), int(seq))
		if !bytes.Equal(again, v) {
			t.Fatalf("%x read as seq %d, written again %x", v, seq, again)
		}
	})
}

// sampleState is a state of 7 turns naming 도윤 in its first.
func sampleState(t *testing.T) *live.State {
	t.Helper()
	reply := "동생 도윤이가 있어."
	r := live.Restore(live.Header{Turns: 7, Latest: &live.Stamp{TurnID: "T-1", CreatedAt: "2026-10-03T21:00:00+09:00"}})
	r.Cite(live.Cited{Seq: 0, TurnID: "T-1", ReplyText: &reply})
	r.Mention("도윤", live.Firsts{ByArrival: 0, ByTime: 0})
	st, err := r.State()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A state record's value is sessionState's JSON with the live state inside
// as json.Marshal writes it, and nothing else: it decodes to the same state,
// with no turns (those are turn records now).
func TestAStateRecordsValueIsTheLiveStateInsideSessionStatesJSON(t *testing.T) {
	st := sampleState(t)
	lb, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	v, gotLive := appendStateValue(nil, st)
	if !bytes.Equal(gotLive, lb) {
		t.Fatalf("live state %s, want json.Marshal's %s", gotLive, lb)
	}
	if want := `{"live":` + string(lb) + `}`; string(v) != want {
		t.Fatalf("value %s, want %s", v, want)
	}
	var got sessionState
	if err := json.Unmarshal(v, &got); err != nil {
		t.Fatal(err)
	}
	if again := got.Live.AppendJSON(nil); !bytes.Equal(again, lb) || got.Turns != nil {
		t.Fatalf("decoded to %s with turns %v, want %s and none", again, got.Turns, lb)
	}
}

// Each kind of changelog record becomes its local store rows: a state
// record its session's row; an earlier version's state (its turns inside)
// that row and a row per turn at seq 0; a turn record its turn's row; a
// tombstone of either a delete. A record that cannot be read gives no row
// (it is logged), and neither does an earlier state with one bad digest.
func TestEachChangelogRecordBecomesItsLocalRows(t *testing.T) {
	st := sampleState(t)
	lb := st.AppendJSON(nil)
	stateValue, _ := appendStateValue(nil, st)
	d1, d2 := sampleDigest(1), sampleDigest(2)
	old, err := json.Marshal(map[string]any{"live": st, "turns": map[string]string{"T-2": hex.EncodeToString(d2[:]), "T-1": hex.EncodeToString(d1[:])},
		"pending": map[string]string{"T-2": "{}"}})
	if err != nil {
		t.Fatal(err)
	}
	badOld := bytes.Replace(old, []byte(hex.EncodeToString(d1[:])), []byte(strings.Repeat("zz", digestLen)), 1)
	c := &Consumer{cfg: Config{Log: log.New(io.Discard, "", 0)}}
	for _, tc := range []struct {
		name string
		key  string
		v    []byte
		want []localWrite
	}{
		{"a state record", "S", stateValue, []localWrite{{session: "S", live: lb}}},
		{"an earlier version's state", "S", old, []localWrite{{session: "S", live: lb},
			{session: "S", isTurn: true, turnID: "T-1", digest: d1[:]}, {session: "S", isTurn: true, turnID: "T-2", digest: d2[:]}}},
		{"a turn record", "S\xffT-1", appendTurnValue(nil, &d1, 5), []localWrite{{session: "S", isTurn: true, turnID: "T-1", seq: 5, digest: d1[:]}}},
		{"a state's tombstone", "S", nil, []localWrite{{session: "S", del: true}}},
		{"a turn's tombstone", "S\xffT-1", nil, []localWrite{{session: "S", isTurn: true, turnID: "T-1", del: true}}},
		{"a state that is not JSON", "S", []byte("{"), nil},
		{"an earlier state with a digest that is not hex", "S", badOld, nil},
		{"a turn record cut short", "S\xffT-1", d1[:8], nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.restoreRecord(nil, &kgo.Record{Key: []byte(tc.key), Value: tc.v})
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("rows %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// A dead letter fits whatever it rejects: its value is cut to
// DeadValueBytes and its key to 1 KiB, each cut one with its original size
// and SHA-256 in headers; its reason is cut to 1 KiB on a character
// boundary, with "…"; and the largest one New allows is within the message
// limit.
func TestADeadLetterIsCutToItsCapsAndCarriesTheOriginalsSizeAndSHA256(t *testing.T) {
	cfg := Config{Topic: "chat_turns", DeadTopic: "chat_turns-dead", DeadValueBytes: 100, MaxMessageBytes: 4000, Log: log.New(io.Discard, "", 0)}
	c := &Consumer{cfg: cfg}
	sha := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	bigKey := bytes.Repeat([]byte("k"), 5000)
	for _, tc := range []struct {
		name                         string
		key, value                   []byte
		reason                       string
		wantKey, wantValue, wantReas string
		keyHeaders                   bool
	}{
		{"a small record, whole", []byte("S"), []byte("not json"), "not a chat_turn row", "S", "not json", "not a chat_turn row", false},
		{"a long value, cut", []byte("S"), bytes.Repeat([]byte("v"), 9_000_000), "too large", "S", strings.Repeat("v", 100), "too large", false},
		{"a long key, cut", bigKey, []byte("x"), "key", strings.Repeat("k", 1024), "x", "key", true},
		{"a long reason, cut between characters", []byte("S"), nil, strings.Repeat("가", 400), "S", "", strings.Repeat("가", 340) + "…", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.dead(&kgo.Record{Topic: "chat_turns", Partition: 3, Offset: 77, Key: tc.key, Value: tc.value}, tc.reason)
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			if r.Topic != "chat_turns-dead" || string(r.Key) != tc.wantKey || string(r.Value) != tc.wantValue || h["reason"] != tc.wantReas {
				t.Fatalf("dead letter to %s key %.40q value %.40q reason %.40q", r.Topic, r.Key, r.Value, h["reason"])
			}
			want := map[string]string{"topic": "chat_turns", "partition": "3", "offset": "77",
				"original_size": strconv.Itoa(len(tc.value)), "original_sha256": sha(tc.value), "reason": tc.wantReas}
			if tc.keyHeaders {
				want["original_key_size"], want["original_key_sha256"] = strconv.Itoa(len(tc.key)), sha(tc.key)
			}
			if !reflect.DeepEqual(h, want) {
				t.Fatalf("headers %v\nwant %v", h, want)
			}
			if n := batchBytes(r); n > batchBytes(largestDeadLetter(&cfg)) {
				t.Fatalf("a dead letter of %d bytes, over the %d of the largest", n, batchBytes(largestDeadLetter(&cfg)))
			}
		})
	}
}

// New refuses a message limit that cannot hold the largest dead letter, or
// one over Kafka's 1 GiB, naming the numbers; the defaults hold.
func TestNewRefusesAMessageLimitThatCannotHoldADeadLetter(t *testing.T) {
	base := Config{Brokers: []string{"127.0.0.1:1"}, Topic: "chat_turns", Group: "g", OutTopic: "v", Judge: &persona.Judge{}}
	for _, tc := range []struct {
		name            string
		maxMsg, deadVal int
		want            string
	}{
		{"a limit below a dead letter of the default cap", 60_000, 0, "the message limit of 60000 bytes cannot hold a dead letter carrying 65536 bytes of its value"},
		{"a cap above the default limit", 0, 1_000_000, "the message limit of 1000000 bytes cannot hold a dead letter carrying 1000000 bytes"},
		{"a limit over 1 GiB", 2 << 30, 0, "Kafka takes at most 1073741824"},
		{"a negative cap", 0, -1, "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.MaxMessageBytes, cfg.DeadValueBytes = tc.maxMsg, tc.deadVal
			c, err := New(cfg)
			if err == nil {
				c.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v; want an error containing %q", err, tc.want)
			}
		})
	}
	c, err := New(base)
	if err != nil {
		t.Fatalf("New with the defaults: %v", err)
	}
	c.Close()
	if got, limit := batchBytes(largestDeadLetter(&c.cfg)), DefaultMaxMessageBytes; got > limit {
		t.Fatalf("the largest default dead letter is %d bytes, over %d", got, limit)
	}
}

// A local store writes turn rows in statements of turnChunk rows; whatever
// the chunks, every row reads back, and a turn written twice in one write
// (in one chunk, or in two) keeps the later seq and digest, as one
// statement a row would; a session's delete in between drops its rows
// written before it.
func TestLocalTurnRowsWrittenInChunksReadBackTheLastWritten(t *testing.T) {
	ctx := t.Context()
	s, err := openLocal(ctx, t.TempDir()+"/s.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var ws []localWrite
	want := map[string]int64{}
	put := func(session, id string, seq int64) {
		d := sampleDigest(int(seq))
		ws = append(ws, localWrite{session: session, isTurn: true, turnID: id, seq: seq, digest: d[:]})
		want[session+"/"+id] = seq
	}
	for i := range 2*turnChunk + 5 {
		put("A", strconv.Itoa(i%(turnChunk+10)), int64(i)) // each id again 74 writes later: in the next chunk
	}
	put("A", "1", 500) // twice in the last chunk
	put("A", "1", 501)
	put("B", "x", 7)
	ws = append(ws, localWrite{session: "B", del: true})
	delete(want, "B/x")
	put("B", "y", 8)
	if err := s.write(ctx, ws, 1); err != nil {
		t.Fatal(err)
	}
	for k, seq := range want {
		session, id, _ := strings.Cut(k, "/")
		got, d, ok, err := s.turn(ctx, session, id)
		if err != nil || !ok || got != seq || d != sampleDigest(int(seq)) {
			t.Fatalf("%s: seq %d ok %v (%v), want seq %d and its digest", k, got, ok, err, seq)
		}
	}
	if _, _, ok, _ := s.turn(ctx, "B", "x"); ok {
		t.Fatal("B/x was deleted with its session, but reads back")
	}
}
