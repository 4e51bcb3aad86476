package evalrun_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
	"evident/persona/evalrun"
)

func sp(s string) *string { return &s }

func rec(id string, v persona.Verdict) persona.Record {
	return persona.Record{TurnID: id, Verdict: v, Evidence: []persona.Evidence{}}
}

// speechRec is a 말투 어긋남 record citing reply and quoting words in summary
// the way the judge's default sentence does.
func speechRec(id, observed, expected, reply, summary string) persona.Record {
	r := rec(id, persona.SpeechOff)
	r.RuleObserved, r.RuleExpected = sp(observed), sp(expected)
	r.Evidence = []persona.Evidence{
		{Source: persona.SourceTurn, Field: "reply_text", Value: reply},
		{Source: persona.SourceTurn, Field: "reply_text", Agg: persona.AggCount, Value: 1},
		{Source: persona.SourceCard, Field: "honorific_rule", Value: "반말"},
	}
	r.Summary = summary
	return r
}

func TestEvaluateConfusion(t *testing.T) {
	gold := []evalrun.Gold{
		{TurnID: "g1", Verdict: persona.Kept},
		{TurnID: "g2", Verdict: persona.Kept},
		{TurnID: "g3", Verdict: persona.SpeechOff},
		{TurnID: "g4", Verdict: persona.SpeechOff},
		{TurnID: "g5", Verdict: persona.ForbiddenTopic},
		{TurnID: "g6", Verdict: persona.OffCanon},
		{TurnID: "g7", Verdict: persona.Kept},         // no record
		{TurnID: "g8", Verdict: persona.Kept},         // record with an invented verdict
		{TurnID: "g1", Verdict: persona.SpeechOff},    // labelled twice: ignored
		{TurnID: "g9", Verdict: persona.Verdict("?")}, // invalid gold label
	}
	recs := []persona.Record{
		rec("g1", persona.Kept), rec("g2", persona.SpeechOff), rec("g3", persona.SpeechOff),
		rec("g4", persona.SpeechOff), rec("g5", persona.Kept), rec("g6", persona.OffCanon),
		rec("g8", persona.Verdict("모름")), rec("g9", persona.Kept),
		rec("g1", persona.ForbiddenTopic), // second record for g1: the first wins
		rec("zz", persona.Kept),           // not labelled: ignored
	}
	rep := evalrun.Evaluate(gold, recs)

	t.Run("counts only gold turns with a valid record", func(t *testing.T) {
		if rep.N != 6 || rep.Agreed != 4 {
			t.Errorf("N=%d Agreed=%d, want 6 and 4", rep.N, rep.Agreed)
		}
		if !reflect.DeepEqual(rep.Missing, []string{"g7"}) {
			t.Errorf("Missing = %v", rep.Missing)
		}
		if !reflect.DeepEqual(rep.Invalid, []string{"g8", "g1", "g9"}) {
			t.Errorf("Invalid = %v", rep.Invalid)
		}
	})
	t.Run("rows are gold and columns predicted in priority order", func(t *testing.T) {
		// Labels: 금지 소재 접촉, 세계관 밖 고유명사, 말투 어긋남, 앞 회차를 기억 못 함, 설정대로 말함.
		want := [][]int{
			{0, 0, 0, 0, 1}, // g5
			{0, 1, 0, 0, 0}, // g6
			{0, 0, 2, 0, 0}, // g3 g4
			{0, 0, 0, 0, 0},
			{0, 0, 1, 0, 1}, // g2, g1
		}
		if !reflect.DeepEqual(rep.Confusion, want) {
			t.Errorf("Confusion = %v, want %v", rep.Confusion, want)
		}
		if !reflect.DeepEqual(rep.Labels, persona.Verdicts) {
			t.Errorf("Labels = %v", rep.Labels)
		}
	})
	t.Run("agreement and kappa follow from the matrix", func(t *testing.T) {
		// p_o = 4/6 = 24/36; rows 1,1,2,0,2; cols 0,1,3,0,2;
		// p_e = (0 + 1 + 6 + 0 + 4)/36 = 11/36; κ = (24 − 11)/(36 − 11) = 13/25.
		if rep.Agreement == nil || *rep.Agreement != 4.0/6.0 {
			t.Errorf("Agreement = %v", rep.Agreement)
		}
		if rep.Kappa == nil || *rep.Kappa-0.52 > 1e-12 || 0.52-*rep.Kappa > 1e-12 {
			t.Errorf("Kappa = %v, want 0.52", rep.Kappa)
		}
		if iv, _ := evalrun.Wilson(4, 6); rep.Interval == nil || *rep.Interval != iv {
			t.Errorf("Interval = %v, want %v", rep.Interval, iv)
		}
	})
	t.Run("precision and recall are null where the denominator is zero", func(t *testing.T) {
		f := func(x float64) *float64 { return &x }
		want := []evalrun.VerdictScore{
			{Verdict: persona.ForbiddenTopic, Gold: 1, Predicted: 0, Correct: 0, Precision: nil, Recall: f(0)},
			{Verdict: persona.OffCanon, Gold: 1, Predicted: 1, Correct: 1, Precision: f(1), Recall: f(1)},
			{Verdict: persona.SpeechOff, Gold: 2, Predicted: 3, Correct: 2, Precision: f(2.0 / 3.0), Recall: f(1)},
			{Verdict: persona.RecallFailed, Gold: 0, Predicted: 0, Correct: 0, Precision: nil, Recall: nil},
			{Verdict: persona.Kept, Gold: 2, Predicted: 2, Correct: 1, Precision: f(0.5), Recall: f(0.5)},
		}
		if !reflect.DeepEqual(rep.PerVerdict, want) {
			b1, _ := json.Marshal(rep.PerVerdict)
			b2, _ := json.Marshal(want)
			t.Errorf("PerVerdict\n got %s\nwant %s", b1, b2)
		}
	})
	t.Run("the report encodes as JSON with nulls, not NaN", func(t *testing.T) {
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"precision":null`) {
			t.Errorf("no null precision in %s", b)
		}
	})
}

func TestEvaluateWithoutLabelledTurns(t *testing.T) {
	t.Run("no gold turn found leaves every number blank", func(t *testing.T) {
		rep := evalrun.Evaluate([]evalrun.Gold{{TurnID: "x", Verdict: persona.Kept}}, nil)
		if rep.N != 0 || rep.Agreement != nil || rep.Interval != nil || rep.Kappa != nil {
			t.Errorf("got %+v", rep)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"agreement":null`, `"interval":null`, `"kappa":null`, `"missing":["x"]`, `"disagreements":[]`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %s", b, want)
			}
		}
	})
	t.Run("perfect agreement on one verdict has an undefined kappa", func(t *testing.T) {
		rep := evalrun.Evaluate([]evalrun.Gold{{TurnID: "a", Verdict: persona.Kept}}, []persona.Record{rec("a", persona.Kept)})
		if rep.Kappa != nil || *rep.Agreement != 1 {
			t.Errorf("Kappa=%v Agreement=%v", rep.Kappa, *rep.Agreement)
		}
	})
}

