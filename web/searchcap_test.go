package web_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"evident/persona"
	"evident/store"
	"evident/web"
)

// A text search that matches more turns than the store counts (issue 13:
// bounded search counts) says so and pages a verdict with keyset Next links.
func TestACappedSearchSaysSoAndPagesWithNextLinks(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w, err := db.BeginRun(ctx, store.RunMeta{Profile: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	// 450 turns; every reply holds "커피"; turns 0…299 are 설정대로 말함, the
	// rest 말투 어긋남.
	tally := persona.Tally{ByVerdict: map[persona.Verdict]int{}}
	for i := range 450 {
		v := persona.Kept
		if i >= 300 {
			v = persona.SpeechOff
		}
		reply := fmt.Sprintf("커피 %d잔 마실래", i)
		tu := persona.Turn{TurnID: fmt.Sprintf("T%04d", i), SessionID: "S1", CharacterID: "C1", ModelID: "m1",
			ReplyText: &reply, NamedEntities: []string{}}
		rec := persona.Record{TurnID: tu.TurnID, SessionID: "S1", CharacterID: "C1", ModelID: "m1", Verdict: v,
			OffCanonEntities: []string{}, Summary: fmt.Sprintf("%d번 회차", i)}
		if err := w.Add(rec, &tu); err != nil {
			t.Fatal(err)
		}
		tally.ByVerdict[v]++
		tally.Judged++
	}
	run, err := w.Commit(tally)
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, db, web.Options{})
	base := fmt.Sprintf("/runs/%d", run.ID)

	// Under the default cap (10,000) the counts are exact and the pager numbered.
	body := c.ok(base + "?q=" + "%EC%BB%A4%ED%94%BC")
	mustContain(t, body, "조건에 맞는 <strong>450</strong>회차")
	if strings.Contains(body, `id="search-capped"`) {
		t.Error("an uncapped search says it is capped")
	}
	body = c.ok(base + "?verdict=" + "%EC%84%A4%EC%A0%95%EB%8C%80%EB%A1%9C%20%EB%A7%90%ED%95%A8" + "&q=%EC%BB%A4%ED%94%BC")
	mustContain(t, body, "1 / 2 쪽")

	db.SetSearchCountCap(250)
	body = c.ok(base + "?q=%EC%BB%A4%ED%94%BC")
	mustContain(t, body, "조건에 맞는 <strong>250+</strong>회차", "검색에 맞는 처음 250건 기준", `id="search-capped"`,
		"검색에 맞는 회차 가운데 실행 순서로 처음 250건 기준",
		`<span class="count">250회차</span>`) // the first 250 matches are all 설정대로 말함

	// One verdict: 300 turns match, 250 counted; page 1 shows 200 and a Next
	// link with a cursor, no page count; page 2 shows the other 100 and no Next.
	body = c.ok(base + "?verdict=%EC%84%A4%EC%A0%95%EB%8C%80%EB%A1%9C%20%EB%A7%90%ED%95%A8&q=%EC%BB%A4%ED%94%BC")
	if strings.Contains(body, " / ") && strings.Contains(body, "2 쪽</span>") {
		t.Error("a capped search's pager names a last page")
	}
	if n := strings.Count(body, `<details class="row `); n != 200 {
		t.Errorf("page 1: %d rows, want 200", n)
	}
	m := regexp.MustCompile(`<a href="([^"]+)" rel="next">다음 쪽</a>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no 다음 쪽 link on page 1 of a capped search")
	}
	next := html.UnescapeString(m[1])
	if !strings.Contains(next, "page=2") || !strings.Contains(next, "from=200") {
		t.Errorf("Next = %q, want page=2 and from=200 (the seq after the last row shown)", next)
	}
	body = c.ok(next)
	if n := strings.Count(body, `<details class="row `); n != 100 {
		t.Errorf("page 2: %d rows, want 100", n)
	}
	mustContain(t, body, "T0200", "T0299", "2 쪽</span>")
	if strings.Contains(body, "T0199") || strings.Contains(body, `rel="next">다음 쪽`) {
		t.Error("page 2 repeats page 1's rows or has a Next link past the last row")
	}
}
