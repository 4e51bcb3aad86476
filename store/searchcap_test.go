package store

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"evident/persona"
)

// Counts under a text search are bounded (issue 13): the first cap matching
// records in run order are counted and SearchCapped says more match.
func TestSearchCountsCoverTheFirstMatchesInRunOrder(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	turns, recs := synthSet(60)
	run := writeRun(t, db, testMeta, recs, turns)
	if err := db.IndexRunText(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	// "Coffee" is in the replies of turns 0, 7, 14, …, 56 (nine), verdicts
	// i%5 = 0, 2, 4, 1, 3, 0, 2, 4, 1. The first five are 0, 7, 14, 21, 28:
	// one of each verdict, characters i%3 = C0, C1, C2, C0, C1, models
	// i%2 = m0, m1, m0, m1, m0; the first eight leave out 56 (verdict 1, C2,
	// m0).
	one := map[persona.Verdict]int{}
	for _, v := range persona.Verdicts {
		one[v] = 1
	}
	tests := []struct {
		name       string
		cap        int
		filter     Filter
		capped     bool
		byVerdict  map[persona.Verdict]int
		characters map[string]int
		models     map[string]int
	}{
		{"a cap of 5 counts turns 0, 7, 14, 21 and 28 and says it is capped", 5, Filter{Text: "Coffee"}, true,
			one, map[string]int{"C0": 2, "C1": 2, "C2": 1}, map[string]int{"m0": 3, "m1": 2}},
		{"a verdict under a capped search counts its matches among the first 5", 5,
			Filter{Text: "Coffee", Verdict: persona.Verdicts[0]}, true,
			map[persona.Verdict]int{persona.Verdicts[0]: 1}, map[string]int{"C0": 1}, map[string]int{"m0": 1}},
		{"a two-letter query is capped the same way", 5, Filter{Text: "Co"}, true,
			one, map[string]int{"C0": 2, "C1": 2, "C2": 1}, map[string]int{"m0": 3, "m1": 2}},
		{"a cap of 8 counts 8 of the 9 and is capped", 8, Filter{Text: "coffee"}, true,
			map[persona.Verdict]int{persona.Verdicts[0]: 2, persona.Verdicts[1]: 1, persona.Verdicts[2]: 2, persona.Verdicts[3]: 1, persona.Verdicts[4]: 2},
			map[string]int{"C0": 3, "C1": 3, "C2": 2}, map[string]int{"m0": 4, "m1": 4}},
		{"a cap of exactly the 9 matches is exact, not capped", 9, Filter{Text: "Coffee"}, false,
			map[persona.Verdict]int{persona.Verdicts[0]: 2, persona.Verdicts[1]: 2, persona.Verdicts[2]: 2, persona.Verdicts[3]: 1, persona.Verdicts[4]: 2},
			map[string]int{"C0": 3, "C1": 3, "C2": 3}, map[string]int{"m0": 5, "m1": 4}},
		{"the default cap counts all 9 exactly", 0, Filter{Text: "Coffee"}, false,
			map[persona.Verdict]int{persona.Verdicts[0]: 2, persona.Verdicts[1]: 2, persona.Verdicts[2]: 2, persona.Verdicts[3]: 1, persona.Verdicts[4]: 2},
			map[string]int{"C0": 3, "C1": 3, "C2": 3}, map[string]int{"m0": 5, "m1": 4}},
		{"a filter without text is never capped", 5, Filter{Character: "C0"}, false,
			map[persona.Verdict]int{persona.Verdicts[0]: 4, persona.Verdicts[1]: 4, persona.Verdicts[2]: 4, persona.Verdicts[3]: 4, persona.Verdicts[4]: 4},
			map[string]int{"C0": 20}, map[string]int{"m0": 10, "m1": 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db.SetSearchCountCap(tt.cap)
			t.Cleanup(func() { db.SetSearchCountCap(0) })
			capped, err := db.SearchCapped(ctx, run.ID, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if capped != tt.capped {
				t.Errorf("SearchCapped = %v, want %v", capped, tt.capped)
			}
			v, err := db.CountByVerdict(ctx, run.ID, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			want := zeroVerdicts()
			for k, n := range tt.byVerdict {
				want[k] = n
			}
			if !reflect.DeepEqual(v, want) {
				t.Errorf("CountByVerdict = %v, want %v", v, want)
			}
			for _, c := range []struct {
				col  string
				want map[string]int
			}{{"character", tt.characters}, {"model", tt.models}} {
				gs, err := db.CountBy(ctx, run.ID, c.col, tt.filter)
				if err != nil {
					t.Fatal(err)
				}
				if got := totals(gs); !reflect.DeepEqual(got, c.want) {
					t.Errorf("CountBy %s = %v, want %v", c.col, got, c.want)
				}
			}
		})
	}
}

func TestSearchCappedOfAMissingRunIsNotFound(t *testing.T) {
	db := openMem(t)
	if _, err := db.SearchCapped(context.Background(), 99, Filter{Text: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

// totals maps each group's value to its total.
func totals(gs []GroupCount) map[string]int {
	out := map[string]int{}
	for _, g := range gs {
		out[g.Value] = g.Total
	}
	return out
}
