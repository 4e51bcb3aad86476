package evalrun

import (
	"reflect"
	"testing"

	"evident/persona"
)

func rec(turn, character, model string, v persona.Verdict) persona.Record {
	return persona.Record{TurnID: turn, CharacterID: character, ModelID: model, Verdict: v}
}

func TestFindDisagreements(t *testing.T) {
	recs := []persona.Record{
		rec("t1", "C1", "m-a", persona.Kept),           // 0  p1
		rec("t2", "C1", "m-b", persona.SpeechOff),      // 1  p1: differs
		rec("t3", "C1", "m-a", persona.Kept),           // 2  p2
		rec("t4", "C1", "m-b", persona.Kept),           // 3  p2: agrees
		rec("t5", "C2", "m-c", persona.OffCanon),       // 4  p3
		rec("t6", "C2", "m-a", persona.OffCanon),       // 5  p3: agrees on the first records
		rec("t7", "C2", "m-a", persona.Kept),           // 6  p3: m-a's second answer does not count
		rec("t8", "C1", "m-a", persona.ForbiddenTopic), // 7  p4: one model only
		rec("t9", "C1", "m-b", persona.Verdict("??")),  // 8  p4: invalid, skipped
		rec("t10", "C2", "m-c", persona.Kept),          // 9  no prompt
	}
	prompts := map[string]string{"t1": "p1", "t2": "p1", "t3": "p2", "t4": "p2", "t5": "p3", "t6": "p3", "t7": "p3", "t8": "p4", "t9": "p4"}
	t.Run("only p1 disagrees; p3 counts each model's first record", func(t *testing.T) {
		got := FindDisagreements(recs, prompts, "")
		want := Disagreements{Shared: 3, Models: []string{"m-a", "m-b"},
			Prompts: []SharedPrompt{{PromptID: "p1", Models: []string{"m-a", "m-b"}, First: map[string]int{"m-a": 0, "m-b": 1}}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("a character filter keeps that character's prompts only", func(t *testing.T) {
		got := FindDisagreements(recs, prompts, "C2")
		if got.Shared != 1 || len(got.Prompts) != 0 {
			t.Errorf("got %+v, want 1 shared prompt (p3) and no disagreement", got)
		}
	})
	t.Run("CompareModels counts the same shared prompts", func(t *testing.T) {
		if got := CompareModels(recs, prompts).Prompts; got != 3 {
			t.Errorf("CompareModels counts %d shared prompts, want 3", got)
		}
	})
}

func TestCompareRuns(t *testing.T) {
	earlier := []persona.Record{
		rec("t1", "C1", "m", persona.Kept),
		rec("t2", "C1", "m", persona.SpeechOff),
		rec("t2", "C1", "m", persona.Kept), // a repeated turn: the first counts
		rec("t3", "C1", "m", persona.Kept),
	}
	later := []persona.Record{
		rec("t3", "C1", "m", persona.OffCanon),
		rec("t1", "C1", "m", persona.Kept),
		rec("t2", "C1", "m", persona.Kept),
		rec("t9", "C1", "m", persona.Kept), // not in the earlier run
	}
	want := []VerdictChange{
		{TurnID: "t3", Before: persona.Kept, After: persona.OffCanon, From: 3, To: 0},
		{TurnID: "t2", Before: persona.SpeechOff, After: persona.Kept, From: 1, To: 2},
	}
	if got := CompareRuns(earlier, later); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
