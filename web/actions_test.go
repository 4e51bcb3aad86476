package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"evident/store"
	"evident/web"
)

const cards = `{"character_id":"C1","name":"하나","honorific_rule":"반말","first_person":"나","canon_entities":["하늘"],"forbidden_topics":["현실 정치"],"entity_roles":[]}
`

const lexicon = "term,topic\n선거,현실 정치\n"

// scriptTurns holds a reply that tries to run a script.
const scriptTurns = `{"turn_id":"X1","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"<script>alert('x')</script> 선거 얘기는 싫어.","named_entities":["<img src=x onerror=alert(1)>"]}
`

func counts(t *testing.T, db *store.DB) (datasets, runs int) {
	t.Helper()
	sets, err := db.Datasets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(sets), len(rs)
}

func TestUpload(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{MaxUpload: 1 << 20})
	token := c.csrf()

	t.Run("the upload form carries the CSRF token and the three file inputs", func(t *testing.T) {
		mustContain(t, c.ok("/upload"), `enctype="multipart/form-data"`, `name="turns"`, `name="cards"`, `name="lexicon"`, `name="gold"`)
	})
	t.Run("uploading the demo's three tables judges them into a new run and redirects to it", func(t *testing.T) {
		p := c.upload("/upload", map[string]string{"csrf": token, "name": "다시 올린 데모"}, map[string][2]string{
			"turns":   {"turns.jsonl", demoFile(t, "turns.jsonl")},
			"cards":   {"cards.json", demoFile(t, "cards.json")},
			"lexicon": {"lexicon.csv", demoFile(t, "lexicon.csv")},
		})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/2" {
			t.Fatalf("upload = %d → %q\n%s", p.status, p.header.Get("Location"), p.body)
		}
		body := c.ok("/runs/2")
		mustContain(t, body, "다시 올린 데모", "판정 195회차")
		for _, g := range demoCounts {
			mustContain(t, section(t, body, g.anchor), g.share)
		}
	})
	t.Run("a malformed turn log shows every rejected line and imports nothing", func(t *testing.T) {
		beforeSets, beforeRuns := counts(t, db)
		turns := `{"turn_id":"B1","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"그래."}
{"turn_id":"B2","session_id":"S1","character_id":"C1","model_id":"m","reply_text":
{"turn_id":"B3","session_id":"S1","model_id":"m","reply_text":"좋아."}
{"turn_id":"B1","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"또."}
`
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{
			"turns": {"bad.jsonl", turns}, "cards": {"cards.jsonl", cards}, "lexicon": {"lexicon.csv", lexicon}})
		if p.status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d", p.status)
		}
		mustContain(t, p.body, "판정할 수 없는 행이 3개 있어 아무것도 가져오지 않았습니다",
			`<td>bad.jsonl</td><td class="num">2</td>`,
			`<td>bad.jsonl</td><td class="num">3</td><td><code>B3</code></td>`,
			`<td>bad.jsonl</td><td class="num">4</td><td><code>B1</code></td><td>duplicate turn_id &#34;B1&#34; (first at line 1)</td>`)
		if sets, runs := counts(t, db); sets != beforeSets || runs != beforeRuns {
			t.Errorf("datasets %d→%d, runs %d→%d after a refused upload", beforeSets, sets, beforeRuns, runs)
		}
	})
	t.Run("a table that cannot be read at all names its line and imports nothing", func(t *testing.T) {
		beforeSets, _ := counts(t, db)
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{
			"turns": {"turns.json", "[\n{\"turn_id\": \"A\"}\n"}, "cards": {"cards.jsonl", cards}, "lexicon": {"lexicon.csv", lexicon}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "turns.json: line") {
			t.Errorf("status %d\n%s", p.status, p.body)
		}
		if sets, _ := counts(t, db); sets != beforeSets {
			t.Error("a dataset was stored")
		}
	})
	t.Run("keep going imports the judgeable rows and lists the rejected ones on the run", func(t *testing.T) {
		turns := `{"turn_id":"K1","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"그래."}
not json
`
		p := c.upload("/upload", map[string]string{"csrf": token, "keep_going": "1"}, map[string][2]string{
			"turns": {"k.jsonl", turns}, "cards": {"cards.jsonl", cards}, "lexicon": {"lexicon.csv", lexicon}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("status %d\n%s", p.status, p.body)
		}
		body := c.ok(p.header.Get("Location"))
		mustContain(t, body, "판정하지 못한 행 <span class=\"count\">1행</span>", `<td>k.jsonl</td><td class="num">2</td>`)
	})
	t.Run("a turn log alone borrows the newest dataset's cards and lexicon", func(t *testing.T) {
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{
			"turns": {"only.jsonl", `{"turn_id":"O1","session_id":"S1","character_id":"C1","model_id":"m","reply_text":"선거 얘기 하지 마."}` + "\n"}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("status %d\n%s", p.status, p.body)
		}
		mustContain(t, section(t, c.ok(p.header.Get("Location")), "g-forbidden"), "O1")
	})
	t.Run("a file with an unknown extension is refused with the formats it could be", func(t *testing.T) {
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{"turns": {"turns.txt", "x"}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, ".jsonl(.ndjson), .json(배열), .csv") {
			t.Errorf("status %d", p.status)
		}
	})
	t.Run("an upload over the size limit is refused and imports nothing", func(t *testing.T) {
		beforeSets, _ := counts(t, db)
		big := strings.Repeat(`{"turn_id":"Z","session_id":"S1","character_id":"C1","model_id":"m"}`+"\n", 20000)
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{"turns": {"big.jsonl", big}})
		if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "1 MiB") {
			t.Errorf("status %d", p.status)
		}
		if sets, _ := counts(t, db); sets != beforeSets {
			t.Error("a dataset was stored")
		}
	})
}

