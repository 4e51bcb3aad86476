package runstore_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"evident/persona"
	"evident/persona/evalrun"
	"evident/runstore"
	"evident/store"
)

// The summary stored at judge time must hold the very figures the screen
// computed before over all records in memory (evalrun.CompareModels,
// FindDisagreements, runstore.Check, counts per verdict/character/model).
func TestTheStoredSummaryOfTheDemoEqualsTheInMemoryFigures(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	res, err := runstore.Run(ctx, db, demoTables(), runstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.StoredSummary(ctx, res.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := db.Records(ctx, res.Run.ID, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := db.Turns(ctx, res.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	prompts := evalrun.PromptsOf(turns)

	t.Run("counts per verdict, character and model match the records", func(t *testing.T) {
		byVerdict := map[persona.Verdict]int{}
		byChar := map[string]map[persona.Verdict]int{}
		for _, r := range recs {
			byVerdict[r.Verdict]++
			if byChar[r.CharacterID] == nil {
				byChar[r.CharacterID] = map[persona.Verdict]int{}
			}
			byChar[r.CharacterID][r.Verdict]++
		}
		if s.Records != len(recs) || s.Records != 195 {
			t.Fatalf("records %d, want %d (195 demo turns)", s.Records, len(recs))
		}
		for _, v := range persona.Verdicts {
			if s.ByVerdict[v] != byVerdict[v] {
				t.Errorf("%s: %d, want %d", v, s.ByVerdict[v], byVerdict[v])
			}
		}
		if len(s.Characters) != len(byChar) {
			t.Fatalf("%d characters, want %d", len(s.Characters), len(byChar))
		}
		for _, g := range s.Characters {
			for _, v := range persona.Verdicts {
				if g.ByVerdict[v] != byChar[g.Value][v] {
					t.Errorf("%s %s: %d, want %d", g.Value, v, g.ByVerdict[v], byChar[g.Value][v])
				}
			}
		}
	})
	t.Run("the per-model report equals evalrun.CompareModels", func(t *testing.T) {
		got, err := runstore.SummaryModels(s)
		if err != nil {
			t.Fatal(err)
		}
		want := evalrun.CompareModels(recs, prompts)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("stored\n%+v\nin memory\n%+v", got, want)
		}
		if got.Prompts == 0 || len(got.Pairs) == 0 {
			t.Fatalf("the demo has shared prompts and model pairs: %+v", got)
		}
	})
	t.Run("the disagreeing prompts equal evalrun.FindDisagreements, per character too", func(t *testing.T) {
		scopes := []string{""}
		for _, g := range s.Characters {
			scopes = append(scopes, g.Value)
		}
		for _, scope := range scopes {
			want := evalrun.FindDisagreements(recs, prompts, scope)
			st := s.Disagree[scope]
			if st.Shared != want.Shared || st.Prompts != len(want.Prompts) || !slices.Equal(st.Models, want.Models) {
				t.Errorf("scope %q: stored %+v, want shared %d, %d prompts, models %v", scope, st, want.Shared, len(want.Prompts), want.Models)
			}
			ids, err := db.Disagreements(ctx, res.Run.ID, scope, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var wantIDs []string
			for _, p := range want.Prompts {
				wantIDs = append(wantIDs, p.PromptID)
			}
			if !reflect.DeepEqual(ids, wantIDs) {
				t.Errorf("scope %q: prompts %v, want %v", scope, ids, wantIDs)
			}
		}
		if s.Disagree[""].Prompts != 42 || s.Disagree[""].Shared != 52 {
			t.Fatalf("whole run: %+v, want 42 of 52 shared prompts (FindDisagreements on the demo)", s.Disagree[""])
		}
		if s.Disagree[""].Prompts == 0 {
			t.Fatal("the demo has prompts on which models disagree")
		}
	})
	t.Run("the stored checks equal a fresh runstore.Check", func(t *testing.T) {
		got, err := runstore.SummaryChecks(s)
		if err != nil || got == nil {
			t.Fatalf("checks %v, %v (%s)", got, err, s.ChecksErr)
		}
		want, err := runstore.Check(ctx, db, res.Run)
		if err != nil {
			t.Fatal(err)
		}
		if got.Report.Records != 195 || got.Report.Pass != want.Pass || got.Report.Fail != want.Fail || got.Failures != len(want.Failures) {
			t.Fatalf("stored %+v, fresh %+v", got.Report, want)
		}
	})
	t.Run("the run is in the search index", func(t *testing.T) {
		ok, err := db.TextIndexed(ctx, res.Run.ID)
		if err != nil || !ok {
			t.Fatalf("indexed %v, %v", ok, err)
		}
	})
}
