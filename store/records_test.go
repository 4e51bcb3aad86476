package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"evident/persona"
)

func TestRecordFilters(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	turns, recs := synthSet(60)
	run := writeRun(t, db, testMeta, recs, turns)

	// want filters the source records in Go, as the SQL must.
	want := func(keep func(i int) bool) []persona.Record {
		var out []persona.Record
		for i, r := range recs {
			if keep(i) {
				out = append(out, r)
			}
		}
		return out
	}
	reply := func(i int) string { return *turns[i].ReplyText }
	tests := []struct {
		name   string
		filter Filter
		keep   func(i int) bool
	}{
		{"no filter returns every record in run order", Filter{}, func(int) bool { return true }},
		{"a character filter returns that character's records", Filter{Character: "C1"},
			func(i int) bool { return recs[i].CharacterID == "C1" }},
		{"a model filter returns that model's records", Filter{Model: "m0"},
			func(i int) bool { return recs[i].ModelID == "m0" }},
		{"a session filter returns that session's records", Filter{Session: "S2"},
			func(i int) bool { return recs[i].SessionID == "S2" }},
		{"a verdict filter returns that verdict's records", Filter{Verdict: persona.SpeechOff},
			func(i int) bool { return recs[i].Verdict == persona.SpeechOff }},
		{"text matches inside the reply", Filter{Text: "Coffee"},
			func(i int) bool { return strings.Contains(reply(i), "Coffee") }},
		{"text matches ASCII letters regardless of case", Filter{Text: "coffee"},
			func(i int) bool { return strings.Contains(reply(i), "Coffee") }},
		{"text matches inside the summary", Filter{Text: "반말입니다"},
			func(i int) bool { return strings.Contains(recs[i].Summary, "반말입니다") }},
		{"a percent sign in the text is literal, not a wildcard", Filter{Text: "100%"},
			func(i int) bool { return strings.Contains(recs[i].Summary, "100%") }},
		{"an underscore in the text is literal", Filter{Text: "_"}, func(int) bool { return false }},
		{"filters combine with AND", Filter{Character: "C0", Model: "m1", Verdict: persona.Kept},
			func(i int) bool {
				return recs[i].CharacterID == "C0" && recs[i].ModelID == "m1" && recs[i].Verdict == persona.Kept
			}},
		{"a value nobody has returns nothing", Filter{Character: "C9"}, func(int) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := want(tt.keep)
			got, err := db.Records(ctx, run.ID, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(exp) || (len(exp) > 0 && !reflect.DeepEqual(got, exp)) {
				t.Fatalf("got %d records, want %d", len(got), len(exp))
			}
			counts, err := db.CountByVerdict(ctx, run.ID, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			wantCounts := map[persona.Verdict]int{}
			for _, v := range persona.Verdicts {
				wantCounts[v] = 0
			}
			for _, r := range exp {
				wantCounts[r.Verdict]++
			}
			if !reflect.DeepEqual(counts, wantCounts) {
				t.Fatalf("counts %v, want %v", counts, wantCounts)
			}
		})
	}

	t.Run("limit and offset page through the filtered rows in order", func(t *testing.T) {
		all := want(func(i int) bool { return recs[i].CharacterID == "C2" })
		var paged []persona.Record
		for off := 0; ; off += 7 {
			page, err := db.Records(ctx, run.ID, Filter{Character: "C2", Limit: 7, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			if len(page) > 7 {
				t.Fatalf("page of %d", len(page))
			}
			paged = append(paged, page...)
		}
		if !reflect.DeepEqual(paged, all) {
			t.Fatalf("paged %d records, want %d", len(paged), len(all))
		}
		rest, err := db.Records(ctx, run.ID, Filter{Offset: 55})
		if err != nil || len(rest) != 5 {
			t.Fatalf("offset without limit: %d records, %v", len(rest), err)
		}
	})

	t.Run("counts ignore limit and offset", func(t *testing.T) {
		counts, err := db.CountByVerdict(ctx, run.ID, Filter{Limit: 1, Offset: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range persona.Verdicts {
			if counts[v] != 12 {
				t.Fatalf("counts %v, want 12 each", counts)
			}
		}
	})

	t.Run("facets list each run's distinct characters, models and sessions sorted", func(t *testing.T) {
		f, err := db.Facets(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantF := Facets{Characters: []string{"C0", "C1", "C2"}, Models: []string{"m0", "m1"},
			Sessions: []string{"S0", "S1", "S2", "S3", "S4"}}
		if !reflect.DeepEqual(f, wantF) {
			t.Fatalf("facets %+v", f)
		}
	})

	t.Run("the denormalised columns come from the turn", func(t *testing.T) {
		var prompt, reply string
		err := db.sql.QueryRow("SELECT prompt_id, reply_text FROM verdict WHERE run_id = ? AND turn_id = ?",
			run.ID, recs[7].TurnID).Scan(&prompt, &reply)
		if err != nil || prompt != turns[7].PromptID || reply != *turns[7].ReplyText {
			t.Fatalf("prompt %q reply %q (%v)", prompt, reply, err)
		}
	})

	t.Run("without a turn the reply text comes from the record's evidence", func(t *testing.T) {
		db := openMem(t)
		run := writeRun(t, db, testMeta, recs[:10], nil)
		got, err := db.Records(ctx, run.ID, Filter{Text: "coffee"})
		if err != nil || len(got) != 2 { // turns 0 and 7
			t.Fatalf("%d records, %v", len(got), err)
		}
	})

	t.Run("readers of a run that does not exist return ErrNotFound", func(t *testing.T) {
		if _, err := db.CountByVerdict(ctx, 999, Filter{}); !errors.Is(err, ErrNotFound) {
			t.Error("CountByVerdict:", err)
		}
		if _, err := db.Facets(ctx, 999); !errors.Is(err, ErrNotFound) {
			t.Error("Facets:", err)
		}
	})
}

func TestSummarySidecar(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	turns, recs := synthSet(3)
	w, err := db.BeginRun(ctx, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(recs[0], &turns[0])
	w.Add(recs[1], &turns[1], WithSummary(persona.SummaryModel, ""))
	w.Add(recs[2], &turns[2], WithSummary(persona.SummaryRule, "check 10: not 존댓말"))
	run, err := w.Commit(tallyOf(recs, 0))
	if err != nil {
		t.Fatal(err)
	}
	sidecars := func() [][2]string {
		es, err := db.Entries(ctx, run.ID, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var out [][2]string
		for i, e := range es {
			if e.Seq != i || !reflect.DeepEqual(e.Record, recs[i]) {
				t.Fatalf("entry %d: %+v", i, e)
			}
			out = append(out, [2]string{string(e.SummarySource), e.SummaryRejectedBy})
		}
		return out
	}

	t.Run("Add options set who wrote the summary and why a rewrite was rejected", func(t *testing.T) {
		want := [][2]string{{"", ""}, {"model", ""}, {"rule", "check 10: not 존댓말"}}
		if got := sidecars(); !reflect.DeepEqual(got, want) {
			t.Fatalf("sidecars %v, want %v", got, want)
		}
	})
	t.Run("SetSummarySource changes one stored record's sidecar", func(t *testing.T) {
		if err := db.SetSummarySource(ctx, run.ID, recs[0].TurnID, persona.SummaryRule, "check 8"); err != nil {
			t.Fatal(err)
		}
		if err := db.SetSummarySource(ctx, run.ID, recs[2].TurnID, "", ""); err != nil {
			t.Fatal(err)
		}
		want := [][2]string{{"rule", "check 8"}, {"model", ""}, {"", ""}}
		if got := sidecars(); !reflect.DeepEqual(got, want) {
			t.Fatalf("sidecars %v, want %v", got, want)
		}
	})
	t.Run("an unknown source or record is refused", func(t *testing.T) {
		if err := db.SetSummarySource(ctx, run.ID, recs[0].TurnID, "guess", ""); !errors.Is(err, ErrInvalid) {
			t.Error(err)
		}
		if err := db.SetSummarySource(ctx, run.ID, "nope", persona.SummaryRule, ""); !errors.Is(err, ErrNotFound) {
			t.Error(err)
		}
		w, err := db.BeginRun(ctx, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		if err := w.Add(recs[0], nil, WithSummary("guess", "")); !errors.Is(err, ErrInvalid) {
			t.Error(err)
		}
	})
}
