package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"evident/persona"
	"evident/store"
	"evident/web"
)

// The demo's tally (README, evident judge --demo).
var demoCounts = []struct {
	verdict, anchor string
	count           int
	share           string
}{
	{"금지 소재 접촉", "g-forbidden", 15, "7.7 %"},
	{"세계관 밖 고유명사", "g-offcanon", 18, "9.2 %"},
	{"말투 어긋남", "g-speech", 36, "18.5 %"},
	{"앞 회차를 기억 못 함", "g-recall", 9, "4.6 %"},
	{"설정대로 말함", "g-kept", 117, "60.0 %"},
}

func TestFirstStart(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})

	t.Run("a second start finds the store full and imports nothing", func(t *testing.T) {
		_, created, err := web.EnsureDemo(context.Background(), db)
		if err != nil || created {
			t.Errorf("created = %v, %v", created, err)
		}
	})
	t.Run("the front page opens the latest run, the demo", func(t *testing.T) {
		p := c.get("/")
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/1" {
			t.Errorf("GET / = %d → %q", p.status, p.header.Get("Location"))
		}
	})
	t.Run("an empty store opens on the upload form", func(t *testing.T) {
		empty, err := store.Open(context.Background(), store.MemoryPath)
		if err != nil {
			t.Fatal(err)
		}
		defer empty.Close()
		p := serve(t, empty, web.Options{}).get("/")
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/upload" {
			t.Errorf("GET / = %d → %q", p.status, p.header.Get("Location"))
		}
	})
}

