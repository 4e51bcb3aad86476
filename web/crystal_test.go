package web_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"evident/crystal"
	"evident/crystal/demo"
	"evident/crystal/report"
	"evident/web"
)

// goldenRows reads the model rows of a crystal/demo golden table: model →
// its eight cells as printed (Acc with " %", then Match F1 … CPR).
func goldenRows(t *testing.T, name string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "crystal", "demo", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	inTable := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) > 0 && f[0] == "Model":
			inTable = true
		case inTable && len(f) == 0:
			inTable = false
		case inTable:
			if len(f) != 10 || f[2] != "%" {
				t.Fatalf("%s: unexpected row %q", name, sc.Text())
			}
			rows[f[0]] = append([]string{f[1] + " %"}, f[3:]...)
		}
	}
	if len(rows) != 3 {
		t.Fatalf("%s: %d model rows", name, len(rows))
	}
	return rows
}

var cellRE = regexp.MustCompile(`<td class="num">([^<]*)</td>`)

// tableRow returns the numeric cells of a model's row in the CRYSTAL table.
func tableRow(t *testing.T, body, model string) []string {
	t.Helper()
	i := strings.Index(body, `<th scope="row">`+model+`</th>`)
	if i < 0 {
		t.Fatalf("no table row for %s", model)
	}
	row := body[i:]
	row = row[:strings.Index(row, "</tr>")]
	var cells []string
	for _, m := range cellRE.FindAllStringSubmatch(row, -1) {
		cells = append(cells, m[1])
	}
	return cells
}

// stepBlock returns the <li> of one step (anchor ref-N or pred-N).
func stepBlock(t *testing.T, body, anchor string) string {
	t.Helper()
	i := strings.Index(body, `<li id="`+anchor+`"`)
	if i < 0 {
		t.Fatalf("no step %s", anchor)
	}
	s := body[i:]
	return s[:strings.Index(s, "</li>")]
}

// demoTable scores the embedded demo as the screen does at start.
func demoTable(t *testing.T, p crystal.Profile) ([]crystal.Item, []report.Run, report.Table) {
	t.Helper()
	items, err := demo.Items()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := demo.Predictions()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.Score(context.Background(), items, runs, crystal.Config{Profile: p, Similarity: crystal.LexicalFor(p)})
	if err != nil {
		t.Fatal(err)
	}
	return items, runs, tab
}

