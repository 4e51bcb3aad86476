package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"evident/web"
)

// TestARCBrowser opens an attempt page of the ARC view in a real headless
// Chromium: every frame image loads under the page's Content-Security-Policy
// as a 512×512 picture drawn cell by cell, and the transcript page shows the
// hostile prompt as text with no script run.
func TestARCBrowser(t *testing.T) {
	ctx := newBrowser(t, 1200, 900)
	f := newARCFixture(t)
	c := serveARC(t, f.dir, web.Options{})

	t.Run("every frame of an attempt loads as a 512×512 image, drawn pixelated", func(t *testing.T) {
		open(ctx, t, c.base+"/arc/lights-run/attempts/level_01_attempt_01")
		do(ctx, t, chromedp.WaitVisible(chromedp.CSS(`#step-1 img`)))
		// Lazy images below the fold load once scrolled to; wait on their
		// state, not on time.
		eval[bool](ctx, t, `document.querySelectorAll("img").forEach(i => i.loading = "eager"), true`)
		waitFor(ctx, t, `[...document.images].every(i => i.complete)`)
		n := eval[int](ctx, t, `document.images.length`)
		sizes := eval[[]string](ctx, t, `[...document.images].filter(i => i.naturalWidth !== 512 || i.naturalHeight !== 512).map(i => i.src)`)
		rendering := eval[string](ctx, t, `getComputedStyle(document.querySelector("#step-1 img")).imageRendering`)
		if n != len(f.level1)+2 || len(sizes) != 0 || rendering != "pixelated" {
			t.Errorf("%d images (want %d), not 512×512: %v, image-rendering %q", n, len(f.level1)+2, sizes, rendering)
		}
	})
	t.Run("the hostile prompt is text on the transcript page", func(t *testing.T) {
		open(ctx, t, c.base+"/arc/lights-run/transcript")
		do(ctx, t, chromedp.WaitVisible(chromedp.CSS(`#line-1`)))
		text := eval[string](ctx, t, `document.querySelector("#line-1 pre").innerText`)
		injected := eval[int](ctx, t, `document.querySelectorAll("main script, main img[src=x]").length`)
		if text != hostilePrompt || injected != 0 {
			t.Errorf("prompt shown as %q, %d injected elements", text, injected)
		}
	})
}
