package web

import (
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
)

// The screen's Korean web font (issue 13 item 4): "Evident Hangul", a subset
// of NanumGothic 3.021 (SIL OFL 1.1, renamed as the licence asks of a
// Modified Version) made by web/fontgen/make.sh, embedded under
// static/fonts/ with its licence (static/fonts/OFL.txt). Two weights, 400
// (247 KB) and 700 (315 KB), woff2; together 563 KB of the binary.
//
// Decisions where the spec is silent:
//   - style.css names the font after the system Korean fonts (Pretendard,
//     Apple SD Gothic Neo, Noto Sans KR, Malgun Gothic) and before system-ui:
//     a machine with a Korean font keeps it and never downloads this one; a
//     machine without one gets Evident Hangul for the Hangul and the CJK
//     punctuation only (the @font-face unicode-range), Latin staying in the
//     system face.
//   - Font files carry a version in their name (.v1) and are served with a
//     year-long immutable cache; make.sh's output with a new version gets a
//     new name.
//   - The static report holds the same @font-face rules with the files as
//     data: URIs (inlineFonts), so it stays one file and reads the same on a
//     machine without Korean fonts (about 750 KB of base64 per report).

// fontURLRE matches a url() of style.css that names a file of static/fonts/.
var fontURLRE = regexp.MustCompile(`url\("fonts/([a-z0-9.-]+\.woff2)"\)`)

// inlineFonts returns css with every url("fonts/NAME.woff2") replaced by a
// data:font/woff2;base64 URI of the embedded static/fonts/NAME.woff2, for
// the static report's inlined stylesheet (handlers.go writeReport). A name
// with no embedded file is left as it is (TestFontFaces checks that every
// name style.css uses is embedded).
func inlineFonts(css string) string {
	return fontURLRE.ReplaceAllStringFunc(css, func(m string) string {
		name := fontURLRE.FindStringSubmatch(m)[1]
		b, err := staticFS.ReadFile("static/fonts/" + name)
		if err != nil {
			return m
		}
		return `url("data:font/woff2;base64,` + base64.StdEncoding.EncodeToString(b) + `")`
	})
}

// fontCache is the Cache-Control of a font file: its name changes when its
// bytes do (the .vN in the name), so a browser may keep it a year.
const fontCache = "public, max-age=31536000, immutable"

// fontHandler serves static/fonts/ (mounted at /static/fonts/): woff2 files
// as font/woff2 and OFL.txt as text, each with the year-long cache; any
// other path is 404.
func fontHandler(static fs.FS) http.Handler {
	files := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := path.Base(r.URL.Path)
		switch {
		case !strings.HasPrefix(r.URL.Path, "/static/fonts/") || strings.Contains(strings.TrimPrefix(r.URL.Path, "/static/fonts/"), "/"):
			http.NotFound(w, r)
			return
		case strings.HasSuffix(name, ".woff2"):
			w.Header().Set("Content-Type", "font/woff2")
		case name == "OFL.txt":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		default:
			http.NotFound(w, r)
			return
		}
		if _, err := fs.Stat(static, "fonts/"+name); err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", fontCache)
		http.StripPrefix("/static/", files).ServeHTTP(w, r)
	})
}