func TestEscaping(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	p := c.upload("/upload", map[string]string{"csrf": c.csrf()}, map[string][2]string{
		"turns": {"x.jsonl", scriptTurns}, "cards": {"c.jsonl", cards}, "lexicon": {"l.csv", lexicon}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("upload %d\n%s", p.status, p.body)
	}
	body := c.ok(p.header.Get("Location"))

	t.Run("a reply containing <script> is shown as text", func(t *testing.T) {
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Fatal("user text reached the page as markup")
		}
		mustContain(t, body, `&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; <mark class="m-forbidden" title="금지 소재: 현실 정치">선거</mark>`,
			`&lt;img src=x onerror=alert(1)&gt;`)
	})
	t.Run("the static report escapes it too", func(t *testing.T) {
		var buf bytes.Buffer
		if err := web.WriteReport(context.Background(), db, 2, &buf); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "<script>alert") || !strings.Contains(buf.String(), "&lt;script&gt;alert") {
			t.Error("the report does not escape the reply")
		}
	})
}

func TestCSRF(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	token := c.csrf()
	files := map[string][2]string{"turns": {"t.jsonl", demoFile(t, "turns.jsonl")}, "cards": {"cards.json", demoFile(t, "cards.json")},
		"lexicon": {"lexicon.csv", demoFile(t, "lexicon.csv")}}

	t.Run("an upload without the token is refused and imports nothing", func(t *testing.T) {
		if p := c.upload("/upload", nil, files); p.status != http.StatusForbidden || !strings.Contains(p.body, "CSRF") {
			t.Errorf("status %d", p.status)
		}
		if sets, runs := counts(t, db); sets != 1 || runs != 1 {
			t.Errorf("%d datasets, %d runs", sets, runs)
		}
	})
	t.Run("a token from another browser session is refused", func(t *testing.T) {
		other := newClient(t, c.base)
		if p := other.upload("/upload", map[string]string{"csrf": token}, files); p.status != http.StatusForbidden {
			t.Errorf("status %d", p.status)
		}
	})
	t.Run("form posts without the token are refused", func(t *testing.T) {
		for _, path := range []string{"/datasets/1/judge", "/logout"} {
			if p := c.postForm(path, url.Values{"profile": {"seed"}}); p.status != http.StatusForbidden {
				t.Errorf("POST %s = %d", path, p.status)
			}
		}
		if p := c.postForm("/datasets/1/judge", url.Values{"profile": {"seed"}, "csrf": {"forged"}}); p.status != http.StatusForbidden {
			t.Errorf("forged token: %d", p.status)
		}
		if p := c.upload("/datasets/1/judge", map[string]string{"profile": "seed"}, nil); p.status != http.StatusForbidden {
			t.Errorf("multipart post without token: %d", p.status)
		}
		if _, runs := counts(t, db); runs != 1 {
			t.Errorf("%d runs after refused posts", runs)
		}
	})
	t.Run("a post a browser marks cross-site is refused even with the token", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, c.base+"/datasets/1/judge", strings.NewReader(url.Values{"csrf": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		if p := c.do(req); p.status != http.StatusForbidden {
			t.Errorf("status %d", p.status)
		}
	})
	t.Run("with the token, judging a stored dataset again makes a new run", func(t *testing.T) {
		p := c.postForm("/datasets/1/judge", url.Values{"profile": {"extended"}, "csrf": {token}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/2" {
			t.Fatalf("status %d → %q\n%s", p.status, p.header.Get("Location"), p.body)
		}
		body := c.ok("/runs/2")
		mustContain(t, body, "말투 프로필 <code>extended</code>", "명사 예외(필요 · 중요")
		if n := strings.Count(section(t, body, "checks"), `<span class="zero">실패 0</span>`); n != 10 {
			t.Errorf("%d checks without failures on the extended run, want 10", n)
		}
	})
}

func TestAccess(t *testing.T) {
	t.Run("serving off loopback without a token is refused", func(t *testing.T) {
		for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.168.1.5:80", "[::]:8080", "example.com:80"} {
			if err := web.CheckAddr(addr, ""); err == nil {
				t.Errorf("CheckAddr(%q) allowed without a token", addr)
			}
			if err := web.CheckAddr(addr, "s3cret-token-of-16+"); err != nil {
				t.Errorf("CheckAddr(%q) with a token: %v", addr, err)
			}
		}
		for _, addr := range []string{"127.0.0.1:8080", "localhost:0", "[::1]:8080", "127.0.0.2:80"} {
			if err := web.CheckAddr(addr, ""); err != nil {
				t.Errorf("CheckAddr(%q): %v", addr, err)
			}
		}
		if err := web.ListenAndServe(context.Background(), "0.0.0.0:0", "", http.NotFoundHandler(), nil); err == nil {
			t.Error("ListenAndServe listened on every interface without a token")
		}
	})
	t.Run("without a token only loopback Host headers are answered", func(t *testing.T) {
		c := serve(t, demoStore(t), web.Options{})
		req, _ := http.NewRequest(http.MethodGet, c.base+"/runs/1", nil)
		req.Host = "attacker.example"
		if p := c.do(req); p.status != http.StatusForbidden {
			t.Errorf("rebound Host: %d", p.status)
		}
		req.Host = "localhost:8080"
		if p := c.do(req); p.status != http.StatusOK {
			t.Errorf("localhost: %d", p.status)
		}
	})
	t.Run("with a token every page waits behind the login form", func(t *testing.T) {
		c := serve(t, demoStore(t), web.Options{Token: "correct horse battery staple"})
		p := c.get("/runs/1")
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/login?next=%2Fruns%2F1" {
			t.Fatalf("GET /runs/1 = %d → %q", p.status, p.header.Get("Location"))
		}
		if p := c.get("/runs/1/report.html"); p.status != http.StatusSeeOther {
			t.Errorf("report without login: %d", p.status)
		}
		if p := c.get("/static/style.css"); p.status != http.StatusOK {
			t.Errorf("the login page's stylesheet: %d", p.status)
		}
		login := c.ok("/login?next=%2Fruns%2F1")
		token := csrfRE.FindStringSubmatch(login)[1]

		wrong := c.postForm("/login", url.Values{"csrf": {token}, "token": {"correct horse"}, "next": {"/runs/1"}})
		if wrong.status != http.StatusUnauthorized || !strings.Contains(wrong.body, "토큰이 맞지 않습니다") {
			t.Errorf("wrong token: %d", wrong.status)
		}
		if p := c.get("/runs/1"); p.status != http.StatusSeeOther {
			t.Errorf("a wrong token let the browser in: %d", p.status)
		}
		noCSRF := c.postForm("/login", url.Values{"token": {"correct horse battery staple"}})
		if noCSRF.status != http.StatusForbidden {
			t.Errorf("login without CSRF token: %d", noCSRF.status)
		}
		right := c.postForm("/login", url.Values{"csrf": {token}, "token": {"correct horse battery staple"}, "next": {"/runs/1"}})
		if right.status != http.StatusSeeOther || right.header.Get("Location") != "/runs/1" {
			t.Fatalf("right token: %d → %q", right.status, right.header.Get("Location"))
		}
		mustContain(t, c.ok("/runs/1"), "실행 #1", "로그아웃")

		t.Run("the auth cookie does not work for another session", func(t *testing.T) {
			other := newClient(t, c.base)
			u, _ := url.Parse(c.base)
			for _, ck := range c.http.Jar.Cookies(u) {
				if ck.Name == "evident_auth" {
					other.http.Jar.SetCookies(u, []*http.Cookie{ck})
				}
			}
			if p := other.get("/runs/1"); p.status != http.StatusSeeOther {
				t.Errorf("a stolen auth cookie alone opened the page: %d", p.status)
			}
		})
		token = c.csrf() // the session id, and with it the CSRF token, is new after login
		t.Run("a redirect after login stays on this site", func(t *testing.T) {
			p := c.postForm("/login", url.Values{"csrf": {token}, "token": {"correct horse battery staple"}, "next": {"//evil.example/"}})
			if p.header.Get("Location") != "/" {
				t.Errorf("next //evil.example/ → %q", p.header.Get("Location"))
			}
		})
		t.Run("logging out closes the pages again", func(t *testing.T) {
			c.postForm("/logout", url.Values{"csrf": {c.csrf()}})
			if p := c.get("/runs/1"); p.status != http.StatusSeeOther {
				t.Errorf("after logout: %d", p.status)
			}
		})
	})
}

