package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"evident/web"
)

var (
	fontURLRE    = regexp.MustCompile(`url\("fonts/([^"]+)"\)`)
	inlineFontRE = regexp.MustCompile(`url\("data:font/woff2;base64,([A-Za-z0-9+/=]+)"\)`)
)

func TestFontFaces(t *testing.T) {
	db := demoStore(t)
	c := serve(t, db, web.Options{})
	css := c.ok("/static/style.css")
	names := fontURLRE.FindAllStringSubmatch(css, -1)
	if len(names) != 2 || names[0][1] != "evident-hangul-400.v1.woff2" || names[1][1] != "evident-hangul-700.v1.woff2" {
		t.Fatalf("style.css names the fonts %q, want the 400 and 700 weights", names)
	}
	served := map[string][]byte{}
	t.Run("each font style.css names is served as font/woff2 with a year-long immutable cache", func(t *testing.T) {
		total := 0
		for _, m := range names {
			p := c.get("/static/fonts/" + m[1])
			if p.status != http.StatusOK || p.header.Get("Content-Type") != "font/woff2" ||
				p.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.HasPrefix(p.body, "wOF2") {
				t.Errorf("%s: %d %q %q %q", m[1], p.status, p.header.Get("Content-Type"), p.header.Get("Cache-Control"), p.body[:min(4, len(p.body))])
			}
			served[m[1]] = []byte(p.body)
			total += len(p.body)
		}
		// Issue 13 item 4 allows the binary to grow by up to 2 MB.
		if total > 2<<20 {
			t.Errorf("the fonts take %d bytes, over 2 MiB", total)
		}
	})
	t.Run("the licence is served beside the fonts and names the font's origin", func(t *testing.T) {
		p := c.get("/static/fonts/OFL.txt")
		if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "text/plain") {
			t.Fatalf("%d %q", p.status, p.header.Get("Content-Type"))
		}
		mustContain(t, p.body, "SIL OPEN FONT LICENSE", "Version 1.1", "Reserved Font Name", "NanumGothic 3.021", "Evident Hangul")
	})
	t.Run("a path that is not one of the font files is 404", func(t *testing.T) {
		for _, path := range []string{"/static/fonts/nope.woff2", "/static/fonts/", "/static/fonts/evident-hangul-400.v1.ttf"} {
			if p := c.get(path); p.status != http.StatusNotFound {
				t.Errorf("%s: %d", path, p.status)
			}
		}
	})
	t.Run("pages let fonts and the upload's request come from this origin only", func(t *testing.T) {
		csp := c.get("/runs").header.Get("Content-Security-Policy")
		mustContain(t, csp, "default-src 'none'", "font-src 'self'", "connect-src 'self'")
	})
	t.Run("the static report holds both fonts as data: URIs, byte for byte the served files", func(t *testing.T) {
		var buf bytes.Buffer
		if err := web.WriteReport(context.Background(), db, 1, &buf); err != nil {
			t.Fatal(err)
		}
		html := buf.String()
		if strings.Contains(html, `url("fonts/`) {
			t.Error("the report still points at a font file beside it")
		}
		got := inlineFontRE.FindAllStringSubmatch(html, -1)
		if len(got) != 2 {
			t.Fatalf("%d inlined fonts, want 2", len(got))
		}
		for i, m := range got {
			b, err := base64.StdEncoding.DecodeString(m[1])
			if err != nil || !bytes.Equal(b, served[names[i][1]]) {
				t.Errorf("inlined font %d (%d bytes, %v) differs from %s (%d bytes)", i, len(b), err, names[i][1], len(served[names[i][1]]))
			}
		}
	})
}
