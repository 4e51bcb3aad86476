package web_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"evident/store"
	"evident/web"
)

// demoStore is an in-memory store holding the judged demo (run 1), as
// evident serve leaves it on its first start.
func demoStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	run, created, err := web.EnsureDemo(context.Background(), db)
	if err != nil || !created || run.ID != 1 {
		t.Fatalf("EnsureDemo = %d, %v, %v", run.ID, created, err)
	}
	return db
}

// client drives a running screen like a browser: it keeps cookies and does
// not follow redirects, so tests see the 303s.
type client struct {
	t    *testing.T
	base string
	http *http.Client
}

func serve(t *testing.T, db *store.DB, o web.Options) *client {
	t.Helper()
	if o.Log == nil {
		o.Log = log.New(io.Discard, "", 0)
	}
	s, err := web.New(db, o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return newClient(t, ts.URL)
}

func newClient(t *testing.T, base string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one response.
type page struct {
	status int
	body   string
	header http.Header
}

func (c *client) do(req *http.Request) page {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return page{resp.StatusCode, string(b), resp.Header}
}

func (c *client) get(path string) page {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.do(req)
}

// ok fetches path and fails unless it answers 200.
func (c *client) ok(path string) string {
	c.t.Helper()
	p := c.get(path)
	if p.status != http.StatusOK {
		c.t.Fatalf("GET %s: %d\n%s", path, p.status, p.body)
	}
	return p.body
}

func (c *client) postForm(path string, form url.Values) page {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

// upload posts a multipart form: fields first, then files (name → file name
// and content).
func (c *client) upload(path string, fields map[string]string, files map[string][2]string) page {
	c.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for field, f := range files {
		w, err := mw.CreateFormFile(field, f[0])
		if err != nil {
			c.t.Fatal(err)
		}
		io.WriteString(w, f[1])
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, c.base+path, &buf)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf opens a form page and returns the token its forms carry.
func (c *client) csrf() string {
	c.t.Helper()
	m := csrfRE.FindStringSubmatch(c.ok("/upload"))
	if m == nil {
		c.t.Fatal("no csrf token on /upload")
	}
	return m[1]
}

// demoFile reads one of the demo's data files.
func demoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "persona", "demo", "data", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rows counts the turn rows on a page.
func rows(body string) int { return strings.Count(body, `<details class="row `) }

// section returns the part of body from the element with id to the next
// element with one of the stop ids (or the end).
func section(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no element with id %q", id)
	}
	rest := body[i:]
	if j := strings.Index(rest, "</section>"); j >= 0 {
		return rest[:j]
	}
	return rest
}

func mustContain(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}
