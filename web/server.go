package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"evident/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// DefaultMaxUpload caps one upload request (all files together).
const DefaultMaxUpload = 64 << 20

// Options configure a Server.
type Options struct {
	// Token, when set, is asked for on /login before any page is shown.
	// Required to serve on an address other than loopback (CheckAddr).
	Token string
	// MaxUpload caps the bytes of one upload request; 0 means DefaultMaxUpload.
	MaxUpload int64
	// MaxLiveBody caps the bytes of one live API request body (POST
	// /api/v1/turns); 0 means DefaultMaxLiveBody.
	MaxLiveBody int64
	// Workers judging an upload; 0 means GOMAXPROCS.
	Workers int
	// Log receives one line per failed request; nil means log.Default().
	Log *log.Logger
	// SessionIdle and SessionMaxAge end a logged-in session after that
	// long without a request, or after its login; 0 means
	// DefaultSessionIdle and DefaultSessionMaxAge.
	SessionIdle, SessionMaxAge time.Duration
	// Now is the clock for sessions and the wrong-token limits; nil means
	// time.Now.
	Now func() time.Time
	// AuthFailuresPerMinute is how many wrong tokens (login form and
	// bearer tokens together) one client address may send, as a burst and
	// then per minute; AuthFailuresAllPerMinute the same for all addresses
	// together (ratelimit.go). 0 means DefaultAuthFailuresPerMinute (10)
	// and DefaultAuthFailuresAllPerMinute (600); New refuses a negative one.
	AuthFailuresPerMinute, AuthFailuresAllPerMinute int
	// UploadGrace and UploadMinRate are the upload pace (uploadpace.go):
	// an upload (/upload, /gold) must bring at least UploadMinRate bytes a
	// second, averaged over each UploadGrace from when it takes its slot,
	// or it is cut with 408. 0 means DefaultUploadGrace (10 s) and
	// DefaultUploadMinRate (32 KiB/s); New refuses a negative one.
	UploadGrace   time.Duration
	UploadMinRate int64
	// ARC is the folder of the ARC view (package doc, "ARC"): an agent
	// workspace, or a folder whose subfolders are workspaces; "" serves the
	// view without runs.
	ARC string
	// APIToken, when set, is a second token the live API (/api/, api.go)
	// accepts as "Authorization: Bearer"; the screen's Token is accepted too.
	APIToken string
}

// Server is the screen. It is an http.Handler; create it with New.
type Server struct {
	db    *store.DB
	opt   Options
	key   []byte
	mux   *http.ServeMux
	pages map[string]*template.Template
	css   string
	jobs  sync.Mutex // one import or judge at a time
	auth  *sessions
	// limits counts wrong tokens per client address (ratelimit.go).
	limits *authLimiter

	rejudges *jobs          // review decisions' background re-judges (jobs.go)
	indexer  *searchIndexer // search indexes of stored runs (indexer.go)

	crystal *crystalRuns // CRYSTAL score runs: the demo and this lifetime's uploads

	arc      *arcSource                    // the ARC view's folder; nil without Options.ARC
	arcPages map[string]*template.Template // the ARC view's pages (arc.go)

	api apiCache // the live API's judges (api.go)

	cacheMu sync.Mutex
	loadMu  sync.Mutex
	cache   map[int64]*runData
	order   []int64
}

