package demo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/demo"
	"evident/persona/ingest"
)

func run(t *testing.T) ([]persona.Record, []persona.Reject, persona.Tally) {
	t.Helper()
	j, rejects, err := batch.NewJudge(demo.Cards(), demo.Lexicon(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tally, err := (&batch.Run{Judge: j, Turns: demo.Turns()}).Do(context.Background(), batch.Outputs{Lines: &out, Reject: func(r persona.Reject) error { rejects = append(rejects, r); return nil }})
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

// TestDemo judges the embedded demo and compares every verdict with the
// hand reading in intended.tsv; every record must pass the ten checks.
func TestDemo(t *testing.T) {
	recs, rejects, tally := run(t)
	if len(rejects) > 0 {
		t.Fatalf("demo has rejects: %+v", rejects)
	}
	b, err := demo.Intended()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")[1:]
	if len(lines) != len(recs) {
		t.Fatalf("%d records, %d hand-read turns", len(recs), len(lines))
	}
	perChar := map[string]map[persona.Verdict]int{}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		r := recs[i]
		if r.TurnID != f[0] {
			t.Fatalf("record %d is %s, hand reading has %s (records must keep input order)", i, r.TurnID, f[0])
		}
		if string(r.Verdict) != f[1] {
			t.Errorf("%s: judge says %q, hand reading %q (%s)", f[0], r.Verdict, f[1], f[2])
		}
		if perChar[r.CharacterID] == nil {
			perChar[r.CharacterID] = map[persona.Verdict]int{}
		}
		perChar[r.CharacterID][r.Verdict]++
	}
	for _, v := range persona.Verdicts {
		if perChar["CHR-0100"][v] < 5 {
			t.Errorf("the public character has %d %q turns, want at least 5", perChar["CHR-0100"][v], v)
		}
	}
	if tally.Judged != len(recs) || tally.Rejected != 0 {
		t.Errorf("tally %v", tally)
	}

	// Every skip case occurs, each with a hedge that names it.
	hedges := map[string]int{}
	for _, r := range recs {
		if r.Hedge == nil {
			continue
		}
		for _, k := range []string{"답장이 비어 있어", "한글이 든 문장이 없어", "1인칭 비교는 건너뛰고", "세계관 대조",
			"관계어가 없어", "유저 메시지가 비어 있어", "채팅 서버는"} {
			if strings.Contains(*r.Hedge, k) {
				hedges[k]++
			}
		}
	}
	for _, k := range []string{"답장이 비어 있어", "한글이 든 문장이 없어", "1인칭 비교는 건너뛰고", "세계관 대조",
		"관계어가 없어", "유저 메시지가 비어 있어", "채팅 서버는"} {
		if hedges[k] < 2 {
			t.Errorf("skip case %q occurs %d times, want at least 2", k, hedges[k])
		}
	}

	// The ten checks pass on every demo record.
	var all bytes.Buffer
	enc := json.NewEncoder(&all)
	for i := range recs {
		_ = enc.Encode(&recs[i])
	}
	j, _, _ := batch.NewJudge(demo.Cards(), demo.Lexicon(), nil)
	rep, err := batch.Check(context.Background(), ingest.NewTable("verdicts.jsonl", ingest.JSONL, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(all.Bytes())), nil }), demo.Turns(), j)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Records != len(recs) {
		t.Errorf("checks on the demo: %d records, failures %+v", rep.Records, rep.Failures)
	}
}
