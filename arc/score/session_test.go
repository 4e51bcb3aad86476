package score

import (
	"reflect"
	"strings"
	"testing"

	"evident/arc/session"
)

func md(step, code int, state string, lc int) session.Metadata {
	return session.Metadata{StepIndex: step, State: state, LevelsCompleted: lc, ActionInput: &session.ActionInput{ID: session.ActionIDFromCode(code)}}
}

func TestSessionUpdates(t *testing.T) {
	nf := StateNotFinished
	t.Run("RESETs are full when nothing was done since the level began, level RESETs otherwise", func(t *testing.T) {
		// level 1 attempt 1: opening RESET (0), ACTION1 (1), completes level 1 (2);
		// level 2 attempt 1 opens with step 2's response (skipped), ACTION1 (3);
		// level 2 attempt 2: RESET (4, level); level 1 attempt 2: RESET (5, full).
		s := &session.Session{Levels: []session.Level{
			{Index: 1, Attempts: []session.Attempt{
				{InitialMetadata: md(0, 0, nf, 0), Steps: []session.Step{{Metadata: md(1, 1, nf, 0)}, {Metadata: md(2, 1, nf, 1)}}},
				{InitialMetadata: md(5, 0, nf, 0)},
			}},
			{Index: 2, Attempts: []session.Attempt{
				{InitialMetadata: md(2, 1, nf, 1), Steps: []session.Step{{Metadata: md(3, 1, nf, 1)}}},
				{InitialMetadata: md(4, 0, nf, 1)},
			}},
		}}
		got, err := SessionUpdates(s)
		want := []Update{
			{Action: 0, FullReset: true, State: nf}, {Action: 1, State: nf}, {Action: 1, State: nf, LevelsCompleted: 1},
			{Action: 1, State: nf, LevelsCompleted: 1}, {Action: 0, State: nf, LevelsCompleted: 1}, {Action: 0, FullReset: true, State: nf},
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%v\n%+v", err, got)
		}
		c := Replay("g", got)
		if len(c.Runs) != 2 || c.Runs[0].Actions != 4 || c.Runs[0].Resets != 1 || !reflect.DeepEqual(c.Runs[0].Marks, []Mark{{1, 2}}) {
			t.Fatalf("runs %+v", c.Runs)
		}
	})
	t.Run("a RESET right after a level RESET restarts the game", func(t *testing.T) {
		s := &session.Session{Levels: []session.Level{{Index: 1, Attempts: []session.Attempt{
			{InitialMetadata: md(0, 0, nf, 0), Steps: []session.Step{{Metadata: md(1, 2, StateGameOver, 0)}}},
			{InitialMetadata: md(2, 0, nf, 0)}, {InitialMetadata: md(3, 0, nf, 0)},
		}}}}
		got, _ := SessionUpdates(s)
		if len(got) != 4 || got[2].FullReset || !got[3].FullReset {
			t.Fatalf("%+v", got)
		}
	})
	for _, c := range []struct {
		name string
		s    *session.Session
		err  string
	}{
		{"an empty session", &session.Session{}, "records no RESET or step"},
		{"two responses with one step_index", &session.Session{Levels: []session.Level{{Attempts: []session.Attempt{
			{InitialMetadata: md(0, 0, nf, 0), InitialMetadataPath: "a/initial_metadata.json",
				Steps: []session.Step{{Metadata: md(0, 1, nf, 0), MetadataPath: "a/step_0001_metadata.json"}}}}}}},
			"a/initial_metadata.json and a/step_0001_metadata.json: both have step_index 0"},
		{"a first response that is not RESET", &session.Session{Levels: []session.Level{{Attempts: []session.Attempt{
			{InitialMetadata: md(0, 0, nf, 0), Steps: []session.Step{{Metadata: md(-1, 1, nf, 0), MetadataPath: "s1"}}}}}}},
			"s1: the first recorded response (step_index -1) is ACTION1"},
	} {
		t.Run(c.name+" is an error", func(t *testing.T) {
			if _, err := SessionUpdates(c.s); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
		})
	}
}
