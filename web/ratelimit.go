package web

// Wrong tokens, per client address (README "Security model", "The
// screen"; package doc, "Safety"). The screen's /login and the live API's
// "Authorization: Bearer" check take their attempts through one
// authLimiter, so a guesser gets one budget whichever door it knocks on.

import (
	"container/list"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits on wrong tokens (login form and bearer tokens together).
const (
	// DefaultAuthFailuresPerMinute is how many wrong tokens one client
	// address may send: a burst of this many, then this many a minute
	// (one every 6 s). Past it that address is answered 429 with
	// Retry-After, even for the right token, which it is then not
	// checked against. Options.AuthFailuresPerMinute changes it.
	DefaultAuthFailuresPerMinute = 10
	// DefaultAuthFailuresAllPerMinute is the ceiling for all addresses
	// together (burst and per minute, as above): 60 times one address's
	// limit, so no single address can reach it. Past it every address
	// that has not given a right token within TrustedClientFor is answered
	// 429; one that has is still checked. Options.AuthFailuresAllPerMinute
	// changes it.
	DefaultAuthFailuresAllPerMinute = 600
	// MaxAuthClients is how many client addresses' wrong-token counts are
	// kept; past it the least recently seen is forgotten, so a flood of
	// addresses costs a fixed table (measured: 1.5 MiB of heap with this
	// table and the trusted one full), and the ceiling for all addresses
	// bounds what forgetting gives back.
	MaxAuthClients = 4096
	// MaxTrustedClients is how many addresses that gave a right token are
	// remembered (least recently seen forgotten first).
	MaxTrustedClients = 1024
	// TrustedClientFor is how long after its last right token an address
	// is exempt from the ceiling for all addresses (not from its own).
	TrustedClientFor = 24 * time.Hour
)

// clientKey is the address a request's limits are kept under: its IPv4
// address, or its IPv6 address's /64 (one host or site usually holds a
// whole /64, so its addresses count as one). It is the connection's
// address (http.Request.RemoteAddr), never a header such as
// X-Forwarded-For, which any client can write: behind a reverse proxy every
// client shares the proxy's key. An address that does not parse is the
// zero Addr, one shared key.
func clientKey(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	var a netip.Addr
	if err == nil {
		a = ap.Addr()
	} else if a, err = netip.ParseAddr(r.RemoteAddr); err != nil {
		return netip.Addr{}
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64) // cannot fail: 64 bits of an IPv6 address
		return p.Addr()
	}
	return a
}

// lru is a table of at most max entries; put past it drops the least
// recently used one. Not safe for concurrent use (authLimiter locks).
type lru[K comparable, V any] struct {
	max int
	ll  *list.List // of *lruEntry, most recent first
	m   map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	k K
	v V
}

func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{max: max, ll: list.New(), m: make(map[K]*list.Element)}
}

// get returns k's value and marks it used.
func (c *lru[K, V]) get(k K) (V, bool) {
	e, ok := c.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).v, true
}

// put sets k's value, marks it used and drops the least recently used
// entry past max.
func (c *lru[K, V]) put(k K, v V) {
	if e, ok := c.m[k]; ok {
		e.Value.(*lruEntry[K, V]).v = v
		c.ll.MoveToFront(e)
		return
	}
	c.m[k] = c.ll.PushFront(&lruEntry[K, V]{k: k, v: v})
	if c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*lruEntry[K, V]).k)
	}
}

func (c *lru[K, V]) len() int { return c.ll.Len() }

// authLimiter limits wrong tokens per client address (a token bucket of
// golang.org/x/time/rate each) and for all addresses together. The zero
// value is not usable; see newAuthLimiter.
type authLimiter struct {
	now                   func() time.Time
	perClient, allClients int // burst and per minute

	mu      sync.Mutex
	clients *lru[netip.Addr, *rate.Limiter] // addresses with wrong tokens
	trusted *lru[netip.Addr, time.Time]     // addresses' last right token
	all     *rate.Limiter
}

func newAuthLimiter(now func() time.Time, perClient, allClients int) *authLimiter {
	if now == nil {
		now = time.Now
	}
	if perClient <= 0 {
		perClient = DefaultAuthFailuresPerMinute
	}
	if allClients <= 0 {
		allClients = DefaultAuthFailuresAllPerMinute
	}
	return &authLimiter{now: now, perClient: perClient, allClients: allClients,
		clients: newLRU[netip.Addr, *rate.Limiter](MaxAuthClients),
		trusted: newLRU[netip.Addr, time.Time](MaxTrustedClients),
		all:     rate.NewLimiter(perMinute(allClients), allClients)}
}

func perMinute(n int) rate.Limit { return rate.Every(time.Minute / time.Duration(n)) }

// authRefusal says why an attempt was not checked: Wait is how long until
// it may be (at least a second, whole seconds), All whether the ceiling for
// all addresses refused it rather than the client's own limit, Limit the
// limit that refused it (a minute's worth).
type authRefusal struct {
	Wait  time.Duration
	All   bool
	Limit int
}

