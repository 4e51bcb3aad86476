package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"evident/persona/evalrun"
	queues "evident/persona/review"

	"evident/persona"
	"evident/store"
	"evident/web"
)

var itemRE = regexp.MustCompile(`<article class="qitem[^"]*" id="q-([^"]+)"`)

// sampled lists the turn ids of the forbidden queue on a page, in order.
func sampled(body string) []string {
	var out []string
	for _, m := range itemRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// whoField is the reviewer name the page's who form shows.
var whoFieldRE = regexp.MustCompile(`name="who" value="([^"]*)" maxlength`)

func whoField(t *testing.T, body string) string {
	t.Helper()
	m := whoFieldRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no who field")
	}
	return m[1]
}

func redirect(t *testing.T, p page, want string) string {
	t.Helper()
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || (want != "" && loc != want) {
		t.Fatalf("status %d → %q, want 303 → %q\n%s", p.status, loc, want, p.body)
	}
	return loc
}

func tally(t *testing.T, db *store.DB, id int64) map[persona.Verdict]int {
	t.Helper()
	run, err := db.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return run.Tally.ByVerdict
}

// verdictChanges lists the turns whose verdict differs between two runs.
func verdictChanges(t *testing.T, db *store.DB, a, b int64) []string {
	t.Helper()
	ctx := context.Background()
	ra, err := db.Records(ctx, a, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := db.Records(ctx, b, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range evalrun.CompareRuns(ra, rb) {
		out = append(out, fmt.Sprintf("%s %s → %s", c.TurnID, c.Before, c.After))
	}
	return out
}

func TestReviewQueuesRender(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})

	t.Run("the review link opens the forbidden-topic queue", func(t *testing.T) {
		redirect(t, c.get("/runs/1/review"), "/runs/1/review/forbidden")
		mustContain(t, c.ok("/runs/1"), `href="/runs/1/review"`, `<a href="/runs/1/review/forbidden">표본 읽기</a>`,
			`<a href="/runs/1/review/offcanon">이름 가르기</a>`, `<a href="/runs/1/review/endings">어미 고르기</a>`)
	})
	t.Run("the forbidden queue shows min(20, 15) = 15 turns, the same ones on every visit", func(t *testing.T) {
		body := c.ok("/runs/1/review/forbidden")
		got := sampled(body)
		if len(got) != 15 {
			t.Fatalf("%d items: %v", len(got), got)
		}
		if again := sampled(c.ok("/runs/1/review/forbidden")); !reflect.DeepEqual(got, again) {
			t.Errorf("second visit %v", again)
		}
		mustContain(t, body, "금지 소재 표본 <span class=\"count\">15건</span>", "금지 소재 접촉 15회차 가운데",
			`<mark class="m-forbidden">투표</mark>`, "현실 정치 · 현대 기술 · 실존 인물", `name="value" value="confirm"`, `name="value" value="reject"`)
	})
	t.Run("the off-canon queue groups 21 names with counts and example turns", func(t *testing.T) {
		body := c.ok("/runs/1/review/offcanon")
		mustContain(t, body, "세계관 밖 이름 <span class=\"count\">21개</span>", "22회차에 나옴",
			`<strong class="name">나비</strong>`, `<span class="count">2회차</span>`,
			`나비</mark>야. 그냥 <mark class="m-offcanon" title="세계관 밖 고유명사">나비</mark>라고 불러.`,
			`name="character" value="CHR-0100"><input type="hidden" name="name" value="나비">`)
	})
	t.Run("the endings queue shows the 9 mixed replies with each sentence's last 어절 and ranked candidates", func(t *testing.T) {
		body := c.ok("/runs/1/review/endings")
		if n := strings.Count(body, `<table class="sentences">`); n != 9 {
			t.Errorf("%d mixed replies shown", n)
		}
		mustContain(t, body, "섞인 말투 표본 <span class=\"count\">9건</span>",
			`<mark class="m-ending">준비되셨습니까</mark>`, `<td><code>준비되셨습니까</code></td><td>반말</td>`,
			`<mark class="m-ending">시작하겠습니다</mark>`, "존댓말 <span class=\"muted\">(어미 니다)</span>",
			`<td><code class="ending">니까</code></td><td class="num">1</td><td class="words">준비되셨습니까</td><td class="num">4</td><td class="num">4</td>`,
			`<td><code class="ending">ㅂ니까</code></td><td class="num">1</td><td class="words">준비되셨습니까</td><td class="num">1</td><td class="num">1</td>`)
		first := strings.Index(body, `<td><code class="ending">ㅂ니까</code>`)
		if first < 0 || first > strings.Index(body, `<td><code class="ending">니까</code>`) {
			t.Error("ㅂ니까 (1 sentence, 1 reply changed) is not listed before 니까 (1 sentence, 4 replies changed)")
		}
		for _, fragment := range []string{"어", "름이", "봐", "있어"} {
			if strings.Contains(body, `<code class="ending">`+fragment+`</code>`) {
				t.Errorf("the fragment %s is proposed", fragment)
			}
		}
	})
	t.Run("the endings queue lists the seven 반말 replies with an unknown final, with their actions", func(t *testing.T) {
		body := c.ok("/runs/1/review/endings")
		var got []string
		for _, m := range regexp.MustCompile(`<article class="qitem[^"]*" id="u-([^"]+)"`).FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
		want := []string{"T-010032", "T-010033", "T-010122", "T-010133", "T-010244", "T-010252", "T-020203"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("unknown finals %v, want %v", got, want)
		}
		mustContain(t, body, "끝말을 모르는 반말 답장 <span class=\"count\">7건</span>", "답장 7회차 가운데",
			`<span class="count">마지막 어절 <code>확인하셨습니까</code></span>`, `<mark class="m-ending">낮잠</mark>`)
		item := body[strings.Index(body, `id="u-T-020203"`):]
		item = item[:strings.Index(item, "</article>")]
		mustContain(t, item, `name="ending" value="ㅂ니까"`, `name="ending" value="니까"`,
			`name="turn" value="T-020203"`, `name="value" value="seen"`)
		item = body[strings.Index(body, `id="u-T-010032"`):]
		item = item[:strings.Index(item, "</article>")]
		if strings.Contains(item, `name="ending"`) || !strings.Contains(item, `name="value" value="seen"`) {
			t.Errorf("낮잠 offers no candidate, only seen:\n%s", item)
		}
	})
	t.Run("a run of 30 forbidden turns samples 20, the same 20 each time, as runstore draws them", func(t *testing.T) {
		var turns strings.Builder
		for i := range 30 {
			fmt.Fprintf(&turns, `{"turn_id":"F%02d","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"선거 얘기 %d번째야.","named_entities":[]}`+"\n", i, i)
		}
		token := c.csrf()
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{
			"turns": {"f.jsonl", turns.String()}, "cards": {"cards.jsonl", cards}, "lexicon": {"lexicon.csv", lexicon}})
		loc := redirect(t, p, "")
		var id int64
		fmt.Sscanf(loc, "/runs/%d", &id)
		got := sampled(c.ok(loc + "/review/forbidden"))
		if len(got) != 20 {
			t.Fatalf("%d items", len(got))
		}
		if again := sampled(c.ok(loc + "/review/forbidden")); !reflect.DeepEqual(got, again) {
			t.Errorf("second visit %v", again)
		}
		recs, err := db.Records(context.Background(), id, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, i := range queues.ForbiddenSample(id, recs) {
			want = append(want, recs[i].TurnID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("page %v\nrunstore %v", got, want)
		}
	})
}

func TestReviewDecisions(t *testing.T) {
	ctx := context.Background()
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	token := c.csrf()
	post := func(path string, kv ...string) page {
		t.Helper()
		form := url.Values{"csrf": {token}}
		for i := 0; i+1 < len(kv); i += 2 {
			form.Set(kv[i], kv[i+1])
		}
		return c.postForm(path, form)
	}

	t.Run("the reviewer is creator until a name is given, then the cookie remembers it", func(t *testing.T) {
		if who := whoField(t, c.ok("/runs/1/review/forbidden")); who != "creator" {
			t.Errorf("default who %q", who)
		}
		redirect(t, post("/review/who", "who", "  하나\x07 ", "back", "/runs/1/review/offcanon"), "/runs/1/review/offcanon")
		if who := whoField(t, c.ok("/runs/1/review/offcanon")); who != "하나" {
			t.Errorf("who %q", who)
		}
		redirect(t, post("/review/who", "who", "creator", "back", "https://elsewhere.example/"), "/")
	})
	var confirmID int64
	t.Run("marking a sampled turn a real problem stores who and when and shows it", func(t *testing.T) {
		redirect(t, post("/runs/1/review/forbidden", "turn", "T-010116", "value", "confirm", "who", "도담 작가"),
			"/runs/1/review/forbidden#q-T-010116")
		ds, err := db.Decisions(ctx, store.QueueForbidden)
		if err != nil || len(ds) != 1 {
			t.Fatalf("%+v, %v", ds, err)
		}
		d := ds[0]
		confirmID = d.ID
		if d.Key != "T-010116" || d.Value != "confirm" || d.Who != "도담 작가" || d.At.IsZero() || d.Note != "실행 #1 · CHR-0100 · 투표 → 현실 정치" {
			t.Errorf("decision %+v", d)
		}
		body := c.ok("/runs/1/review/forbidden")
		item := body[strings.Index(body, `id="q-T-010116"`):]
		item = item[:strings.Index(item, "</article>")]
		mustContain(t, item, `<span class="chip v-forbidden">이 캐릭터에게 실제 문제</span> <span class="by">도담 작가 · `,
			`class="chosen danger">이 캐릭터에게 실제 문제`, fmt.Sprintf(`name="decision" value="%d"`, confirmID))
		mustContain(t, body, "결정 1/15")
		if who := whoField(t, body); who != "도담 작가" {
			t.Errorf("the form's who was not remembered: %q", who)
		}
	})
	t.Run("undoing it keeps the decision, marks who undid it, and clears the item", func(t *testing.T) {
		redirect(t, post("/runs/1/review/undo", "decision", fmt.Sprint(confirmID), "who", "편집자"), "/runs/1/review/forbidden#q-T-010116")
		d, err := db.Decision(ctx, confirmID)
		if err != nil || d.UndoneAt == nil || d.UndoneBy != "편집자" {
			t.Fatalf("%+v, %v", d, err)
		}
		if ds, _ := db.Decisions(ctx, store.QueueForbidden); len(ds) != 0 {
			t.Errorf("still active: %+v", ds)
		}
		body := c.ok("/runs/1/review/forbidden")
		mustContain(t, body, "결정 0/15", `<li class="undone">`, "되돌림: 편집자 · ")
		p := post("/runs/1/review/undo", "decision", fmt.Sprint(confirmID))
		if p.status != http.StatusConflict {
			t.Errorf("undo twice: %d", p.status)
		}
	})
	t.Run("bad decisions are refused and store nothing", func(t *testing.T) {
		before, _ := db.DecisionLog(ctx, "")
		for _, tc := range []struct {
			path string
			kv   []string
			want int
		}{
			{"/runs/1/review/forbidden", []string{"turn", "T-010116", "value", "maybe"}, http.StatusUnprocessableEntity},
			{"/runs/1/review/forbidden", []string{"turn", "T-010001", "value", "confirm"}, http.StatusUnprocessableEntity},
			{"/runs/1/review/offcanon", []string{"character", "CHR-0100", "name", "도윤", "value", "add"}, http.StatusUnprocessableEntity},
			{"/runs/1/review/endings", []string{"ending", "요", "value", "add"}, http.StatusUnprocessableEntity},
			{"/runs/1/review/endings", []string{"ending", "어", "value", "add"}, http.StatusUnprocessableEntity},
			{"/runs/1/review/endings", []string{"ending", "어", "value", "skip"}, http.StatusUnprocessableEntity}, // a fragment, no candidate
			{"/runs/1/review/endings", []string{"turn", "T-010001", "value", "seen"}, http.StatusUnprocessableEntity},
			{"/runs/1/review/endings", []string{"ending", "turn:T-010032", "value", "skip"}, http.StatusUnprocessableEntity},
			{"/runs/1/review/undo", []string{"decision", "999"}, http.StatusNotFound},
			{"/runs/99/review/forbidden", []string{"turn", "T-010116", "value", "confirm"}, http.StatusNotFound},
		} {
			if p := post(tc.path, tc.kv...); p.status != tc.want {
				t.Errorf("POST %s %v = %d, want %d", tc.path, tc.kv, p.status, tc.want)
			}
		}
		p := c.postForm("/runs/1/review/forbidden", url.Values{"turn": {"T-010116"}, "value": {"confirm"}})
		if p.status != http.StatusForbidden {
			t.Errorf("without the CSRF token: %d", p.status)
		}
		if after, _ := db.DecisionLog(ctx, ""); len(after) != len(before) {
			t.Errorf("%d decisions stored by refused posts", len(after)-len(before))
		}
	})

	t.Run("adding 나비 to 도담's canon updates the card and re-judges: 세계관 밖 고유명사 18 → 16", func(t *testing.T) {
		loc := followJob(t, c, post("/runs/1/review/offcanon", "character", "CHR-0100", "name", "나비", "value", "add"), "/runs/2/review/offcanon?from=1")
		if got := tally(t, db, 1)[persona.OffCanon]; got != 18 {
			t.Errorf("run 1: %d", got)
		}
		tl := tally(t, db, 2)
		if tl[persona.OffCanon] != 16 || tl[persona.RecallFailed] != 10 || tl[persona.Kept] != 118 {
			t.Errorf("run 2 tally %v", tl)
		}
		want := []string{"T-010206 세계관 밖 고유명사 → 설정대로 말함", "T-010244 세계관 밖 고유명사 → 앞 회차를 기억 못 함"}
		if got := verdictChanges(t, db, 1, 2); !reflect.DeepEqual(got, want) {
			t.Errorf("changes %v", got)
		}
		cards, _ := db.Cards(ctx, 1)
		if !slices.Contains(cards[0].CanonEntities, "나비") {
			t.Errorf("canon %v", cards[0].CanonEntities)
		}
		body := c.ok(loc)
		mustContain(t, body, `실행 #1</a> → 실행 #2`, `<li class="changed"><span class="chip v-offcanon">세계관 밖 고유명사</span> <span class="num">18 → 16</span>`,
			`<code>T-010206</code>`, `<code>T-010244</code>`, "이 실행에는 안 보이는, 결정한 이름", "<td><strong>나비</strong></td>", "canon_entities 에 있음")
		if strings.Contains(body, `<strong class="name">나비</strong>`) {
			t.Error("나비 is still listed as off-canon in the new run")
		}
	})
	t.Run("the same decision again is not stored twice and judges nothing new", func(t *testing.T) {
		before, _ := db.DecisionLog(ctx, store.QueueOffCanon)
		redirect(t, post("/runs/2/review/offcanon", "character", "CHR-0100", "name", "나비", "value", "add"), "/runs/2/review/offcanon#n-decided")
		after, _ := db.DecisionLog(ctx, store.QueueOffCanon)
		runs, _ := db.Runs(ctx)
		if len(after) != len(before) || len(runs) != 2 {
			t.Errorf("decisions %d → %d, %d runs; want the log and the runs unchanged", len(before), len(after), len(runs))
		}
	})
	t.Run("blocking 순이 stores the decision, changes no card and keeps it off-canon when judging again", func(t *testing.T) {
		redirect(t, post("/runs/2/review/offcanon", "character", "CHR-0100", "name", "순이", "value", "block"), "/runs/2/review/offcanon#n-decided")
		runs, _ := db.Runs(ctx)
		if len(runs) != 2 {
			t.Errorf("%d runs after a block", len(runs))
		}
		followJob(t, c, post("/runs/2/review/offcanon", "character", "CHR-0100", "name", "해성호", "value", "add"), "/runs/3/review/offcanon?from=2")
		recs, _ := db.Records(ctx, 3, store.Filter{TurnID: "T-010203"})
		if len(recs) != 1 || recs[0].Verdict != persona.OffCanon || !slices.Contains(recs[0].OffCanonEntities, "순이") {
			t.Errorf("T-010203 in run 3: %+v", recs)
		}
		mustContain(t, c.ok("/runs/3/review/offcanon"), `<span class="chip v-forbidden">막을 이름</span>`)
	})
	t.Run("undoing the 나비 addition takes it out of the card and re-judges back to 18 less 해성호", func(t *testing.T) {
		ds, _ := db.Decisions(ctx, store.QueueOffCanon)
		var id int64
		for _, d := range ds {
			if d.Key == "CHR-0100/나비" {
				id = d.ID
			}
		}
		followJob(t, c, post("/runs/3/review/undo", "decision", fmt.Sprint(id)), "/runs/4/review/offcanon?from=3")
		if got := tally(t, db, 4)[persona.OffCanon]; got != 17 { // 18 less 해성호, still in canon
			t.Errorf("run 4 off-canon %d", got)
		}
		cards, _ := db.Cards(ctx, 1)
		if slices.Contains(cards[0].CanonEntities, "나비") || !slices.Contains(cards[0].CanonEntities, "해성호") {
			t.Errorf("canon %v", cards[0].CanonEntities)
		}
	})
	t.Run("skipping a candidate stores it without judging again", func(t *testing.T) {
		redirect(t, post("/runs/4/review/endings", "ending", "ㅂ니까", "value", "skip"), "/runs/4/review/endings#candidates")
		if runs, _ := db.Runs(ctx); len(runs) != 4 {
			t.Errorf("%d runs after a skip", len(runs))
		}
		mustContain(t, c.ok("/runs/4/review/endings"), `<span class="chip v-speech">넣지 않음</span>`)
	})
	t.Run("marking an unknown final seen stores it, judges nothing, and undoing it judges nothing", func(t *testing.T) {
		redirect(t, post("/runs/4/review/endings", "turn", "T-010032", "value", "seen"), "/runs/4/review/endings#u-T-010032")
		ds, _ := db.Decisions(ctx, store.QueueEnding)
		var id int64
		for _, d := range ds {
			if d.Key == "turn:T-010032" && d.Value == "seen" {
				id = d.ID
			}
		}
		if id == 0 {
			t.Fatalf("no seen decision in %+v", ds)
		}
		body := c.ok("/runs/4/review/endings")
		item := body[strings.Index(body, `id="u-T-010032"`):]
		item = item[:strings.Index(item, "</article>")]
		mustContain(t, item, `<span class="chip v-seen">읽어 봄</span>`)
		mustContain(t, body, `<a href="/runs/4?turn=T-010032"><code>T-010032 끝말</code></a>`)
		redirect(t, post("/runs/4/review/undo", "decision", fmt.Sprint(id)), "/runs/4/review/endings#u-T-010032")
		redirect(t, post("/runs/4/review/endings", "turn", "T-010032", "value", "seen"), "/runs/4/review/endings#u-T-010032")
		if runs, _ := db.Runs(ctx); len(runs) != 4 {
			t.Errorf("%d runs after seen marks", len(runs))
		}
	})
	t.Run("accepting the ending 니까 re-judges with seed + 니까 and changes exactly T-010033 and T-020203", func(t *testing.T) {
		loc := followJob(t, c, post("/runs/1/review/endings", "ending", "니까", "value", "add"), "/runs/5/review/endings?from=1")
		run, _ := db.Run(ctx, 5)
		if !reflect.DeepEqual(run.Endings, []string{"요", "죠", "니다", "십시오", "니까"}) || run.Profile != "seed" {
			t.Errorf("run 5 profile %s %v", run.Profile, run.Endings)
		}
		// Run 5 judges the card as it is now (해성호 added), so compare with run 4's.
		want := []string{"T-010033 설정대로 말함 → 말투 어긋남", "T-020203 말투 어긋남 → 설정대로 말함"}
		if got := verdictChanges(t, db, 4, 5); !reflect.DeepEqual(got, want) {
			t.Errorf("changes %v, want %v", got, want)
		}
		body := c.ok(loc)
		mustContain(t, body, "이 실행의 존댓말 어미: <strong>요 · 죠 · 니다 · 십시오 · 니까</strong>", "검토에서 더한 어미: <span class=\"ending-tag\"><code>니까</code>")
		if strings.Contains(body, `<code class="ending">니까</code>`) {
			t.Error("니까 is still a candidate in the run that has it")
		}
	})
	t.Run("judging a dataset again from the run list can take the accepted endings along", func(t *testing.T) {
		mustContain(t, c.ok("/runs"), `<input type="checkbox" name="reviewed" value="1" checked> 검토에서 더한 어미 니까</label>`)
		loc := redirect(t, post("/datasets/1/judge", "profile", "extended", "reviewed", "1"), "")
		var id int64
		fmt.Sscanf(loc, "/runs/%d", &id)
		run, _ := db.Run(ctx, id)
		if run.Profile != "extended" || !slices.Contains(run.Endings, "니까") || !slices.Contains(run.Endings, "ㅂ니까") {
			t.Errorf("run %d: %s %v", id, run.Profile, run.Endings)
		}
		loc = redirect(t, post("/datasets/1/judge", "profile", "seed"), "")
		fmt.Sscanf(loc, "/runs/%d", &id)
		if run, _ := db.Run(ctx, id); slices.Contains(run.Endings, "니까") {
			t.Errorf("unchecked: run %d has %v", id, run.Endings)
		}
	})
	t.Run("the export lists every decision as JSON Lines, undone ones included", func(t *testing.T) {
		p := c.get("/review/decisions.jsonl")
		if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "application/x-ndjson") {
			t.Fatalf("%d %s", p.status, p.header.Get("Content-Type"))
		}
		lines := strings.Split(strings.TrimSpace(p.body), "\n")
		var got []string
		for _, l := range lines {
			var d store.Decision
			if err := json.Unmarshal([]byte(l), &d); err != nil {
				t.Fatal(err)
			}
			s := fmt.Sprintf("%s %s=%s by %s", d.Queue, d.Key, d.Value, d.Who)
			if d.UndoneAt != nil {
				s += " undone by " + d.UndoneBy
			}
			got = append(got, s)
		}
		want := []string{
			"forbidden T-010116=confirm by 도담 작가 undone by 편집자",
			"offcanon CHR-0100/나비=add by 편집자 undone by 편집자", // the undo above remembered 편집자
			"offcanon CHR-0100/순이=block by 편집자",
			"offcanon CHR-0100/해성호=add by 편집자",
			"ending ㅂ니까=skip by 편집자",
			"ending turn:T-010032=seen by 편집자 undone by 편집자",
			"ending turn:T-010032=seen by 편집자",
			"ending 니까=add by 편집자",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("export:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