func TestRunScreen(t *testing.T) {
	c := serve(t, demoStore(t), web.Options{})
	body := c.ok("/runs/1")

	t.Run("the five groups come in priority order with the demo's counts and shares", func(t *testing.T) {
		last := -1
		for _, g := range demoCounts {
			i := strings.Index(body, `id="`+g.anchor+`"`)
			if i < last {
				t.Errorf("group %s is out of priority order", g.verdict)
			}
			last = i
			h := section(t, body, g.anchor)
			mustContain(t, h, g.verdict, fmt.Sprintf("%d회차", g.count), g.share)
		}
		mustContain(t, body, "전체 <strong>195</strong>회차")
	})
	t.Run("each group lists its rows, up to fifty, and links to the rest", func(t *testing.T) {
		for _, g := range demoCounts {
			want := min(g.count, 50)
			if got := rows(section(t, body, g.anchor)); got != want {
				t.Errorf("%s shows %d rows, want %d", g.verdict, got, want)
			}
		}
		mustContain(t, section(t, body, "g-kept"), "나머지 67회차", `href="/runs/1?verdict=%EC%84%A4%EC%A0%95%EB%8C%80%EB%A1%9C%20%EB%A7%90%ED%95%A8"`)
	})
	t.Run("a row reads verdict label, turn_id and the one-line summary", func(t *testing.T) {
		mustContain(t, body, `<summary>
    <span class="chip v-offcanon">세계관 밖 고유명사</span>
    <code class="tid">T-010037</code>
    <span class="sum">카드에 없는 「금성호」가 답장에 나와 세계관 밖 이름으로 걸렸습니다.</span>`)
	})
	t.Run("an opened row shows the evidence table, rule values and the marked reply", func(t *testing.T) {
		row := rowOf(t, body, "T-010037")
		mustContain(t, row,
			`<th scope="col">source</th><th scope="col">field</th><th scope="col">agg</th><th scope="col">value</th>`,
			`<td>character_card</td><td><code>canon_entities</code></td><td></td><td class="val">물새섬</td>`,
			`<dd>반말 · 나</dd>`, `<dd>반말</dd>`,
			`그날 밤 <mark class="m-offcanon" title="세계관 밖 고유명사">금성호</mark>가 무사히`,
			"로그에 1인칭이 없어 1인칭 비교는 건너뛰고 말투만 견줬습니다.")
	})
	t.Run("quoted endings, forbidden terms and recall targets are marked", func(t *testing.T) {
		mustContain(t, rowOf(t, body, "T-010101"),
			`<mark class="m-ending" title="인용된 종결 어절">물론이에요</mark>! 편하게 쉬다 <mark class="m-ending" title="인용된 종결 어절">가세요</mark>`)
		forbidden := strings.Split(section(t, body, "g-forbidden"), "<details ")[1:]
		if len(forbidden) != 15 {
			t.Fatalf("%d forbidden rows", len(forbidden))
		}
		for _, row := range forbidden {
			if !strings.Contains(row, `<p class="text">`) || !strings.Contains(row, `<mark class="m-forbidden" title="금지 소재: `) {
				t.Errorf("a forbidden row has no marked term in its reply:\n%.300s", row)
			}
		}
		recall := rowOf(t, body, "T-010044")
		mustContain(t, recall, `<mark class="m-recall">파랑이</mark> · <a href="/runs/1?turn=T-010006"><code>T-010006</code></a>`,
			`앞 회차 <code>T-010006</code> 의 답장`, `<mark class="m-recall" title="앞 회차에 나온 이름">파랑이</mark>`)
	})
	t.Run("turns whose checks were skipped stay in their group and say which", func(t *testing.T) {
		kept := section(t, body, "g-kept")
		mustContain(t, rowOf(t, kept, "T-010029"), `<span class="badge skip">말투 대조 건너뜀</span>`,
			"답장에서 말투를 뽑지 못해 말투 대조를 건너뛰었습니다")
		mustContain(t, rowOf(t, kept, "T-010015"), `<span class="badge skip">세계관 대조 건너뜀</span>`,
			"named_entities 가 없어 세계관 대조를 건너뛰었습니다")
	})
	t.Run("the ten automatic checks show 195 passes and no failure", func(t *testing.T) {
		checks := section(t, body, "checks")
		if n := strings.Count(checks, `<span class="ok">통과 195</span> · <span class="zero">실패 0</span>`); n != 10 {
			t.Errorf("%d checks pass all 195 records, want 10", n)
		}
		for _, name := range persona.CheckNames {
			mustContain(t, checks, name)
		}
		mustContain(t, checks, "출력 스키마(seed) 검증 실패 0건")
	})
	t.Run("without gold the self-grading panel is empty and says why", func(t *testing.T) {
		gold := section(t, body, "gold")
		mustContain(t, gold, "사람이 붙인 정답 라벨이 아직 없어 자가채점 칸을 비워 둡니다.")
		if strings.Contains(gold, "Wilson") || strings.Contains(gold, "κ") {
			t.Error("the empty gold panel shows numbers")
		}
	})
	t.Run("the model panel shows mismatch rates with intervals and McNemar p per pair", func(t *testing.T) {
		m := section(t, body, "models")
		mustContain(t, m, "프롬프트 52개",
			`<th scope="row">claude-sonnet</th><td class="num">3/52</td><td class="num">5.8 %</td><td class="num">2.0 – 15.6 %</td>`,
			`<th scope="row">gpt-4o-mini</th><td class="num">33/52</td><td class="num">63.5 %</td>`,
			`<th scope="row">whif-solar-ft</th><td class="num">24/52</td><td class="num">46.2 %</td>`,
			`<td>claude-sonnet</td><td>gpt-4o-mini</td><td class="num">2</td><td class="num">32</td><td class="num sig">6.9×10⁻⁸</td>`,
			`<td>gpt-4o-mini</td><td>whif-solar-ft</td><td class="num">17</td><td class="num">8</td><td class="num">0.108</td>`,
			`href="/runs/1/disagree"`)
	})
	t.Run("the verification notes have the automatic, manual and honesty parts in Korean", func(t *testing.T) {
		notes := section(t, body, "notes")
		mustContain(t, notes, "자동 검증 · 코드가 판정합니다", "수동 검증 · 사람이 봅니다", "정직 경계선 · 이 숫자가 말하지 않는 것",
			"존댓말 종결 어미(요 · 죠 · 니다 · 십시오)", "표본 20건")
	})
	t.Run("pages carry a content security policy that allows nothing from elsewhere", func(t *testing.T) {
		p := c.get("/runs/1")
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("CSP %q", csp)
		}
		if strings.Contains(p.body, "http://") || strings.Contains(p.body, "https://") {
			t.Error("the screen refers to another site")
		}
	})
	t.Run("the stylesheet and the script are served from the binary", func(t *testing.T) {
		css := c.get("/static/style.css")
		js := c.get("/static/app.js")
		if css.status != 200 || !strings.HasPrefix(css.header.Get("Content-Type"), "text/css") || !strings.Contains(css.body, ".chip") {
			t.Errorf("style.css: %d %q", css.status, css.header.Get("Content-Type"))
		}
		if js.status != 200 || !strings.Contains(js.body, "details.row") {
			t.Errorf("app.js: %d", js.status)
		}
	})
	t.Run("a run that does not exist is a 404 page", func(t *testing.T) {
		for _, path := range []string{"/runs/99", "/runs/abc", "/runs/99/disagree", "/nowhere"} {
			if p := c.get(path); p.status != http.StatusNotFound {
				t.Errorf("GET %s = %d", path, p.status)
			}
		}
	})
}

