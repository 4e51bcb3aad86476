package batch

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"evident/persona"
)

// recordJSONBytes is the reference: what the run wrote before issue 18.
func recordJSONBytes(t testing.TB, rec *persona.Record) []byte {
	var b bytes.Buffer
	if err := recordJSON.NewEncoder(&b).Encode(rec); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAppendRecordBytes: persona.AppendRecord writes the bytes json-iterator wrote,
// for the seed's records and for records full of awkward text.
func TestAppendRecordBytes(t *testing.T) {
	dir := "../testdata/seed"
	recs, _, _ := run(t, mustInput(t, filepath.Join(dir, "turns.jsonl")),
		mustInput(t, filepath.Join(dir, "cards.json")), mustInput(t, filepath.Join(dir, "lexicon.csv")))
	if len(recs) == 0 {
		t.Fatal("no seed records")
	}
	for i := range recs { // read back as JSON: counts came back as float64, the judge writes int
		for k, e := range recs[i].Evidence {
			if f, ok := e.Value.(float64); ok {
				recs[i].Evidence[k].Value = int(f)
			}
		}
	}
	s := func(v string) *string { return &v }
	odd := recs[0]
	odd.Summary = "<script>&\u2028\u2029\x00\x01\x08\x0c\x1f\x7f\t\r\n\"\\/ 😊 하늘"
	odd.Hedge = s("\"")
	odd.OffCanonEntities = nil
	odd.Evidence = append(odd.Evidence, persona.Evidence{Source: persona.SourceTurn, Field: "reply_text", Agg: persona.AggCount, Value: -3},
		persona.Evidence{Field: "x", Value: true}, persona.Evidence{Field: "y", Value: false}, persona.Evidence{Field: "z", Value: (*string)(nil)},
		persona.Evidence{Field: "w", Value: s("\x02")})
	empty := persona.Record{}
	recs = append(recs, odd, empty)

	// Random strings over the bytes that need escapes and multi-byte text.
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "가", "\u2028", "😊", "/", "<", "&"}
	word := func() string {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		return string(b)
	}
	for range 500 {
		r := persona.Record{TurnID: word(), SessionID: word(), CharacterID: word(), ModelID: word(),
			Verdict: persona.Verdict(word()), RuleExpected: s(word()), Summary: word(),
			OffCanonEntities: []string{word(), word()}, Evidence: []persona.Evidence{{Source: persona.Source(word()), Field: word(), Agg: persona.Agg(word()), Value: word()}}}
		if rng.IntN(2) == 0 {
			r.RuleObserved, r.TouchedTerm, r.TouchedTopic, r.RecallTarget, r.RecallSourceTurn, r.Hedge = s(word()), s(word()), s(word()), s(word()), s(word()), s(word())
		}
		recs = append(recs, r)
	}
	for i := range recs {
		want := recordJSONBytes(t, &recs[i])
		got, ok := persona.AppendRecord([]byte("prefix"), &recs[i])
		if !ok {
			t.Fatalf("record %d: persona.AppendRecord declined it", i)
		}
		if !bytes.Equal(got[len("prefix"):], want) || string(got[:len("prefix")]) != "prefix" {
			t.Fatalf("record %d:\npersona.AppendRecord %s\njson-iterator %s", i, got, want)
		}
	}
}

// TestAppendRecordDeclinesOtherValues: an evidence value of a type the judge
// never writes is left to json-iterator, through encodeRecord.
func TestAppendRecordDeclinesOtherValues(t *testing.T) {
	rec := persona.Record{TurnID: "t", Evidence: []persona.Evidence{{Field: "f", Value: 1.5}}}
	got, ok := persona.AppendRecord([]byte("x"), &rec)
	if ok || string(got) != "x" {
		t.Fatalf("persona.AppendRecord = %q, %v; want it to decline and leave the buffer as it was", got, ok)
	}
	var out []byte
	if err := encodeRecord(&out, &rec); err != nil {
		t.Fatal(err)
	}
	if want := recordJSONBytes(t, &rec); !bytes.Equal(out, want) {
		t.Fatalf("encodeRecord = %s, want %s", out, want)
	}
}

// TestAppendRecordDeclinesInvalidUTF8: a string that is not UTF-8 (a record
// built outside the readers, which check every cell) is declined wherever
// it sits, so a caller's reflection encoder decides what to write (the
// store's encoding/json replaces such bytes with U+FFFD).
func TestAppendRecordDeclinesInvalidUTF8(t *testing.T) {
	bad := "a\xffb"
	for name, rec := range map[string]persona.Record{
		"summary":          {TurnID: "t", Summary: bad},
		"hedge":            {TurnID: "t", Hedge: &bad},
		"off-canon name":   {TurnID: "t", OffCanonEntities: []string{"ok", bad}},
		"evidence value":   {TurnID: "t", Evidence: []persona.Evidence{{Field: "f", Value: bad}}},
		"evidence *string": {TurnID: "t", Evidence: []persona.Evidence{{Field: "f", Value: &bad}}},
	} {
		if got, ok := persona.AppendRecord([]byte("x"), &rec); ok || string(got) != "x" {
			t.Errorf("%s: persona.AppendRecord = %q, %v; want it to decline", name, got, ok)
		}
	}
}