// New returns the screen over db.
func New(db *store.DB, o Options) (*Server, error) {
	if o.MaxUpload <= 0 {
		o.MaxUpload = DefaultMaxUpload
	}
	if o.MaxLiveBody <= 0 {
		o.MaxLiveBody = DefaultMaxLiveBody
	}
	if o.Log == nil {
		o.Log = log.Default()
	}
	if err := checkToken(o.Token); err != nil {
		return nil, err
	}
	if err := checkAPIToken(o.APIToken); err != nil {
		return nil, err
	}
	if err := o.checkLimits(); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	css, err := staticFS.ReadFile("static/style.css")
	if err != nil {
		return nil, err
	}
	demoRuns, err := demoCrystal(context.Background())
	if err != nil {
		return nil, err
	}
	s := &Server{db: db, opt: o, key: key, pages: pages, css: inlineFonts(string(css)), cache: map[int64]*runData{},
		crystal: &crystalRuns{runs: demoRuns}, auth: newSessions(o.Now, o.SessionIdle, o.SessionMaxAge),
		limits: newAuthLimiter(o.Now, o.AuthFailuresPerMinute, o.AuthFailuresAllPerMinute)}
	s.rejudges = newJobs(s)
	s.indexer = newSearchIndexer(s)
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(sub)))
	m.Handle("GET /static/fonts/", fontHandler(sub))
	m.HandleFunc("GET /{$}", s.home)
	m.HandleFunc("GET /runs", s.runsPage)
	m.HandleFunc("GET /runs/{id}", s.runPage)
	m.HandleFunc("GET /runs/{id}/disagree", s.disagreePage)
	m.HandleFunc("GET /runs/{id}/report.html", s.reportDownload)
	m.HandleFunc("GET /runs/{id}/records.jsonl", s.recordsExport)
	m.HandleFunc("GET /runs/{id}/records.csv", s.recordsCSV)
	m.HandleFunc("GET /runs/{id}/review", s.reviewIndex)
	for _, q := range queuePages {
		m.HandleFunc("GET /runs/{id}/review/"+q.Slug, s.reviewPage(q.Slug))
	}
	m.HandleFunc("POST /runs/{id}/review/forbidden", s.decideForbidden)
	m.HandleFunc("POST /runs/{id}/review/offcanon", s.decideOffCanon)
	m.HandleFunc("POST /runs/{id}/review/endings", s.decideEnding)
	m.HandleFunc("POST /runs/{id}/review/undo", s.undoDecision)
	m.HandleFunc("POST /review/who", s.setWho)
	m.HandleFunc("GET /review/decisions.jsonl", s.decisionsExport)
	m.HandleFunc("GET /review/jobs/{job}", s.jobHandler)
	m.HandleFunc("POST /review/jobs/{job}/retry", s.retryJob)
	m.HandleFunc("GET /upload", s.uploadForm)
	m.HandleFunc("POST /upload", s.upload)
	m.HandleFunc("POST /gold", s.goldUpload)
	m.HandleFunc("POST /datasets/{id}/judge", s.judgeDataset)
	m.HandleFunc("GET /crystal", s.crystalRunsPage)
	m.HandleFunc("POST /crystal/score", s.crystalScore)
	m.HandleFunc("GET /crystal/{run}", s.crystalRunPage)
	m.HandleFunc("GET /crystal/{run}/table.txt", s.crystalDownload("text"))
	m.HandleFunc("GET /crystal/{run}/table.json", s.crystalDownload("json"))
	m.HandleFunc("GET /crystal/{run}/items.jsonl", s.crystalDownload("items"))
	m.HandleFunc("GET /crystal/{run}/items/{id}", s.crystalItem)
	m.HandleFunc("GET /crystal/{run}/items/{id}/image", s.crystalImage)
	m.HandleFunc("POST /api/v1/turns", s.apiTurns)
	m.HandleFunc("GET /api/v1/turns/{turn_id}", s.apiTurn)
	m.HandleFunc("GET /login", s.loginForm)
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.logout)
	if err := s.arcSetup(m); err != nil {
		return nil, err
	}
	s.mux = m
	return s, nil
}

// parsePages builds one template set per page: the shared layout and
// partials plus the page's own "content".
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range []string{"run", "disagree", "review", "runs", "upload", "login", "error",
		"crystal_runs", "crystal_run", "crystal_item", "job"} {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// Cookie names.
const (
	sessionCookie = "evident_sid"
	authCookie    = "evident_auth"
)

type ctxKey int

const sidKey ctxKey = 0

// ServeHTTP applies the safety layers (package doc, "Safety") and routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")

	if s.serveAPI(w, r) { // the live API: bearer tokens, no sessions (api.go)
		return
	}
	if s.opt.Token == "" && !loopbackHost(r.Host) {
		s.fail(w, r, http.StatusForbidden, "이 주소로는 열 수 없습니다",
			"토큰 없이 띄운 서버는 127.0.0.1·localhost·[::1] 주소로만 답합니다. 다른 주소에서 쓰려면 --token 을 주고 다시 띄우세요.")
		return
	}
	sid := s.session(w, r)
	r = r.WithContext(context.WithValue(r.Context(), sidKey, sid))

	if s.opt.Token != "" && !s.authed(r, sid) && r.URL.Path != "/login" && !strings.HasPrefix(r.URL.Path, "/static/") {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		s.fail(w, r, http.StatusForbidden, "로그인이 필요합니다", "토큰으로 로그인한 뒤 다시 보내 주세요.")
		return
	}
	if r.Method == http.MethodPost {
		if crossSite(r) {
			s.fail(w, r, http.StatusForbidden, "다른 사이트에서 보낸 요청입니다", "이 화면에서 보낸 양식만 받습니다.")
			return
		}
		// The three upload routes check the CSRF token themselves after
		// reading their multipart parts under the upload limit; every other
		// POST is small and checked here, whatever its encoding.
		if r.URL.Path != "/upload" && r.URL.Path != "/gold" && r.URL.Path != "/crystal/score" {
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			if !s.csrfOK(r, r.PostFormValue("csrf")) {
				s.csrfFail(w, r)
				return
			}
		}
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether a Host header names this machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return isLoopback(host)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckAddr refuses a listen address that is not loopback unless a token is
// set: the screen shows every reply of the store and takes uploads.
//
// A token, wherever it is given, must be at least MinTokenLength
// characters; off loopback it must also be strong (at least
// MinTokenDistinct distinct characters, no whitespace or control
// character), and the error says what is wanted without quoting it.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if err := checkToken(token); err != nil {
		return err
	}
	if token != "" && !isLoopback(host) {
		return strongToken("--token", token)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	if host == "" {
		host = "every interface"
	}
	return fmt.Errorf("refusing to serve on %s (%s) without --token: only loopback (127.0.0.1, ::1, localhost) is open without one", addr, host)
}

// crossSite reports a POST that a browser says came from another site.
func crossSite(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host != r.Host
}

// session returns the browser's session id, setting a new random one when
// the cookie is missing or malformed.
func (s *Server) session(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if b, err := base64.RawURLEncoding.DecodeString(c.Value); err == nil && len(b) == 32 {
			return c.Value
		}
	}
	sid := newSID()
	setSessionCookie(w, r, sid)
	return sid
}