// rowOf returns one turn's row from a page.
func rowOf(t *testing.T, body, turnID string) string {
	t.Helper()
	i := strings.Index(body, `id="t-`+turnID+`"`)
	if i < 0 {
		t.Fatalf("no row for %s", turnID)
	}
	rest := body[i:]
	return rest[:strings.Index(rest, "</details>")]
}

var shownRE = regexp.MustCompile(`조건에 맞는 <strong>(\d+)</strong>회차`)

func shown(t *testing.T, body string) string {
	t.Helper()
	m := shownRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no filtered count on the page")
	}
	return m[1]
}

func TestFilters(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	all, err := db.Records(context.Background(), 1, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// count filters the records in Go, independently of the store's SQL.
	count := func(keep func(r persona.Record) bool) int {
		n := 0
		for _, r := range all {
			if keep(r) {
				n++
			}
		}
		return n
	}

	t.Run("a verdict in the query string shows that group whole, and its URL is the view", func(t *testing.T) {
		body := c.ok("/runs/1?verdict=" + url.QueryEscape("말투 어긋남"))
		if shown(t, body) != "36" || rows(body) != 36 {
			t.Errorf("shown %s, rows %d, want 36", shown(t, body), rows(body))
		}
		mustContain(t, body, `<option value="말투 어긋남" selected>`)
		body = c.ok("/runs/1?verdict=" + url.QueryEscape("설정대로 말함"))
		if rows(body) != 117 {
			t.Errorf("설정대로 말함 shows %d rows, want all 117", rows(body))
		}
	})
	t.Run("a verdict that is not one of the five is a 400 naming the five, on the page and the exports", func(t *testing.T) {
		for _, path := range []string{"/runs/1?verdict=bogus", "/runs/1/records.jsonl?verdict=bogus", "/runs/1/records.csv?verdict=bogus",
			"/runs/1/report.html?verdict=" + url.QueryEscape("말투어긋남")} {
			p := c.get(path)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, "알 수 없는 판정") || !strings.Contains(p.body, "앞 회차를 기억 못 함") {
				t.Errorf("%s: %d %.300q", path, p.status, p.body)
			}
		}
	})
	t.Run("character, model and session filter by their columns", func(t *testing.T) {
		for _, f := range []struct {
			query string
			keep  func(r persona.Record) bool
		}{
			{"character=CHR-0100", func(r persona.Record) bool { return r.CharacterID == "CHR-0100" }},
			{"model=gpt-4o-mini", func(r persona.Record) bool { return r.ModelID == "gpt-4o-mini" }},
			{"session=S-01002", func(r persona.Record) bool { return r.SessionID == "S-01002" }},
			{"model=whif-solar-ft&verdict=" + url.QueryEscape("금지 소재 접촉"), func(r persona.Record) bool {
				return r.ModelID == "whif-solar-ft" && r.Verdict == persona.ForbiddenTopic
			}},
		} {
			want := count(f.keep)
			if want == 0 {
				t.Fatalf("%s matches nothing in the demo", f.query)
			}
			body := c.ok("/runs/1?" + f.query)
			if got := shown(t, body); got != fmt.Sprint(want) {
				t.Errorf("%s shows %s turns, want %d", f.query, got, want)
			}
		}
		if n := count(func(r persona.Record) bool { return r.CharacterID == "CHR-0100" }); n != 156 {
			t.Errorf("the demo character has %d turns, want 156 (52 prompts × 3 models)", n)
		}
	})
	t.Run("free text searches summaries and replies", func(t *testing.T) {
		body := c.ok("/runs/1?q=" + url.QueryEscape("금성호"))
		want := count(func(r persona.Record) bool {
			reply, _ := r.Evidence[0].Value.(string)
			return strings.Contains(r.Summary, "금성호") || strings.Contains(reply, "금성호")
		})
		if shown(t, body) != fmt.Sprint(want) || rows(body) != want {
			t.Errorf("q=금성호 shows %s turns (%d rows), want %d", shown(t, body), rows(body), want)
		}
		mustContain(t, body, `value="금성호"`)
	})
	t.Run("turn opens one turn's row", func(t *testing.T) {
		body := c.ok("/runs/1?turn=T-010041")
		if rows(body) != 1 {
			t.Errorf("%d rows", rows(body))
		}
		mustContain(t, body, `<details class="row v-speech" id="t-T-010041" open>`)
	})
	t.Run("a page past the end shows the last page", func(t *testing.T) {
		// 36 말투 어긋남 turns fit one page of 200: page 9 is page 1.
		if body := c.ok("/runs/1?verdict=" + url.QueryEscape("말투 어긋남") + "&page=9"); rows(body) != 36 {
			t.Errorf("%d rows, want the 36 of the last page", rows(body))
		}
	})
	t.Run("the page links both exports with its filter", func(t *testing.T) {
		q := "?verdict=" + url.QueryEscape("앞 회차를 기억 못 함")
		body := c.ok("/runs/1" + q)
		q = strings.ReplaceAll(q, "+", "%20")
		mustContain(t, body, `href="/runs/1/records.jsonl`+q+`"`, `href="/runs/1/records.csv`+q+`"`)
		csv := c.ok("/runs/1/records.csv" + q)
		if n := strings.Count(csv, "\r\n"); n != 1+9 { // the header and the 9 recall failures
			t.Errorf("CSV of the filter: %d lines, want 10", n)
		}
	})
	t.Run("the records export honours the same query string", func(t *testing.T) {
		p := c.get("/runs/1/records.jsonl?verdict=" + url.QueryEscape("앞 회차를 기억 못 함"))
		if p.status != 200 || strings.Count(p.body, "\n") != 9 || !strings.Contains(p.header.Get("Content-Type"), "ndjson") {
			t.Errorf("export: %d, %d lines", p.status, strings.Count(p.body, "\n"))
		}
	})
}