func TestDisagreementGroups(t *testing.T) {
	forbidden := func(id string) persona.Record {
		r := rec(id, persona.ForbiddenTopic)
		r.TouchedTerm, r.TouchedTopic = sp("투표"), sp("현실 정치")
		return r
	}
	offCanon := rec("t8", persona.OffCanon)
	offCanon.OffCanonEntities = []string{"금성호", "해성호"}
	recall := rec("t9", persona.RecallFailed)
	recall.RecallTarget = sp("파랑이")
	recs := []persona.Record{
		speechRec("t1", "존댓말", "반말 · 나", "조심이 필요.", "답장 한 문장이 「필요」로 끝나 존댓말로 읽혔습니다."),
		speechRec("t2", "존댓말", "반말 · 나", "다음은 손목 각도가 중요.", "답장 한 문장이 「중요」로 끝나 존댓말로 읽혔습니다."),
		speechRec("t3", "존댓말", "반말 · 나", "됐어. 이건 꼭 필요!", "두 문장 가운데 한 문장이 「필요」로 끝나 존댓말로 읽혔습니다."),
		forbidden("t4"),
		rec("t5", persona.Kept),
		rec("t6", persona.Kept),
		forbidden("t7"),
		offCanon,
		recall,
		rec("t10", persona.Kept),
		// the first person 「저」 and the invented quote 「친구」 are not sentence endings
		speechRec("t11", "존댓말 · 저", "반말 · 나", "친구가 있어요 😊", "「있어요」로 끝나고 1인칭도 「저」를 써 「친구」 얘기를 했습니다."),
	}
	gold := []evalrun.Gold{
		{TurnID: "t1", Verdict: persona.Kept},
		{TurnID: "t2", Verdict: persona.Kept},
		{TurnID: "t3", Verdict: persona.Kept},
		{TurnID: "t4", Verdict: persona.Kept},
		{TurnID: "t5", Verdict: persona.RecallFailed},
		{TurnID: "t6", Verdict: persona.RecallFailed},
		{TurnID: "t7", Verdict: persona.SpeechOff},
		{TurnID: "t8", Verdict: persona.Kept},
		{TurnID: "t9", Verdict: persona.Kept},
		{TurnID: "t10", Verdict: persona.Kept},
		{TurnID: "t11", Verdict: persona.Kept},
	}
	rep := evalrun.Evaluate(gold, recs)
	type row struct {
		gold, pred persona.Verdict
		detail     string
		ids        []string
	}
	want := []row{
		{persona.RecallFailed, persona.Kept, "", []string{"t5", "t6"}},
		{persona.Kept, persona.SpeechOff, "존댓말 ≠ 반말 · 나; endings 「필요」", []string{"t1", "t3"}},
		{persona.SpeechOff, persona.ForbiddenTopic, "touched 「투표」 · 현실 정치", []string{"t7"}},
		{persona.Kept, persona.ForbiddenTopic, "touched 「투표」 · 현실 정치", []string{"t4"}},
		{persona.Kept, persona.OffCanon, "off-canon 「금성호」, 「해성호」", []string{"t8"}},
		{persona.Kept, persona.SpeechOff, "존댓말 · 저 ≠ 반말 · 나; endings 「있어요」", []string{"t11"}},
		{persona.Kept, persona.SpeechOff, "존댓말 ≠ 반말 · 나; endings 「중요」", []string{"t2"}},
		{persona.Kept, persona.RecallFailed, "recall 「파랑이」", []string{"t9"}},
	}
	t.Run("groups are keyed by gold, predicted and rule detail and sorted by count", func(t *testing.T) {
		if len(rep.Disagreements) != len(want) {
			t.Fatalf("%d groups, want %d: %+v", len(rep.Disagreements), len(want), rep.Disagreements)
		}
		for i, w := range want {
			g := rep.Disagreements[i]
			if g.Gold != w.gold || g.Predicted != w.pred || g.Detail != w.detail || !reflect.DeepEqual(g.TurnIDs, w.ids) || g.Count != len(w.ids) {
				t.Errorf("group %d = {%s %s %q %v %d}, want {%s %s %q %v}", i, g.Gold, g.Predicted, g.Detail, g.TurnIDs, g.Count, w.gold, w.pred, w.detail, w.ids)
			}
		}
	})
	t.Run("each group carries the structured detail of its predicted verdict", func(t *testing.T) {
		g := rep.Disagreements[1]
		if *g.RuleObserved != "존댓말" || *g.RuleExpected != "반말 · 나" || !reflect.DeepEqual(g.Endings, []string{"필요"}) || g.TouchedTerm != nil {
			t.Errorf("speech group: %+v", g)
		}
		if g := rep.Disagreements[3]; *g.TouchedTerm != "투표" || *g.TouchedTopic != "현실 정치" || g.RuleObserved != nil {
			t.Errorf("forbidden group: %+v", g)
		}
		if g := rep.Disagreements[4]; !reflect.DeepEqual(g.OffCanon, []string{"금성호", "해성호"}) {
			t.Errorf("off-canon group: %+v", g)
		}
		if g := rep.Disagreements[7]; *g.RecallTarget != "파랑이" {
			t.Errorf("recall group: %+v", g)
		}
		if g := rep.Disagreements[0]; g.RuleObserved != nil || g.TouchedTerm != nil || g.OffCanon != nil || g.RecallTarget != nil {
			t.Errorf("kept group carries a detail: %+v", g)
		}
	})
	t.Run("agreeing turns form no group", func(t *testing.T) {
		if rep.Agreed != 1 || rep.N != 11 {
			t.Errorf("Agreed=%d N=%d", rep.Agreed, rep.N)
		}
	})
}
