package evalrun_test

import (
	"reflect"
	"testing"

	"evident/persona"
	"evident/persona/evalrun"
)

func TestCompareModels(t *testing.T) {
	type ans struct {
		turn, model, prompt string
		v                   persona.Verdict
	}
	K, S, O, F, R := persona.Kept, persona.SpeechOff, persona.OffCanon, persona.ForbiddenTopic, persona.RecallFailed
	rows := []ans{
		{"1a", "a", "P1", K}, {"1b", "b", "P1", S}, {"1c", "c", "P1", K},
		{"2a", "a", "P2", K}, {"2b", "b", "P2", O}, {"2c", "c", "P2", F},
		{"3a", "a", "P3", S}, {"3b", "b", "P3", K}, // c did not answer P3
		{"4a", "a", "P4", K}, {"4b", "b", "P4", R}, {"4c", "c", "P4", K},
		{"5a", "a", "P5", S},                                              // only a: not shared
		{"6a", "a", "P6", K}, {"6a2", "a", "P6", S}, {"6c", "c", "P6", K}, // a twice: the first counts
		{"7b", "b", "", S}, // no prompt
		{"8c", "c", "P1", persona.Verdict("모름")},
	}
	var recs []persona.Record
	promptOf := map[string]string{}
	for _, r := range rows {
		rec := persona.Record{TurnID: r.turn, ModelID: r.model, Verdict: r.v}
		recs = append(recs, rec)
		if r.prompt != "" {
			promptOf[r.turn] = r.prompt
		}
	}
	rep := evalrun.CompareModels(recs, promptOf)

	t.Run("only prompts answered by two or more models count", func(t *testing.T) {
		if rep.Prompts != 5 {
			t.Errorf("Prompts = %d, want 5 (P1 P2 P3 P4 P6)", rep.Prompts)
		}
	})
	t.Run("each model gets its mismatch rate with a Wilson interval", func(t *testing.T) {
		// a: P1 K, P2 K, P3 S, P4 K, P6 K → 1/5; b: P1 S, P2 O, P3 K, P4 R → 3/4;
		// c: P1 K, P2 F, P4 K, P6 K → 1/4.
		want := []evalrun.ModelRate{
			{Model: "a", N: 5, Mismatches: 1, Rate: 0.2},
			{Model: "b", N: 4, Mismatches: 3, Rate: 0.75},
			{Model: "c", N: 4, Mismatches: 1, Rate: 0.25},
		}
		for i := range want {
			want[i].Interval, _ = evalrun.Wilson(want[i].Mismatches, want[i].N)
		}
		if !reflect.DeepEqual(rep.Models, want) {
			t.Errorf("Models = %+v\nwant %+v", rep.Models, want)
		}
	})
	t.Run("each pair gets discordant counts and McNemar's exact p", func(t *testing.T) {
		// a–b on P1..P4: (K,S) (K,O) (S,K) (K,R) → b=1, c=3; p = 2·(1+4)/2⁴ = 0.625.
		// a–c on P1 P2 P4 P6: (K,K) (K,F) (K,K) (K,K) → b=0, c=1; p = min(1, 2·1/2) = 1.
		// b–c on P1 P2 P4: (S,K) (O,F) (R,K) → b=2, c=0, both 1; p = 2·1/2² = 0.5.
		want := []evalrun.ModelPair{
			{ModelA: "a", ModelB: "b", N: 4, Both: 0, Neither: 0, B: 1, C: 3, P: 0.625},
			{ModelA: "a", ModelB: "c", N: 4, Both: 0, Neither: 3, B: 0, C: 1, P: 1},
			{ModelA: "b", ModelB: "c", N: 3, Both: 1, Neither: 0, B: 2, C: 0, P: 0.5},
		}
		if !reflect.DeepEqual(rep.Pairs, want) {
			t.Errorf("Pairs = %+v\nwant %+v", rep.Pairs, want)
		}
	})
	t.Run("no shared prompt gives empty lists", func(t *testing.T) {
		r := evalrun.CompareModels(recs[:1], promptOf)
		if r.Prompts != 0 || r.Models == nil || len(r.Models) != 0 || r.Pairs == nil || len(r.Pairs) != 0 {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("PromptsOf keeps turns that have a prompt", func(t *testing.T) {
		got := evalrun.PromptsOf([]persona.Turn{{TurnID: "x", PromptID: "P1"}, {TurnID: "y"}})
		if !reflect.DeepEqual(got, map[string]string{"x": "P1"}) {
			t.Errorf("got %v", got)
		}
	})
}