// RetryAfter is Wait in whole seconds, rounded up, for the Retry-After
// header.
func (a *authRefusal) RetryAfter() int { return int((a.Wait + time.Second - 1) / time.Second) }

// try checks one token of client c with check (which must not block: it
// runs under the limiter's lock, so concurrent guesses from one address
// cannot overshoot its limit). It returns check's answer, or a refusal
// without calling check when c is over its limit, or when all addresses
// are over theirs and c has not given a right token within
// TrustedClientFor. A wrong token counts against c and against all; a
// right one counts nothing and makes c trusted.
func (l *authLimiter) try(c netip.Addr, check func() bool) (bool, *authRefusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	lim, seen := l.clients.get(c)
	if seen {
		if w, over := waitFor(lim, now); over {
			return false, &authRefusal{Wait: w, Limit: l.perClient}
		}
	}
	if w, over := waitFor(l.all, now); over {
		if at, ok := l.trusted.get(c); !ok || now.Sub(at) > TrustedClientFor {
			return false, &authRefusal{Wait: w, All: true, Limit: l.allClients}
		}
	}
	if check() {
		l.trusted.put(c, now)
		return true, nil
	}
	if !seen {
		lim = rate.NewLimiter(perMinute(l.perClient), l.perClient)
	}
	l.clients.put(c, lim)
	lim.AllowN(now, 1)
	l.all.AllowN(now, 1)
	return false, nil
}

// waitFor reports whether lim has no whole token at now, and how long
// until it has one (at least a second).
func waitFor(lim *rate.Limiter, now time.Time) (time.Duration, bool) {
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0, false
	}
	w := time.Duration((1 - tokens) / float64(lim.Limit()) * float64(time.Second))
	return max(w, time.Second), true
}

// bearerAuthed is the live API's token check (api.go, serveAPI): h, the
// Authorization header, must be "Bearer T" with T one of tokens. It
// answers 401 for a missing or wrong token and 429 with Retry-After when
// r's address is over its limit (authLimiter.try), and reports whether r
// may go on. A request without the header counts nothing: it guesses
// nothing.
func (s *Server) bearerAuthed(w http.ResponseWriter, r *http.Request, tokens []string) bool {
	h := r.Header.Get("Authorization")
	if h == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="evident"`)
		apiFail(w, http.StatusUnauthorized, apiError{Error: "missing or wrong token: send Authorization: Bearer TOKEN"})
		return false
	}
	ok, refused := s.limits.try(clientKey(r), func() bool { return bearerOK(h, tokens) })
	if refused != nil {
		w.Header().Set("Retry-After", fmt.Sprint(refused.RetryAfter()))
		apiFail(w, http.StatusTooManyRequests, apiError{Error: refused.english()})
		return false
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="evident"`)
		apiFail(w, http.StatusUnauthorized, apiError{Error: "missing or wrong token: send Authorization: Bearer TOKEN"})
		return false
	}
	return true
}

// english is the live API's 429 message.
func (a *authRefusal) english() string {
	who := "this address"
	if a.All {
		who = "all addresses together"
	}
	return fmt.Sprintf("too many wrong tokens from %s (at most %d a minute); retry in %d s", who, a.Limit, a.RetryAfter())
}

// korean is the login page's 429 detail.
func (a *authRefusal) korean() string {
	who := "이 주소에서"
	if a.All {
		who = "모든 주소를 합쳐"
	}
	return fmt.Sprintf("%s 틀린 토큰이 1분에 %d번을 넘었습니다. %d초 뒤에 다시 해 주세요.", who, a.Limit, a.RetryAfter())
}

// checkLimits fills in the defaults of the wrong-token limits and the
// upload pace, and refuses a negative one, naming the option.
func (o *Options) checkLimits() error {
	for _, v := range []struct {
		name string
		n    int64
	}{
		{"AuthFailuresPerMinute", int64(o.AuthFailuresPerMinute)},
		{"AuthFailuresAllPerMinute", int64(o.AuthFailuresAllPerMinute)},
		{"UploadGrace", int64(o.UploadGrace)},
		{"UploadMinRate", o.UploadMinRate},
	} {
		if v.n < 0 {
			return fmt.Errorf("web.Options.%s is %d; it must be 0 (the default) or positive", v.name, v.n)
		}
	}
	if o.UploadGrace > 0 && o.UploadGrace < time.Second {
		return fmt.Errorf("web.Options.UploadGrace is %v; it must be at least 1s", o.UploadGrace)
	}
	if o.AuthFailuresPerMinute == 0 {
		o.AuthFailuresPerMinute = DefaultAuthFailuresPerMinute
	}
	if o.AuthFailuresAllPerMinute == 0 {
		o.AuthFailuresAllPerMinute = DefaultAuthFailuresAllPerMinute
	}
	if o.UploadGrace == 0 {
		o.UploadGrace = DefaultUploadGrace
	}
	if o.UploadMinRate == 0 {
		o.UploadMinRate = DefaultUploadMinRate
	}
	return nil
}
