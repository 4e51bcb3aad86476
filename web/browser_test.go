package web_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/input"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"evident/internal/testenv"
	"evident/web"
)

// chromium finds a Chromium or Chrome binary: $CHROME_PATH, else chromium,
// chromium-browser or google-chrome on PATH. Without one the browser test
// skips, or fails when EVIDENT_REQUIRE_ALL=1 (CI installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROME_PATH"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		t.Fatalf("CHROME_PATH=%s: no such file", p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "no Chromium: install Debian's chromium (apt-get install -y chromium), put chromium, chromium-browser or google-chrome on PATH, or set CHROME_PATH")
	return ""
}

// browserTimeout bounds one browser test as a whole. Every step inside waits
// on the page's own state (a load event, app.js's readiness mark, a
// selector), never on a clock: the bound only turns a hang into a failure.
const browserTimeout = 3 * time.Minute

// newBrowser starts a headless Chromium of its own for t (closed at the end
// of t) and returns the context of its one tab.
func newBrowser(t *testing.T, width, height int) context.Context {
	t.Helper()
	bin := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
		// A busy machine must not make Chromium throttle the tab's timers
		// and rendering: the steps wait on the page, so the page must run.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium makes scratch folders (org.chromium.Chromium.*) in
		// TMPDIR and does not always remove them: keep them in the test's.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(bctx, browserTimeout)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// do runs steps and fails t on an error.
func do(ctx context.Context, t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// readyJS is true once the page has loaded and app.js has set it up.
const readyJS = `document.readyState === "complete" && document.documentElement.dataset.ready === "1"`

// waitFor polls a JavaScript condition in the page (on each animation
// frame) until it holds.
func waitFor(ctx context.Context, t *testing.T, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(browserTimeout))); err != nil {
		t.Fatalf("waiting for %s: %v", cond, err)
	}
}

// open navigates to u and waits until app.js has set the page up.
func open(ctx context.Context, t *testing.T, u string) {
	t.Helper()
	do(ctx, t, chromedp.Navigate(u))
	waitFor(ctx, t, readyJS)
}

// follow runs trigger, an action that makes the page navigate, and waits for
// the next page's load event and app.js's readiness. A trigger must not be
// an evaluation that navigates while it runs: Chromium then answers the
// evaluation with "Inspected target navigated or closed" (the flake of issue
// 13 item 5); use a key, a click or soon.
func follow(ctx context.Context, t *testing.T, trigger chromedp.Action[chromedp.Void]) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(cdppage.LoadEventFired, nil, trigger)); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, readyJS)
}

// soon is an action that runs js in the page after the evaluation has
// answered (a zero-delay task), for a script that navigates.
func soon(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`setTimeout(() => { `+js+` }, 0), true`))
		return err
	})
}

