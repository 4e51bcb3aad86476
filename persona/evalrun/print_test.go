package evalrun

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"evident/persona"
)

func TestSummaryWriteText(t *testing.T) {
	gold := []Gold{{TurnID: "t1", Verdict: persona.Kept}, {TurnID: "t2", Verdict: persona.Kept}, {TurnID: "t9", Verdict: persona.Kept}}
	recs := []persona.Record{rec("t1", "C1", "m-a", persona.Kept), rec("t2", "C1", "m-b", persona.OffCanon)}
	recs[1].OffCanonEntities = []string{"금성호"}
	s := Summary{Run: 7, GoldFile: "gold.jsonl", Gold: 3, Report: Evaluate(gold, recs),
		Models: CompareModels(recs, map[string]string{"t1": "p1", "t2": "p1"})}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// 1 of 2 agree: Wilson 95 % of 1/2 is [0.0945, 0.9055].
	for _, want := range []string{
		"run #7 · 3 gold labels from gold.jsonl (stored)\n",
		"agreement 1/2 = 50.0 % (95 % Wilson 9.5 – 90.5 %)",
		"confusion (rows gold, columns predicted):\n",
		"    1  설정대로 말함 → 세계관 밖 고유명사 · off-canon 「금성호」: t2\n",
		"gold turns without a record in run #7: 1 (t9)\n",
		"models on 1 shared prompts (mismatch = verdict other than 설정대로 말함):\n",
		"  m-a vs m-b: n 1, only m-a 0, only m-b 1, both 0, neither 0, p = 1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestSummaryWriteJSONKeepsTheCLIShape(t *testing.T) {
	var b bytes.Buffer
	if err := (Summary{Run: 3, GoldFile: "g.jsonl", Gold: 0}).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run", "gold_file", "gold_labels", "agreement", "models"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing from %s", k, b.String())
		}
	}
}

func TestPadCountsHangulAsTwoColumns(t *testing.T) {
	for _, c := range []struct {
		name, s string
		width   int
		right   bool
		want    string
	}{
		{"two syllables take four columns", "기억", 8, true, "    기억"},
		{"left-aligned Latin text", "ab", 4, false, "ab  "},
		{"text wider than the column is kept whole", "세계관밖", 4, false, "세계관밖"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := pad(c.s, c.width, c.right); got != c.want {
				t.Errorf("pad(%q) = %q, want %q", c.s, got, c.want)
			}
		})
	}
}