func TestModelsDisagree(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	body := c.ok("/runs/1/disagree")

	// Independent count: prompts whose first record per model differ.
	recs, _ := db.Records(context.Background(), 1, store.Filter{})
	turns, _ := db.Turns(context.Background(), 1)
	prompt := map[string]string{}
	for _, tu := range turns {
		prompt[tu.TurnID] = tu.PromptID
	}
	verdicts := map[string]map[string]persona.Verdict{}
	for _, r := range recs {
		p := prompt[r.TurnID]
		if p == "" {
			continue
		}
		if verdicts[p] == nil {
			verdicts[p] = map[string]persona.Verdict{}
		}
		if _, ok := verdicts[p][r.ModelID]; !ok {
			verdicts[p][r.ModelID] = r.Verdict
		}
	}
	differ := 0
	for _, m := range verdicts {
		seen := map[persona.Verdict]bool{}
		for _, v := range m {
			seen[v] = true
		}
		if len(m) > 1 && len(seen) > 1 {
			differ++
		}
	}

	t.Run("it lists every shared prompt whose models' verdicts differ", func(t *testing.T) {
		if n := strings.Count(body, `<article class="prompt">`); n != differ || differ == 0 {
			t.Errorf("%d prompts listed, want %d", n, differ)
		}
		mustContain(t, body, fmt.Sprintf("프롬프트 52개 가운데 <strong>%d개</strong>", differ))
	})
	t.Run("each prompt shows the models side by side with verdict, reply and summary", func(t *testing.T) {
		i := strings.Index(body, `<code class="pid">P-001</code>`)
		if i < 0 {
			t.Fatal("P-001 (claude kept, gpt 존댓말) is not listed")
		}
		art := body[i : i+strings.Index(body[i:], "</article>")]
		mustContain(t, art, "배가 끊겨서", "<h3>claude-sonnet</h3>", "<h3>gpt-4o-mini</h3>", "<h3>whif-solar-ft</h3>",
			`<a href="/runs/1?turn=T-010001"><code>T-010001</code></a>`, `<span class="chip v-speech">말투 어긋남</span>`)
		if strings.Index(art, "claude-sonnet") > strings.Index(art, "gpt-4o-mini") {
			t.Error("models are not in a stable (sorted) order")
		}
	})
	t.Run("the character filter is a query string too", func(t *testing.T) {
		other := c.ok("/runs/1/disagree?character=CHR-0001")
		if strings.Count(other, `<article class="prompt">`) != 0 {
			t.Error("a character without shared prompts lists prompts")
		}
		mustContain(t, other, `<option value="CHR-0001" selected>`)
	})
}