func setSessionCookie(w http.ResponseWriter, r *http.Request, sid string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sid, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
}

func (s *Server) mac(purpose, sid string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(sid))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func sidOf(r *http.Request) string {
	sid, _ := r.Context().Value(sidKey).(string)
	return sid
}

// csrfToken is the token every form of this session posts back.
func (s *Server) csrfToken(r *http.Request) string { return s.mac("csrf", sidOf(r)) }

func (s *Server) csrfOK(r *http.Request, got string) bool {
	want := s.csrfToken(r)
	return got != "" && hmac.Equal([]byte(got), []byte(want))
}

func (s *Server) csrfFail(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusForbidden, "양식 확인 값(CSRF)이 맞지 않습니다",
		"이 화면에서 연 양식으로만 보낼 수 있습니다. 페이지를 새로 고친 뒤 다시 보내 주세요.")
}

// authed reports a live logged-in session: the server's session table holds
// sid, and the auth cookie is this session's (so neither cookie works
// alone, nor after logout or expiry).
func (s *Server) authed(r *http.Request, sid string) bool {
	c, err := r.Cookie(authCookie)
	return err == nil && hmac.Equal([]byte(c.Value), []byte(s.mac("auth", sid))) && s.auth.authed(sid)
}

// tokenOK compares a login token with the configured one in constant time
// (both hashed first, so their lengths do not leak either).
func (s *Server) tokenOK(got string) bool {
	a := sha256.Sum256([]byte(got))
	b := sha256.Sum256([]byte(s.opt.Token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	if s.opt.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, "login", &loginPage{Next: safeNext(r.URL.Query().Get("next"))})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.opt.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	next := safeNext(r.PostFormValue("next"))
	token := r.PostFormValue("token") // read before the limiter's lock
	ok, refused := s.limits.try(clientKey(r), func() bool { return s.tokenOK(token) })
	if refused != nil {
		w.Header().Set("Retry-After", fmt.Sprint(refused.RetryAfter()))
		s.fail(w, r, http.StatusTooManyRequests, "로그인 시도가 너무 많습니다", refused.korean())
		return
	}
	if !ok {
		s.render(w, r, http.StatusUnauthorized, "login", &loginPage{Next: next, Failed: true})
		return
	}
	// A new session id at login: one set before it (by anyone) is not
	// the logged-in one.
	sid := newSID()
	s.auth.login(sid)
	setSessionCookie(w, r, sid)
	http.SetCookie(w, &http.Cookie{Name: authCookie, Value: s.mac("auth", sid), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	s.auth.logout(sidOf(r))
	http.SetCookie(w, &http.Cookie{Name: authCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// safeNext keeps a redirect target on this site: a path-absolute URL
// ("/runs/1?x=y") and nothing a browser could read as another origin. Any
// control character (browsers drop TAB, CR and LF before parsing, so
// "/\t/evil.example" becomes "//evil.example"), any backslash (read as "/"),
// a leading "//", and anything url.Parse does not see as a bare path and
// query (scheme, host, user info, opaque) give "/" instead (issue 15 item 5).
func safeNext(next string) string {
	for i := 0; i < len(next); i++ {
		if c := next[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "/"
		}
	}
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.HasPrefix(u.Path, "//") || strings.HasPrefix(u.Path, "/\\") {
		return "/"
	}
	return next
}

type loginPage struct {
	Next   string
	Failed bool
}

// NewHTTPServer returns an http.Server for h with the timeouts and limits the
// screen needs: slow or idle clients cannot hold connections, and an upload
// has minutes to arrive and be judged.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute,
		WriteTimeout:      10 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// ListenAndServe serves h on addr (CheckAddr must allow it) until ctx ends,
// then shuts down gracefully. ready, when set, is called with the bound
// address once the listener is open (addr may have port 0).
func ListenAndServe(ctx context.Context, addr, token string, h http.Handler, ready func(net.Addr)) error {
	if err := CheckAddr(addr, token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := NewHTTPServer(addr, h)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		if c, ok := h.(interface{ Close() error }); ok { // a Server's background re-judges (jobs.go)
			c.Close()
		}
	}()
	if ready != nil {
		ready(ln.Addr())
	}
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}