func TestCrystalScreen(t *testing.T) {
	c := serve(t, demoStore(t), web.Options{})

	t.Run("every page's navigation links to the CRYSTAL view", func(t *testing.T) {
		for _, path := range []string{"/runs/1", "/runs", "/upload", "/crystal"} {
			mustContain(t, c.ok(path), `<a href="/crystal" lang="en"`)
		}
		mustContain(t, c.ok("/crystal"), `<a href="/crystal" lang="en" aria-current="page">CRYSTAL</a>`, `<html lang="en">`)
	})
	t.Run("the run list holds the demo scored at start with the lexical similarity under the seed profile", func(t *testing.T) {
		body := c.ok("/crystal")
		mustContain(t, body, `<a href="/crystal/demo">Demo sample · seed profile</a>`,
			`<td><code>seed</code></td><td>lexical (word overlap, no model) · similarity ≥ 0.30</td>`,
			`<a href="/crystal/demo-paper">Demo sample · paper profile</a>`, "lumen-7b, paraglide-mini, quill-vl")
	})
	t.Run("the demo table shows the three models with the golden numbers of the seed profile", func(t *testing.T) {
		body := c.ok("/crystal/demo")
		for model, want := range goldenRows(t, "table_seed.golden") {
			if got := tableRow(t, body, model); strings.Join(got, " | ") != strings.Join(want, " | ") {
				t.Errorf("%s: %q, want %q", model, got, want)
			}
		}
		// The same numbers spelled out: lumen-7b 86.67 % Acc, Match F1 0.882, P 1.000, R 0.801, LIS 1.000,
		// Ord.F1 0.882, 3.00 steps, CPR 0.842.
		if got := strings.Join(tableRow(t, body, "lumen-7b"), " "); got != "86.67 % 0.882 1.000 0.801 1.000 0.882 3.00 0.842" {
			t.Errorf("lumen-7b row %q", got)
		}
	})
	t.Run("the table names the similarity and the profile and says lexical scores are not the paper's", func(t *testing.T) {
		body := c.ok("/crystal/demo")
		mustContain(t, body, "profile <code>seed</code> · similarity <strong>lexical (word overlap, no model)</strong> · match at similarity ≥ 0.30",
			"Ord.F1 = F1 × (0.70 &#43; 0.30 × LIS)", "CPR = 0.65 &#43; 0.35 × F1 if correct, 0.35 × 0.30 × F1 if wrong",
			"not the paper&#39;s all-distilroberta-v1 embedding",
			"quill-vl: 1 item without a prediction (scored 0, wrong); 1 unparseable reply")
	})
	t.Run("the paper-profile demo shows the paper golden numbers", func(t *testing.T) {
		body := c.ok("/crystal/demo-paper")
		mustContain(t, body, "profile <code>paper</code>", "match at similarity &gt; 0.30")
		for model, want := range goldenRows(t, "table_paper.golden") {
			if got := tableRow(t, body, model); strings.Join(got, " | ") != strings.Join(want, " | ") {
				t.Errorf("%s: %q, want %q", model, got, want)
			}
		}
	})
	t.Run("the text download is the golden table itself", func(t *testing.T) {
		for run, golden := range map[string]string{"demo": "table_seed.golden", "demo-paper": "table_paper.golden"} {
			want, err := os.ReadFile(filepath.Join("..", "crystal", "demo", "testdata", golden))
			if err != nil {
				t.Fatal(err)
			}
			p := c.get("/crystal/" + run + "/table.txt")
			if p.status != http.StatusOK || p.body != string(want) {
				t.Errorf("%s/table.txt: %d\n%s", run, p.status, p.body)
			}
		}
		p := c.get("/crystal/demo/items.jsonl")
		if n := strings.Count(p.body, "\n"); p.status != http.StatusOK || n != 45 {
			t.Errorf("items.jsonl: %d, %d lines", p.status, n)
		}
	})

	items, runs, tab := demoTable(t, crystal.ProfileSeed)
	var ev report.Evidence
	for _, e := range tab.Evidence(items, runs) {
		if e.Model == "paraglide-mini" && e.ID == "crys-001" {
			ev = e
		}
	}
	item := c.ok("/crystal/demo/items/crys-001?model=paraglide-mini")

	t.Run("an item page links each matched pair both ways and shows the report's similarity", func(t *testing.T) {
		if len(ev.Pairs) != 2 {
			t.Fatalf("paraglide-mini crys-001 has %d pairs in the report, want 2", len(ev.Pairs))
		}
		for _, pr := range ev.Pairs {
			ref, pred := fmt.Sprintf("ref-%d", pr.Ref+1), fmt.Sprintf("pred-%d", pr.Pred+1)
			full := strconv.FormatFloat(pr.Similarity, 'g', -1, 64)
			shown := fmt.Sprintf("%.3f", pr.Similarity)
			sim := `<span class="sim" data-similarity="` + full + `">` + shown + `</span>`
			rb, pb := stepBlock(t, item, ref), stepBlock(t, item, pred)
			mustContain(t, rb, `href="#`+pred+`"`, sim, pr.RefText)
			mustContain(t, pb, `href="#`+ref+`"`, sim, pr.PredText)
			// Same number and colour on both sides.
			colour := regexp.MustCompile(`class="step matched (pc-\d)"`)
			if a, b := colour.FindStringSubmatch(rb), colour.FindStringSubmatch(pb); a == nil || b == nil || a[1] != b[1] {
				t.Errorf("pair %s–%s colours %v, %v", ref, pred, a, b)
			}
		}
		// The blue-bar pair: reference step 6 with predicted step 4 at 0.866 (√3/2).
		mustContain(t, stepBlock(t, item, "ref-6"), `<a href="#pred-4">matched with predicted step 4</a> · similarity <span class="sim" data-similarity="0.8660254037844387">0.866</span>`)
		mustContain(t, stepBlock(t, item, "pred-4"), `<a href="#ref-6">matched with reference step 6</a>`)
	})
	t.Run("unmatched steps are marked and say what they came nearest to", func(t *testing.T) {
		for _, u := range ev.UnmatchedRef {
			mustContain(t, stepBlock(t, item, fmt.Sprintf("ref-%d", u.Index+1)), `class="step unmatched"`, "unmatched", "nearest: predicted step")
		}
		for _, u := range ev.UnmatchedPred {
			mustContain(t, stepBlock(t, item, fmt.Sprintf("pred-%d", u.Index+1)), `class="step unmatched"`, "unmatched")
		}
		mustContain(t, stepBlock(t, item, "ref-2"), "nearest: predicted step 3 at 0.289, below the threshold (similarity ≥ 0.30)")
		mustContain(t, item, "2 · 6 unmatched steps")
	})
	t.Run("an item page shows the answer verdict with the rule that decided", func(t *testing.T) {
		mustContain(t, item, "<code>The answer is blue</code>", `<span class="verdict wrong">wrong</span>`,
			`rule 4 · exact match <code class="muted">exact</code>`, "P</dt><dd>0.500", "Match F1</dt><dd>0.400", "CPR</dt><dd>0.042")
		mustContain(t, c.ok("/crystal/demo-paper/items/crys-001?model=paraglide-mini"), `<span class="verdict right">correct</span>`,
			"reference-package quirk <code>answer-is-without-word-boundary</code>")
	})
	t.Run("the image is served from this origin and is the embedded file", func(t *testing.T) {
		mustContain(t, item, `<img src="/crystal/demo/items/crys-001/image" alt="The image of item crys-001">`)
		want, err := os.ReadFile(filepath.Join("..", "crystal", "demo", "data", "images", "bars-colors.png"))
		if err != nil {
			t.Fatal(err)
		}
		p := c.get("/crystal/demo/items/crys-001/image")
		if p.status != http.StatusOK || p.header.Get("Content-Type") != "image/png" || p.body != string(want) {
			t.Errorf("image: %d %s, %d bytes", p.status, p.header.Get("Content-Type"), len(p.body))
		}
	})
	t.Run("an item's own options are listed with the gold one marked", func(t *testing.T) {
		mustContain(t, c.ok("/crystal/demo/items/crys-009?model=lumen-7b"),
			`<li class="gold"><strong>C)</strong> triangle <span class="badge">gold</span></li>`, `rule 3 · multiple choice`)
	})
	t.Run("a missing prediction and an unparseable reply say so", func(t *testing.T) {
		mustContain(t, c.ok("/crystal/demo/items/crys-007?model=quill-vl"), "No prediction for this item", "no prediction</span>")
		mustContain(t, c.ok("/crystal/demo/items/crys-006?model=quill-vl"), "could not be read as JSON", "<code>insufficient information</code>")
	})
	t.Run("the model tabs and the item links keep the model", func(t *testing.T) {
		mustContain(t, item, `<a href="/crystal/demo/items/crys-001?model=paraglide-mini" aria-current="page"><span class="mark-wrong">✗</span> paraglide-mini</a>`,
			`<a href="/crystal/demo/items/crys-002?model=paraglide-mini" rel="next">`, `<a href="/crystal/demo?model=paraglide-mini#items">index</a>`)
	})
	t.Run("the index filters by model, outcome and text in the query string", func(t *testing.T) {
		count := func(body string) int { return strings.Count(body, `<tr><td><a href="/crystal/demo/items/`) }
		all := c.ok("/crystal/demo")
		if n := count(all); n != 15 {
			t.Errorf("index lists %d items, want 15", n)
		}
		missing := c.ok("/crystal/demo?model=quill-vl&outcome=missing")
		if n := count(missing); n != 1 || !strings.Contains(missing, `<code>crys-007</code>`) {
			t.Errorf("quill-vl missing: %d rows", n)
		}
		mustContain(t, missing, `<option value="quill-vl" selected>`, `<option value="missing" selected>`, "<strong>1</strong> of 15 items match")
		if strings.Contains(missing, `<th scope="col">lumen-7b</th>`) {
			t.Error("a model filter still shows the other models' columns")
		}
		// lumen-7b answers crys-003 (15 units for 17) and crys-014 wrong.
		wrong := c.ok("/crystal/demo?model=lumen-7b&outcome=wrong")
		if n := count(wrong); n != 2 || !strings.Contains(wrong, "<code>crys-003</code>") || !strings.Contains(wrong, "<code>crys-014</code>") {
			t.Errorf("lumen-7b wrong: %d rows", n)
		}
		if n := count(c.ok("/crystal/demo?q=arrow")); n != 1 {
			t.Errorf("q=arrow: %d rows", n)
		}
	})
	t.Run("an unknown run, item or model is a 404", func(t *testing.T) {
		for _, path := range []string{"/crystal/nope", "/crystal/demo/items/crys-404", "/crystal/demo/items/crys-001?model=nobody", "/crystal/7/items/x/image"} {
			if p := c.get(path); p.status != http.StatusNotFound {
				t.Errorf("GET %s = %d", path, p.status)
			}
		}
	})
}

