package web_test

import (
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

	"github.com/chromedp/chromedp"

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
	msg := "no Chromium: install Debian's chromium (apt-get install -y chromium), put chromium, chromium-browser or google-chrome on PATH, or set CHROME_PATH"
	if os.Getenv("EVIDENT_REQUIRE_ALL") == "1" {
		t.Fatal(msg + " (EVIDENT_REQUIRE_ALL=1 turns this skip into a failure)")
	}
	t.Skip(msg)
	return ""
}

// TestBrowser drives the screen in a real headless Chromium: open the demo
// run, expand a row, read its evidence table and the ten-check panel, filter
// by verdict, and save a screenshot (also to $EVIDENT_SCREENSHOT when set;
// the README's docs/screen.png is made that way).
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	s, err := web.New(demoStore(t), web.Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s) // listens on 127.0.0.1
	t.Cleanup(ts.Close)

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
		chromedp.UserDataDir(t.TempDir()),
		// Chromium makes scratch folders (org.chromium.Chromium.*) in
		// TMPDIR and does not always remove them: keep them in the test's.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(1440, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()
	do := func(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}

	// T-010116 is the first 금지 소재 접촉 row of the demo; its evidence cites
	// the lexicon row 투표 → 현실 정치.
	const row = `details[id="t-T-010116"]`
	t.Run("the screen opens on the demo run grouped by verdict", func(t *testing.T) {
		do(t,
			chromedp.EmulateViewport(1440, 1000),
			chromedp.Navigate(ts.URL+"/"),
			chromedp.WaitVisible(chromedp.CSS(`section#g-forbidden`)),
		)
		title := eval[string](ctx, t, `document.title`)
		groups := eval[int](ctx, t, `document.querySelectorAll("section.group[id^='g-']").length`)
		if !strings.Contains(title, "실행 #1") || groups != 5 {
			t.Errorf("title %q, %d groups", title, groups)
		}
	})
	t.Run("expanding a row shows its evidence table with the seed's values", func(t *testing.T) {
		do(t,
			chromedp.Click(chromedp.CSS(row+` > summary`)),
			chromedp.WaitVisible(chromedp.CSS(row+` table.evidence`)),
		)
		open := eval[bool](ctx, t, `document.querySelector('`+row+`').open`)
		height := eval[float64](ctx, t, `document.querySelector('`+row+` table.evidence').getBoundingClientRect().height`)
		if !open || height <= 0 {
			t.Fatalf("open %v, table height %v", open, height)
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
	t.Run("choosing a verdict puts it in the URL and shows only that group's rows", func(t *testing.T) {
		// Choose the option as a user would; app.js submits the filter form
		// when a dropdown changes.
		eval[bool](ctx, t, `(() => {
			const s = document.querySelector('select[name="verdict"]');
			s.value = "말투 어긋남";
			s.dispatchEvent(new Event("change", {bubbles: true}));
			return true;
		})()`)
		deadline := time.Now().Add(20 * time.Second)
		for !eval[bool](ctx, t, `location.search.includes("verdict=") && document.readyState === "complete"`) {
			if time.Now().After(deadline) {
				t.Fatal("the filter did not load")
			}
			time.Sleep(100 * time.Millisecond)
		}
		do(t, chromedp.WaitVisible(chromedp.CSS(`section#g-speech details.row`)))
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
		if want := "0회차 0회차 36회차 0회차 0회차"; strings.Join(counts, " ") != want {
			t.Errorf("group counts %v, want %s", counts, want)
		}
	})
	t.Run("a CRYSTAL item page loads its image under the site's CSP and a pair link jumps to its partner", func(t *testing.T) {
		do(t,
			chromedp.Navigate(ts.URL+"/crystal/demo/items/crys-001?model=paraglide-mini"),
			chromedp.WaitVisible(chromedp.CSS(`li#ref-6`)),
		)
		deadline := time.Now().Add(20 * time.Second)
		for !eval[bool](ctx, t, `document.querySelector('.item-image img').complete`) {
			if time.Now().After(deadline) {
				t.Fatal("the image did not load")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if w := eval[int](ctx, t, `document.querySelector('.item-image img').naturalWidth`); w <= 0 {
			t.Errorf("image natural width %d: blocked or broken", w)
		}
		do(t, chromedp.Click(chromedp.CSS(`li#ref-6 a[href="#pred-4"]`)))
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

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](ctx context.Context, t *testing.T, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}
