package persona

import "testing"

// Check given the judge's own findings (Context.Findings) answers what it
// answers computing them, on records of every verdict; and it does read
// them: findings that disagree with the record fail the rule checks.
func TestCheckWithTheJudgesFindings(t *testing.T) {
	j := newTestJudge(t, nil)
	turns := []Turn{
		turn("T1", "알았어. 내일 보자."),
		turn("T2", "알았어. 내일 봬요."),
		turn("T3", "먹쇠가 왔어."),
		turn("T4", "선거 얘기는 그만하자."),
	}
	turns[2].NamedEntities = []string{"먹쇠"}
	want := []Verdict{Kept, SpeechOff, OffCanon, ForbiddenTopic}
	for i := range turns {
		tu := &turns[i]
		rec, f, err := j.JudgeFindings(tu, i, nil)
		if err != nil {
			t.Fatal(err)
		}
		if plain, _ := j.Judge(tu, i, nil); plain.Verdict != rec.Verdict || plain.Summary != rec.Summary || rec.Verdict != want[i] {
			t.Fatalf("%s: JudgeFindings gave %s %q, Judge %s %q, want %s", tu.TurnID, rec.Verdict, rec.Summary, plain.Verdict, plain.Summary, want[i])
		}
		given := j.Check(&rec, Context{Turn: tu, Pos: i, Findings: &f})
		computed := j.Check(&rec, Context{Turn: tu, Pos: i})
		if given != computed {
			t.Errorf("%s (%s): with the judge's findings %+v, computed %+v", tu.TurnID, rec.Verdict, given, computed)
		}
		for _, r := range given {
			if !r.Pass {
				t.Errorf("%s: the judge's own record fails check %d: %s", tu.TurnID, r.ID, r.Reason)
			}
		}
	}
	rec, f, err := j.JudgeFindings(&turns[0], 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != Kept {
		t.Fatalf("T1: %s, want %s", rec.Verdict, Kept)
	}
	f.Verdict, f.StyleOff = SpeechOff, true
	res := j.Check(&rec, Context{Turn: &turns[0], Pos: 0, Findings: &f})
	if res[CheckStyle-1].Pass {
		t.Errorf("findings that say %s for a kept record: check %d passed", SpeechOff, CheckStyle)
	}
}