// Two items, two models: one answers right with one step missing, the other
// wrong with both steps matched out of order.
const (
	crystalRefs = `{"id": "fruit-1", "image": "images/fruit.png", "question": "How many fruits are there?", "answer": "5", "reference_steps": ["Two red apples sit left.", "Three green pears sit right.", "Five fruits in total."]}
`
	crystalPreds = `{"id": "fruit-1", "model": "careful", "reasoning_steps": ["Two red apples sit left.", "Five fruits in total."], "answer": "5"}
{"id": "fruit-1", "model": "hasty", "reasoning_steps": ["Five fruits in total.", "Two red apples sit left."], "answer": "4"}
`
)

func tinyPNG(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{200, 30, 30, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestCrystalUpload(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{MaxUpload: 1 << 20})
	token := c.csrf()
	// The store keeps the upload (schema 0007): run db-1.
	first, second := "/crystal/db-1", "/crystal/db-2"
	if paged, err := db.CrystalPaged(context.Background()); err != nil || !paged {
		t.Fatalf("the store keeps no CRYSTAL pages: %v", err)
	}
	runLinks := func() int { return strings.Count(c.ok("/crystal"), `<tr><td><a href="/crystal/`) }
	pic := tinyPNG(t)

	t.Run("scoring uploaded references and predictions keeps a new run and shows its table", func(t *testing.T) {
		p := c.upload("/crystal/score", map[string]string{"csrf": token, "name": "fruit check"}, map[string][2]string{
			"refs": {"fruit.jsonl", crystalRefs}, "preds": {"preds.jsonl", crystalPreds}, "images": {"fruit.png", pic}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != first {
			t.Fatalf("upload = %d → %q\n%s", p.status, p.header.Get("Location"), p.body)
		}
		body := c.ok(first)
		mustContain(t, body, "fruit check", "upload: fruit.jsonl &#43; preds.jsonl &#43; 1 image", "profile <code>seed</code>")
		// careful: P 1, R 2/3, F1 0.8, in order; correct → CPR 0.65 + 0.35 × 0.8 = 0.93.
		if got := strings.Join(tableRow(t, body, "careful"), " "); got != "100.00 % 0.800 1.000 0.667 1.000 0.800 2.00 0.930" {
			t.Errorf("careful row %q", got)
		}
		// hasty: the same pairs crossed, LIS 1/2 → Ord.F1 0.8 × 0.85 = 0.68; wrong → CPR 0.35 × 0.8 × 0.3 = 0.084.
		if got := strings.Join(tableRow(t, body, "hasty"), " "); got != "0.00 % 0.800 1.000 0.667 0.500 0.680 2.00 0.084" {
			t.Errorf("hasty row %q", got)
		}
		if runLinks() != 3 {
			t.Errorf("the run list has %d runs, want the two demos and the upload", runLinks())
		}
	})
	t.Run("the uploaded image is served from this origin", func(t *testing.T) {
		mustContain(t, c.ok(first+"/items/fruit-1?model=hasty"), `<img src="`+first+`/items/fruit-1/image"`,
			`<a href="#pred-2">matched with predicted step 2</a> · similarity <span class="sim" data-similarity="1">1.000</span>`)
		p := c.get(first + "/items/fruit-1/image")
		if p.status != http.StatusOK || p.header.Get("Content-Type") != "image/png" || p.body != pic {
			t.Errorf("image: %d %s", p.status, p.header.Get("Content-Type"))
		}
	})
	t.Run("malformed predictions show the error with its line and keep nothing", func(t *testing.T) {
		before := runLinks()
		bad := crystalPreds + `{"id": "fruit-1", "model": "broken", "reasoning_steps": ["x"` + "\n"
		p := c.upload("/crystal/score", map[string]string{"csrf": token}, map[string][2]string{
			"refs": {"fruit.jsonl", crystalRefs}, "preds": {"bad-preds.jsonl", bad}})
		if p.status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d", p.status)
		}
		mustContain(t, p.body, "The predictions could not be read; nothing was kept", "crystal input: bad-preds.jsonl:3:")
		if runLinks() != before {
			t.Error("a run was kept")
		}
		if c.get(second).status != http.StatusNotFound {
			t.Error("run 2 exists")
		}
	})
	t.Run("malformed references name their line and keep nothing", func(t *testing.T) {
		before := runLinks()
		p := c.upload("/crystal/score", map[string]string{"csrf": token}, map[string][2]string{
			"refs": {"refs.jsonl", crystalRefs + "{\"id\": \"x\", \"reference_steps\": [1]}\n"}, "preds": {"p.jsonl", crystalPreds}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "refs.jsonl:2:") {
			t.Errorf("status %d", p.status)
		}
		if runLinks() != before {
			t.Error("a run was kept")
		}
	})
	t.Run("predictions for none of the items, a non-image and a missing file are refused", func(t *testing.T) {
		before := runLinks()
		for _, tc := range []struct {
			files map[string][2]string
			want  string
		}{
			{map[string][2]string{"refs": {"r.jsonl", crystalRefs}, "preds": {"p.jsonl", `{"id": "other", "answer": "1"}` + "\n"}}, "No prediction names an item of the references"},
			{map[string][2]string{"refs": {"r.jsonl", crystalRefs}, "preds": {"p.jsonl", crystalPreds}, "images": {"fruit.png", "<svg></svg>"}}, "fruit.png: the screen shows PNG, JPEG, GIF and WebP images"},
			{map[string][2]string{"refs": {"r.jsonl", crystalRefs}}, "No predictions"},
			{map[string][2]string{"preds": {"p.jsonl", crystalPreds}}, "No references file"},
		} {
			p := c.upload("/crystal/score", map[string]string{"csrf": token}, tc.files)
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, tc.want) {
				t.Errorf("%v: %d, want %q", tc.files, p.status, tc.want)
			}
		}
		if runLinks() != before {
			t.Error("a run was kept")
		}
	})
	t.Run("an upload over the size limit is refused and keeps nothing", func(t *testing.T) {
		before := runLinks()
		big := strings.Repeat(crystalPreds, 8000)
		p := c.upload("/crystal/score", map[string]string{"csrf": token}, map[string][2]string{
			"refs": {"r.jsonl", crystalRefs}, "preds": {"p.jsonl", big}})
		if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "1 MiB in all") {
			t.Errorf("status %d", p.status)
		}
		if runLinks() != before {
			t.Error("a run was kept")
		}
	})
	t.Run("the paper profile can be chosen for an upload", func(t *testing.T) {
		p := c.upload("/crystal/score", map[string]string{"csrf": token, "profile": "paper"}, map[string][2]string{
			"refs": {"r.jsonl", crystalRefs}, "preds": {"p.jsonl", crystalPreds}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("status %d\n%s", p.status, p.body)
		}
		body := c.ok(p.header.Get("Location"))
		// paper: CPR 0.6 + 0.4 × 0.8 = 0.92.
		mustContain(t, body, "profile <code>paper</code>", "match at similarity &gt; 0.30")
		if got := tableRow(t, body, "careful"); got[len(got)-1] != "0.920" {
			t.Errorf("careful CPR %q", got)
		}
	})
}

func TestCrystalCSRF(t *testing.T) {
	c := serve(t, demoStore(t), web.Options{})
	files := map[string][2]string{"refs": {"r.jsonl", crystalRefs}, "preds": {"p.jsonl", crystalPreds}}
	runLinks := func() int { return strings.Count(c.ok("/crystal"), `<tr><td><a href="/crystal/`) }
	before := runLinks()

	t.Run("the score form carries the CSRF token", func(t *testing.T) {
		mustContain(t, c.ok("/crystal"), `<form method="post" action="/crystal/score" enctype="multipart/form-data"`, `name="csrf" value="`)
	})
	t.Run("a score upload without the token is refused and keeps nothing", func(t *testing.T) {
		if p := c.upload("/crystal/score", nil, files); p.status != http.StatusForbidden {
			t.Errorf("status %d", p.status)
		}
	})
	t.Run("a token from another browser session is refused", func(t *testing.T) {
		other := newClient(t, c.base)
		if p := c.upload("/crystal/score", map[string]string{"csrf": other.csrf()}, files); p.status != http.StatusForbidden {
			t.Errorf("status %d", p.status)
		}
	})
	t.Run("a post a browser marks cross-site is refused even with the token", func(t *testing.T) {
		token := c.csrf()
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "--b\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n%s\r\n--b--\r\n", token)
		req, _ := http.NewRequest(http.MethodPost, c.base+"/crystal/score", &buf)
		req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		req.Header.Set("Origin", "http://evil.example")
		if p := c.do(req); p.status != http.StatusForbidden {
			t.Errorf("status %d", p.status)
		}
	})
	if runLinks() != before {
		t.Error("a refused post kept a run")
	}
}

func TestCrystalEscaping(t *testing.T) {
	c := serve(t, demoStore(t), web.Options{})
	refs := `{"id": "x<script>1", "question": "Is it <script>alert('q')</script> safe?", "answer": "yes", "reference_steps": ["<script>alert(1)</script> is a step.", "Plain words here."]}
`
	preds := `{"id": "x<script>1", "model": "<b>bold</b>", "reasoning_steps": ["<script>alert(1)</script> is a step."], "answer": "<img src=x onerror=alert(2)>"}
`
	p := c.upload("/crystal/score", map[string]string{"csrf": c.csrf(), "name": "<script>alert('name')</script>"}, map[string][2]string{
		"refs": {"r.jsonl", refs}, "preds": {"p.jsonl", preds}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("upload %d\n%s", p.status, p.body)
	}
	pages := map[string]string{
		"list": c.ok("/crystal"),
		"run":  c.ok(p.header.Get("Location")),
		"item": c.ok(p.header.Get("Location") + "/items/x%3Cscript%3E1?model=%3Cb%3Ebold%3C%2Fb%3E"),
	}
	t.Run("a <script> inside a step renders as text", func(t *testing.T) {
		item := pages["item"]
		mustContain(t, stepBlock(t, item, "ref-1"), "&lt;script&gt;alert(1)&lt;/script&gt; is a step.")
		mustContain(t, stepBlock(t, item, "pred-1"), "&lt;script&gt;alert(1)&lt;/script&gt; is a step.", `href="#ref-1"`)
		mustContain(t, item, "&lt;img src=x onerror=alert(2)&gt;", "&lt;b&gt;bold&lt;/b&gt;", "Is it &lt;script&gt;alert(&#39;q&#39;)&lt;/script&gt; safe?")
	})
	t.Run("no page carries the markup from the files", func(t *testing.T) {
		for name, body := range pages {
			for _, bad := range []string{"<script>alert", "<b>bold", "<img src=x"} {
				if strings.Contains(body, bad) {
					t.Errorf("%s page contains %q", name, bad)
				}
			}
		}
		mustContain(t, pages["list"], "&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;")
	})
}
