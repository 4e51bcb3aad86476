package web_test

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"evident/store"
	"evident/web"
)

// changedRE lists the turn ids of the changes panel, in order.
var changedRE = regexp.MustCompile(`<tr><td><a href="/runs/\d+\?turn=[^"]*"><code>([^<]+)</code></a></td><td><span class="chip`)

func changedTurns(body string) []string {
	var out []string
	for _, m := range changedRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

var nextRE = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)

func TestReviewPagedFromTheStore(t *testing.T) {
	ctx := context.Background()
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	token := c.csrf()
	// 200 turns of 하나 name 나비 (not in her canon); the first 60 also name
	// one name of their own (이름00 … 이름59): 61 name groups, and adding 나비
	// to the canon changes the 140 turns that name nothing else.
	var turns strings.Builder
	for i := range 200 {
		names := `["나비"]`
		if i < 60 {
			names = fmt.Sprintf(`["나비","이름%02d"]`, i)
		}
		fmt.Fprintf(&turns, `{"turn_id":"N%03d","session_id":"S%d","character_id":"C1","model_id":"m","reply_text":"나비랑 같이 가자.","named_entities":%s}`+"\n", i, i, names)
	}
	loc := redirect(t, c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{
		"turns": {"t.jsonl", turns.String()}, "cards": {"cards.jsonl", cards}, "lexicon": {"lexicon.csv", lexicon}}), "")
	var run int64
	fmt.Sscanf(loc, "/runs/%d", &run)

	t.Run("the off-canon queue pages 61 name groups 50 at a time, 나비 first with 200 turns", func(t *testing.T) {
		body := c.ok(fmt.Sprintf("/runs/%d/review/offcanon", run))
		mustContain(t, body, "세계관 밖 이름 <span class=\"count\">61개</span>", "200회차에 나옴", `<strong class="name">나비</strong>`,
			`<span class="count">200회차</span>`, "그 밖에 197회차", "1 / 2쪽")
		if n := strings.Count(body, `<strong class="name">`); n != 50 {
			t.Errorf("%d groups on page 1", n)
		}
		m := nextRE.FindStringSubmatch(body)
		if m == nil || html.UnescapeString(m[1]) != fmt.Sprintf("/runs/%d/review/offcanon?page=2", run) {
			t.Fatalf("next %v", m)
		}
		second := c.ok(html.UnescapeString(m[1]))
		if n := strings.Count(second, `<strong class="name">`); n != 11 {
			t.Errorf("%d groups on page 2", n)
		}
		mustContain(t, second, "2 / 2쪽", `<strong class="name">이름59</strong>`, `rel="prev"`)
	})
	t.Run("the queues are kept in the store after the first view and a new server reads them", func(t *testing.T) {
		stored, err := db.ReviewQueues(ctx, run)
		if err != nil || len(stored) != 3 {
			t.Fatalf("%d stored queues, %v", len(stored), err)
		}
		info, _ := db.Run(ctx, run)
		for q, sq := range stored {
			if sq.Records != info.Tally.Judged || sq.Records != 200 {
				t.Errorf("%s computed from %d rows", q, sq.Records)
			}
		}
		again := serve(t, db, web.Options{})
		a := c.ok(fmt.Sprintf("/runs/%d/review/offcanon", run))
		b := again.ok(fmt.Sprintf("/runs/%d/review/offcanon", run))
		csrf := regexp.MustCompile(`name="csrf" value="[^"]*"`)
		cut := func(s string) string {
			return csrf.ReplaceAllString(s[strings.Index(s, `<h2 class="queue-h">`):strings.Index(s, `<aside class="side"`)], "")
		}
		if cut(a) != cut(b) {
			t.Error("a restarted server shows another off-canon queue")
		}
	})

	var next int64
	t.Run("adding 나비 re-judges; the changes panel lists 100 of the 140 changed turns, then the other 40", func(t *testing.T) {
		form := url.Values{"csrf": {token}, "character": {"C1"}, "name": {"나비"}, "value": {"add"}}
		loc := followJob(t, c, c.postForm(fmt.Sprintf("/runs/%d/review/offcanon", run), form), "")
		if _, err := fmt.Sscanf(loc, "/runs/%d/review/offcanon?from=", &next); err != nil || next <= run {
			t.Fatalf("redirect %q", loc)
		}
		want := verdictChanges(t, db, run, next)
		if len(want) != 140 {
			t.Fatalf("%d changes: %v", len(want), want)
		}
		var wantIDs []string
		for _, w := range want {
			wantIDs = append(wantIDs, strings.Fields(w)[0])
		}
		body := c.ok(loc)
		first := changedTurns(body)
		mustContain(t, body, "판정이 바뀐 회차 100+40개", "다음 100개")
		m := nextRE.FindStringSubmatch(body[strings.Index(body, `id="changes"`):])
		if m == nil {
			t.Fatal("no next page of changes")
		}
		if want := fmt.Sprintf("/runs/%d/review/offcanon?from=%d&after=%d#changes", next, run, 159); html.UnescapeString(m[1]) != want {
			t.Errorf("next %q, want %q", html.UnescapeString(m[1]), want)
		}
		rest := c.ok(html.UnescapeString(m[1]))
		second := changedTurns(rest)
		mustContain(t, rest, "판정이 바뀐 회차 40개 <span class=\"muted\">(모두 140개 가운데 이어지는 쪽)</span>", "처음부터")
		panel := rest[strings.Index(rest, `id="changes"`):]
		if strings.Contains(panel[:strings.Index(panel, "</section>")], `rel="next"`) {
			t.Error("the last page of changes links a next one")
		}
		if got := append(first, second...); !reflect.DeepEqual(got, wantIDs) {
			t.Errorf("paged changes %v\nwant %v", got, wantIDs)
		}
	})
	t.Run("a decision on a turn outside the run is refused, one inside is stored", func(t *testing.T) {
		form := url.Values{"csrf": {token}, "turn": {"N999"}, "value": {"confirm"}}
		if p := c.postForm(fmt.Sprintf("/runs/%d/review/forbidden", run), form); p.status != 422 {
			t.Errorf("unknown turn: %d", p.status)
		}
		form.Set("turn", "N001") // in the run, but not 금지 소재 접촉
		if p := c.postForm(fmt.Sprintf("/runs/%d/review/forbidden", run), form); p.status != 422 {
			t.Errorf("not forbidden: %d", p.status)
		}
		if ds, _ := db.Decisions(ctx, store.QueueForbidden); len(ds) != 0 {
			t.Errorf("stored %+v", ds)
		}
	})
}