// key presses each key of keys (characters or kb constants) as a keyboard
// does: one keyDown carrying the key's text, then a keyUp. (chromedp's
// KeyEvent sends the text as a separate char event, which Chromium types
// even when the page cancelled the keyDown; a real key press it does not.)
func key(ctx context.Context, t *testing.T, keys string) {
	t.Helper()
	for _, r := range keys {
		var down *input.DispatchKeyEventParams
		for _, e := range kb.Encode(r) {
			switch e.Type {
			case kb.KeyDown:
				down = e
			case kb.KeyChar:
				down.Text, down.UnmodifiedText = e.Text, e.UnmodifiedText
			case kb.KeyUp:
				for _, p := range []*input.DispatchKeyEventParams{down, e} {
					if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, *p); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

// platformFonts returns the fonts Chromium drew the text children of the
// first element matching sel with: family name → glyphs drawn, "*" appended
// to the name of a web font.
func platformFonts(ctx context.Context, t *testing.T, sel string) map[string]int {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.QueryAfter(chromedp.CSS(sel),
		func(_ context.Context, _ *chromedp.Target, nodes []*chromedp.Node) (cdp.NodeID, error) {
			return nodes[0].NodeID, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, css.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	res, err := chromedp.Call(ctx, css.GetPlatformFontsForNode, css.GetPlatformFontsForNodeParams{NodeID: id})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range res.Fonts {
		name := f.FamilyName
		if f.IsCustomFont {
			name += "*"
		}
		out[name] += int(f.GlyphCount)
	}
	return out
}

// koreanSystemFont reports whether fontconfig knows a Korean font; the
// embedded one is then not the one Chromium draws Hangul with.
func koreanSystemFont() bool {
	out, err := exec.Command("fc-list", ":lang=ko", "family").Output()
	return err == nil && len(bytes.TrimSpace(out)) > 0
}

// countHangulJS counts the characters of the first element matching sel
// that fall in the font's unicode-range (style.css): Hangul and CJK
// punctuation.
func countHangulJS(sel string) string {
	return `[...document.querySelector("` + sel + `").textContent].filter(c => /[\u1100-\u11FF\u3000-\u303F\u3130-\u318F\uAC00-\uD7A3\uFF01-\uFF60]/.test(c)).length`
}

// hangulFacesJS lists the Evident Hangul faces as "weight:status" once the
// document's fonts have settled.
const hangulFacesJS = `document.fonts.ready.then(() => [...document.fonts]
	.filter(f => f.family.replace(/"/g, "") === "Evident Hangul").map(f => f.weight + ":" + f.status).sort())`

// TestBrowser drives the screen in a real headless Chromium: open the demo
// run, expand a row, read its evidence table and the ten-check panel, move
// over the rows with the keyboard, check the Korean web font is drawn (on
// the screen and in the static report), filter by verdict, upload a file
// with its progress shown, and save a screenshot (also to
// $EVIDENT_SCREENSHOT when set; the README's docs/screen.png is made that
// way).
func TestBrowser(t *testing.T) {
	db := demoStore(t)
	s, err := web.New(db, web.Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s) // listens on 127.0.0.1
	t.Cleanup(ts.Close)
	ctx := newBrowser(t, 1440, 1000)

	// T-010116 is the first 금지 소재 접촉 row of the demo; its evidence cites
	// the lexicon row 투표 → 현실 정치.
	const row = `details[id="t-T-010116"]`
	t.Run("the screen opens on the demo run grouped by verdict", func(t *testing.T) {
		do(ctx, t, chromedp.EmulateViewport(1440, 1000))
		open(ctx, t, ts.URL+"/")
		do(ctx, t, chromedp.WaitVisible(chromedp.CSS(`section#g-forbidden`)))
		title := eval[string](ctx, t, `document.title`)
		groups := eval[int](ctx, t, `document.querySelectorAll("section.group[id^='g-']").length`)
		if !strings.Contains(title, "실행 #1") || groups != 5 {
			t.Errorf("title %q, %d groups", title, groups)
		}
	})
	t.Run("expanding a row shows its evidence table with the seed's values", func(t *testing.T) {
		do(ctx, t,
			chromedp.Click(chromedp.CSS(row+` > summary`)),
			chromedp.WaitVisible(chromedp.CSS(row+` table.evidence`)),
		)
		isOpen := eval[bool](ctx, t, `document.querySelector('`+row+`').open`)
		height := eval[float64](ctx, t, `document.querySelector('`+row+` table.evidence').getBoundingClientRect().height`)
		if !isOpen || height <= 0 {
			t.Fatalf("open %v, table height %v", isOpen, height)
		}
		cells := eval[[]string](ctx, t, `[...document.querySelectorAll('`+row+` table.evidence tbody tr')].map(tr => [...tr.cells].map(c => c.innerText.trim()).join(" | "))`)
		joined := strings.Join(cells, "\n")
		for _, want := range []string{"topic_lexicon | term |  | 투표", "topic_lexicon | topic |  | 현실 정치", "character_card | forbidden_topics |  | 현실 정치"} {
			if !strings.Contains(joined, want) {
				t.Errorf("evidence table lacks %q:\n%s", want, joined)
			}
		}
	})
	t.Run("the ten-check panel lists 10 checks, each passed by all 195 records", func(t *testing.T) {
		items := eval[[]string](ctx, t, `[...document.querySelectorAll('#checks ol.checks li')].map(li => li.innerText.replace(/\s+/g, " ").trim())`)
		if len(items) != 10 {
			t.Fatalf("%d check items: %v", len(items), items)
		}
		for _, it := range items {
			if !strings.Contains(it, "통과 195") || !strings.Contains(it, "실패 0") {
				t.Errorf("check item %q", it)
			}
		}
	})
	t.Run("a screenshot of the screen with the opened row is saved", func(t *testing.T) {
		eval[bool](ctx, t, `window.scrollTo(0, 0), true`)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if len(png) < 1000 || string(png[1:4]) != "PNG" {
			t.Fatalf("screenshot of %d bytes", len(png))
		}
		paths := []string{filepath.Join(t.TempDir(), "screen.png")}
		if p := os.Getenv("EVIDENT_SCREENSHOT"); p != "" {
			paths = append(paths, p)
		}
		for _, p := range paths {
			if err := os.WriteFile(p, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s (%d bytes)", p, len(png))
		}
	})
	t.Run("Hangul is drawn with the embedded Evident Hangul, both weights loaded", func(t *testing.T) {
		faces := eval[[]string](ctx, t, hangulFacesJS)
		if strings.Join(faces, " ") != "400:loaded 700:loaded" {
			t.Errorf("Evident Hangul faces %v, want 400 and 700 loaded (the body text and the bold headings)", faces)
		}
		if !eval[bool](ctx, t, `document.fonts.check('16px "Evident Hangul"', "판정 결과")`) {
			t.Error(`document.fonts.check says "Evident Hangul" is not ready for 판정 결과`)
		}
		if koreanSystemFont() {
			t.Log("fontconfig has a Korean font, which comes first in style.css: not checking which font drew the page")
			return
		}
		// The heading's Hangul is drawn in the web font, its "#1" and spaces
		// in a system font.
		fonts, want := platformFonts(ctx, t, `main h1`), eval[int](ctx, t, countHangulJS(`main h1`))
		if want != 15 || fonts["Evident Hangul*"] != want {
			t.Errorf("the fonts of <h1>실행 #1 데모 · 등대지기 도담과 세 캐릭터: %v, want its %d Hangul syllables (15) in Evident Hangul (a web font)", fonts, want)
		}
	})
	t.Run("the run page's rows answer j/k, o, Esc and /, and no key acts while typing", func(t *testing.T) {
		open(ctx, t, ts.URL+"/runs/1")
		hint := eval[string](ctx, t, `document.querySelector("main .kbd-hint").innerText`)
		if hint != "단축키: j/k 이동 · o 열기 · Esc 닫기 · / 검색" {
			t.Errorf("hint %q", hint)
		}
		ids := eval[[]string](ctx, t, `[...document.querySelectorAll("main details.row")].slice(0, 2).map(d => d.id)`)
		if len(ids) != 2 {
			t.Fatalf("rows %v", ids)
		}
		at := func() string {
			return eval[string](ctx, t, `(document.activeElement.closest("details.row") || {id: ""}).id + "/" + document.querySelectorAll(".kbd-current").length`)
		}
		key(ctx, t, "j")
		if got := at(); got != ids[0]+"/1" {
			t.Errorf("after j the focus is in %q, want the first row %s", got, ids[0])
		}
		key(ctx, t, "j")
		if got := at(); got != ids[1]+"/1" {
			t.Errorf("after j j the focus is in %q, want the second row %s", got, ids[1])
		}
		key(ctx, t, "k")
		if got := at(); got != ids[0]+"/1" {
			t.Errorf("after k the focus is in %q, want the first row %s", got, ids[0])
		}
		key(ctx, t, kb.ArrowDown)
		if got := at(); got != ids[1]+"/1" {
			t.Errorf("after ↓ from a row the focus is in %q, want the second row %s", got, ids[1])
		}
		openJS := `document.getElementById("` + ids[1] + `").open`
		key(ctx, t, "o")
		if !eval[bool](ctx, t, openJS) {
			t.Error("o did not open the current row")
		}
		key(ctx, t, kb.Escape)
		if eval[bool](ctx, t, openJS) {
			t.Error("Esc did not close the current row")
		}
		key(ctx, t, "/")
		if name := eval[string](ctx, t, `document.activeElement.name || ""`); name != "q" {
			t.Fatalf("after / the focus is on %q, want the search field q", name)
		}
		key(ctx, t, "j")
		key(ctx, t, "o")
		value := eval[string](ctx, t, `document.activeElement.value`)
		current := eval[string](ctx, t, `document.querySelector(".kbd-current").id`)
		if value != "jo" || current != ids[1] {
			t.Errorf("typing j o in the search field: value %q, current row %s (want jo and %s)", value, current, ids[1])
		}
		key(ctx, t, kb.Escape)
		if tag := eval[string](ctx, t, `document.activeElement.tagName`); tag != "BODY" {
			t.Errorf("Esc in the search field left the focus on %s", tag)
		}
	})
	t.Run("following a link marks the page as loading, a download does not", func(t *testing.T) {
		// A listener on window runs after app.js's on document and stops
		// the navigation, so the page stays to be read.
		got := eval[[]string](ctx, t, `(() => {
			const stop = e => e.preventDefault();
			window.addEventListener("click", stop);
			const out = [];
			document.querySelector('a[href$="records.jsonl"]').click();
			out.push("download:" + document.documentElement.classList.contains("is-loading"));
			document.querySelector('nav a[href="/runs"]').click();
			out.push("link:" + document.documentElement.classList.contains("is-loading"));
			window.removeEventListener("click", stop);
			document.documentElement.classList.remove("is-loading");
			const ind = document.querySelector(".loading-indicator");
			out.push(ind.getAttribute("role") + ":" + ind.textContent);
			return out;
		})()`)
		if want := "download:false link:true status:불러오는 중…"; strings.Join(got, " ") != want {
			t.Errorf("got %v, want %s", got, want)
		}
	})
	t.Run("choosing a verdict puts it in the URL and shows only that group's rows", func(t *testing.T) {
		// Choose the option as a user would; app.js submits the filter form
		// when a dropdown changes.
		follow(ctx, t, soon(`const s = document.querySelector('select[name="verdict"]');
			s.value = "말투 어긋남";
			s.dispatchEvent(new Event("change", {bubbles: true}));`))
		do(ctx, t, chromedp.WaitVisible(chromedp.CSS(`section#g-speech details.row`)))
		loc := eval[string](ctx, t, `location.href`)
		u, err := url.Parse(loc)
		if err != nil {
			t.Fatal(err)
		}
		if u.Query().Get("verdict") != "말투 어긋남" {
			t.Errorf("location %s", loc)
		}
		classes := eval[[]string](ctx, t, `[...new Set([...document.querySelectorAll('details.row')].map(d => d.className))]`)
		if len(classes) != 1 || classes[0] != "row v-speech" {
			t.Errorf("row classes %v", classes)
		}
		if rows := eval[int](ctx, t, `document.querySelectorAll('details.row').length`); rows != 36 {
			t.Errorf("%d rows, want the 36 of 말투 어긋남", rows)
		}
		counts := eval[[]string](ctx, t, `[...document.querySelectorAll('section.group h2 .count')].map(e => e.innerText)`)
		// Under a filter the empty groups are hidden (issue 13 item 3).
		if want := "36회차"; strings.Join(counts, " ") != want {
			t.Errorf("group counts %v, want only the filtered group's %s", counts, want)
		}
	})
	t.Run("on the run list j marks the first run and o opens it", func(t *testing.T) {
		open(ctx, t, ts.URL+"/runs")
		if hint := eval[string](ctx, t, `document.querySelector("main .kbd-hint").innerText`); hint != "단축키: j/k 이동 · o 열기" {
			t.Errorf("hint %q", hint)
		}
		key(ctx, t, "j")
		if got := eval[string](ctx, t, `document.querySelector("tr.kbd-current a").getAttribute("href")`); got != "/runs/1" {
			t.Errorf("current row links to %q", got)
		}
		follow(ctx, t, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error { key(ctx, t, "o"); return nil }))
		if p := eval[string](ctx, t, `location.pathname`); p != "/runs/1" {
			t.Errorf("o opened %s", p)
		}
	})
	t.Run("on a review queue j/k move between the items and o opens the item's turn", func(t *testing.T) {
		open(ctx, t, ts.URL+"/runs/1/review/forbidden")
		if hint := eval[string](ctx, t, `document.querySelector("main .kbd-hint").innerText`); hint != "단축키: j/k 이동 · o 열기" {
			t.Errorf("hint %q", hint)
		}
		ids := eval[[]string](ctx, t, `[...document.querySelectorAll("main article.qitem")].map(a => a.id)`)
		if len(ids) != 15 {
			t.Fatalf("%d items, want the 15 금지 소재 접촉 records of the demo: %v", len(ids), ids)
		}
		focused := func() string { return eval[string](ctx, t, `document.activeElement.id`) }
		key(ctx, t, "jjk")
		if got := focused(); got != ids[0] {
			t.Errorf("after j j k the focus is on %q, want the first item %s", got, ids[0])
		}
		key(ctx, t, "j")
		if got := focused(); got != ids[1] {
			t.Errorf("after j the focus is on %q, want the second item %s", got, ids[1])
		}
		want := eval[string](ctx, t, `document.getElementById("`+ids[1]+`").querySelector("header a").href`)
		follow(ctx, t, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error { key(ctx, t, "o"); return nil }))
		if got := eval[string](ctx, t, `location.href`); got != want || !strings.Contains(got, "turn=") {
			t.Errorf("o opened %s, want the item's turn %s", got, want)
		}
	})
	t.Run("an upload shows its progress, then the new run's page", func(t *testing.T) {
		open(ctx, t, ts.URL+"/upload")
		turns, err := filepath.Abs(filepath.Join("..", "persona", "demo", "data", "turns.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		do(ctx, t, chromedp.SetUploadFiles(chromedp.CSS(`form.upload input[name="turns"]`), []string{turns}))
		// Record each state app.js gives the form; the window outlives the
		// document the answer replaces.
		eval[bool](ctx, t, `(() => {
			const f = document.querySelector("form.upload");
			window.uploadStates = [];
			new MutationObserver(() => window.uploadStates.push(f.dataset.upload)).observe(f, {attributes: true, attributeFilter: ["data-upload"]});
			return true;
		})()`)
		do(ctx, t, chromedp.Click(chromedp.CSS(`form.upload button[type="submit"]`)))
		waitFor(ctx, t, `["done", "failed"].includes(window.uploadStates.at(-1))`)
		states := eval[[]string](ctx, t, `window.uploadStates`)
		if states[len(states)-1] == "failed" {
			t.Fatalf("the upload failed: %v, %q", states, eval[string](ctx, t, `document.querySelector(".upload-progress").innerText`))
		}
		waitFor(ctx, t, `location.pathname === "/runs/2" && `+readyJS)
		if strings.Join(states, " ") != "sending processing done" {
			t.Errorf("upload states %v, want sending processing done", states)
		}
		title := eval[string](ctx, t, `document.title`)
		groups := eval[int](ctx, t, `document.querySelectorAll("section.group[id^='g-']").length`)
		if !strings.Contains(title, "실행 #2") || groups != 5 {
			t.Errorf("after the upload: title %q, %d groups", title, groups)
		}
	})
	t.Run("the static report draws Hangul with its inlined font, with nothing beside the file", func(t *testing.T) {
		var buf bytes.Buffer
		if err := web.WriteReport(context.Background(), db, 1, &buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "report.html")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		do(ctx, t, chromedp.Navigate("file://"+path))
		waitFor(ctx, t, `document.readyState === "complete"`)
		faces := eval[[]string](ctx, t, hangulFacesJS)
		if strings.Join(faces, " ") != "400:loaded 700:loaded" {
			t.Errorf("Evident Hangul faces in the report %v, want 400 and 700 loaded", faces)
		}
		if koreanSystemFont() {
			return
		}
		fonts, want := platformFonts(ctx, t, `main h1`), eval[int](ctx, t, countHangulJS(`main h1`))
		if want != 15 || fonts["Evident Hangul*"] != want {
			t.Errorf("the fonts of the report's <h1>: %v, want its %d Hangul syllables (15) in Evident Hangul", fonts, want)
		}
	})
	t.Run("a CRYSTAL item page loads its image under the site's CSP and a pair link jumps to its partner", func(t *testing.T) {
		open(ctx, t, ts.URL+"/crystal/demo/items/crys-001?model=paraglide-mini")
		do(ctx, t, chromedp.WaitVisible(chromedp.CSS(`li#ref-6`)))
		waitFor(ctx, t, `document.querySelector('.item-image img').complete`)
		if w := eval[int](ctx, t, `document.querySelector('.item-image img').naturalWidth`); w <= 0 {
			t.Errorf("image natural width %d: blocked or broken", w)
		}
		do(ctx, t, chromedp.Click(chromedp.CSS(`li#ref-6 a[href="#pred-4"]`)))
		waitFor(ctx, t, `location.hash === "#pred-4"`)
		if id := eval[string](ctx, t, `(document.querySelector(':target') || {id: ""}).id`); id != "pred-4" {
			t.Errorf("after the click the target is %q, want pred-4", id)
		}
		colours := eval[[]string](ctx, t, `['ref-6', 'pred-4', 'ref-2'].map(id => getComputedStyle(document.getElementById(id)).borderLeftColor)`)
		if colours[0] != colours[1] || colours[0] == colours[2] {
			t.Errorf("left borders ref-6 %s, pred-4 %s, unmatched ref-2 %s: a pair shares its colour, an unmatched step has none", colours[0], colours[1], colours[2])
		}
		eval[bool](ctx, t, `window.scrollTo(0, 0), true`)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		paths := []string{filepath.Join(t.TempDir(), "crystal.png")}
		if p := os.Getenv("EVIDENT_CRYSTAL_SCREENSHOT"); p != "" {
			paths = append(paths, p)
		}
		for _, p := range paths {
			if err := os.WriteFile(p, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// eval evaluates a JavaScript expression in the page and decodes its value
// (a promise's, once it settles).
func eval[T any](ctx context.Context, t *testing.T, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}