func TestGold(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	token := c.csrf()

	t.Run("a gold file with a bad line is refused with its line number and stores nothing", func(t *testing.T) {
		bad := `{"turn_id":"T-010001","verdict":"설정대로 말함"}
{"turn_id":"T-010002","verdict":"괜찮음"}
`
		p := c.upload("/gold", map[string]string{"csrf": token, "run": "1"}, map[string][2]string{"gold": {"bad.jsonl", bad}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "bad.jsonl: gold line 2") {
			t.Errorf("status %d\n%s", p.status, p.body)
		}
		if g, _ := db.Gold(context.Background()); len(g) != 0 {
			t.Errorf("%d labels stored", len(g))
		}
	})
	t.Run("the demo's gold fills the self-grading panel: 108 of 120 with interval and kappa", func(t *testing.T) {
		p := c.upload("/gold", map[string]string{"csrf": token, "run": "1"}, map[string][2]string{"gold": {"gold.jsonl", demoFile(t, "gold.jsonl")}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/1#gold" {
			t.Fatalf("status %d → %q\n%s", p.status, p.header.Get("Location"), p.body)
		}
		body := c.ok("/runs/1")
		gold := section(t, body, "gold")
		mustContain(t, gold, "<strong>108 / 120</strong> <span>90.0 %</span>", "<dd>83.3 – 94.2 %</dd>", "<dd>0.848</dd>",
			// the confusion matrix's diagonal (evalrun's hand count) and the 말투 row
			`<td class="diag">10</td>`, `<td class="diag">21</td>`, `<td class="diag">8</td>`, `<td class="diag">59</td>`,
			`<th scope="row" title="말투 어긋남">말투</th><td class="off">1</td><td class="">0</td><td class="diag">21</td><td class="">0</td><td class="off">1</td><td class="total">23</td>`,
			`<span class="detail">off-canon 「금성호」</span> · 1건 <a href="/runs/1?turn=T-010037"><code>T-010037</code></a>`)
		if strings.Contains(gold, "비워 둡니다") {
			t.Error("the panel still says it is empty")
		}
		mustContain(t, rowOf(t, body, "T-010037"), `<span class="label">정답 라벨</span> <span class="chip v-kept">설정대로 말함</span>`)
	})
	t.Run("gold for other turns only leaves another run's panel empty with the reason", func(t *testing.T) {
		p := c.upload("/upload", map[string]string{"csrf": token}, map[string][2]string{
			"turns": {"x.jsonl", scriptTurns}, "cards": {"c.jsonl", cards}, "lexicon": {"l.csv", lexicon}})
		body := c.ok(p.header.Get("Location"))
		mustContain(t, section(t, body, "gold"), "저장된 정답 라벨 120건 가운데 이 실행의 회차에 붙은 것이 없어")
	})
}

var hrefRE = regexp.MustCompile(`(?i)(src|href)\s*=\s*"([^"]*)"`)

func TestReport(t *testing.T) {
	db := demoStore(t)
	var buf bytes.Buffer
	if err := web.WriteReport(context.Background(), db, 1, &buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()

	t.Run("the report is one self-contained file: CSS inlined, no script, no outside reference", func(t *testing.T) {
		mustContain(t, html, "<style>", ".chip")
		if strings.Contains(html, "<script") || strings.Contains(html, "<link") {
			t.Error("the report loads a script or a stylesheet")
		}
		for _, m := range hrefRE.FindAllStringSubmatch(html, -1) {
			if !strings.HasPrefix(m[2], "#") {
				t.Errorf("%s=%q points outside the file", m[1], m[2])
			}
		}
		if strings.Contains(html, "http://") || strings.Contains(html, "https://") {
			t.Error("the report mentions a web address")
		}
	})
	t.Run("it holds the groups with every row, the panels and the models-disagree list", func(t *testing.T) {
		for _, g := range demoCounts {
			s := section(t, html, g.anchor)
			mustContain(t, s, g.verdict, g.share)
			if rows(s) != g.count {
				t.Errorf("%s: %d rows in the report, want all %d", g.verdict, rows(s), g.count)
			}
		}
		mustContain(t, html, `id="checks"`, `id="gold"`, `id="models"`, `id="notes"`, `id="disagree"`, `<a class="go" href="#disagree">`)
		if strings.Contains(html, "<form") {
			t.Error("the report has a form")
		}
	})
	t.Run("the screen offers the same report as a download", func(t *testing.T) {
		c := serve(t, db, web.Options{})
		p := c.get("/runs/1/report.html")
		if p.status != 200 || !strings.Contains(p.header.Get("Content-Disposition"), "evident-run-1.html") || rows(p.body) != 195 {
			t.Errorf("download: %d %q, %d rows", p.status, p.header.Get("Content-Disposition"), rows(p.body))
		}
	})
}

func TestRunsPage(t *testing.T) {
	c := serve(t, demoStore(t), web.Options{})
	body := c.ok("/runs")
	t.Run("it lists the run with its tally and the dataset with a re-judge form", func(t *testing.T) {
		mustContain(t, body, `<a href="/runs/1">#1</a>`, `<td class="num">195</td>`, `title="금지 소재 접촉">15</span>`,
			`action="/datasets/1/judge"`, "데모 · 등대지기 도담과 세 캐릭터")
	})
}
