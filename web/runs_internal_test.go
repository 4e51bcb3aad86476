package web

import (
	"reflect"
	"testing"

	"evident/store"
)

func TestAddedEndings(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  store.RunInfo
		want []string
	}{
		{"seed's own four endings add nothing", store.RunInfo{RunMeta: store.RunMeta{Profile: "seed",
			Endings: []string{"요", "죠", "니다", "십시오"}}}, nil},
		{"an ending accepted in review is added to seed", store.RunInfo{RunMeta: store.RunMeta{Profile: "seed",
			Endings: []string{"요", "죠", "니다", "십시오", "ㅂ니까", "십쇼"}}}, []string{"ㅂ니까", "십쇼"}},
		{"extended's endings and noun exceptions are its own", store.RunInfo{RunMeta: store.RunMeta{Profile: "extended",
			Endings: []string{"요", "죠", "니다", "십시오", "ㅂ니까", "십쇼", "ㅂ시다", "ㅂ디다", "!필요", "!아니다", "!메뉴"}}}, []string{"!메뉴"}},
		{"a profile of another name has no built-in list", store.RunInfo{RunMeta: store.RunMeta{Profile: "house",
			Endings: []string{"요", "소"}}}, []string{"요", "소"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := addedEndings(tc.run); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMarkChanges(t *testing.T) {
	run := func(id, ds int64, profile, cards string) store.RunInfo {
		return store.RunInfo{ID: id, RunMeta: store.RunMeta{DatasetID: ds, Profile: profile,
			Fingerprints: map[string]string{"character_card": cards}}}
	}
	// Newest first, as store.Runs lists them.
	runs := []store.RunInfo{
		run(5, 1, "seed", "bbbbbbbbbbbbbbbbbbbb"),
		run(4, 2, "seed", "cccccccccccccccccccc"),
		run(3, 1, "seed", "aaaaaaaaaaaaaaaaaaaa"),
		run(2, 1, "extended", "aaaaaaaaaaaaaaaaaaaa"),
		run(1, 0, "seed", ""),
	}
	rows := make([]runRow, len(runs))
	for i, r := range runs {
		rows[i] = runRow{ID: r.ID, Profile: r.Profile, Cards: cardsVersion(r)}
	}
	markChanges(runs, rows)
	type mark struct {
		prev                  int64
		profile, added, cards bool
	}
	want := []mark{
		{3, false, false, true},  // run 5: dataset 1's cards changed since run 3
		{0, false, false, false}, // run 4: dataset 2's only run
		{2, true, false, false},  // run 3: seed after extended
		{0, false, false, false}, // run 2: dataset 1's oldest
		{0, false, false, false}, // run 1: judged from files
	}
	for i, w := range want {
		r := rows[i]
		if got := (mark{r.Prev, r.ProfileChanged, r.AddedChanged, r.CardsChanged}); got != w {
			t.Errorf("run %d: %+v, want %+v", r.ID, got, w)
		}
	}
	if rows[0].Cards != "bbbbbbbbbbbb" {
		t.Errorf("card version %q, want the fingerprint's first 12 hex digits", rows[0].Cards)
	}
}
