package web_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"evident/web"
)

// addrClient is a browser or API client at one network address: requests
// go to the handler in-process with that RemoteAddr, as a connection from
// it would arrive (a test server's clients are all 127.0.0.1).
type addrClient struct {
	t    *testing.T
	h    http.Handler
	addr string
	jar  *cookiejar.Jar
}

var screenURL, _ = url.Parse("http://evident.test/")

func newAddrClient(t *testing.T, h http.Handler, addr string) *addrClient {
	jar, _ := cookiejar.New(nil)
	return &addrClient{t: t, h: h, addr: addr, jar: jar}
}

func (c *addrClient) do(req *http.Request) *httptest.ResponseRecorder {
	req.RemoteAddr = c.addr
	for _, k := range c.jar.Cookies(screenURL) {
		req.AddCookie(k)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	c.jar.SetCookies(screenURL, rec.Result().Cookies())
	return rec
}

// login posts token on the login form, as a browser does after opening it.
func (c *addrClient) login(token string) *httptest.ResponseRecorder {
	c.t.Helper()
	form := csrfRE.FindStringSubmatch(c.do(httptest.NewRequest(http.MethodGet, "http://evident.test/login", nil)).Body.String())
	if form == nil {
		c.t.Fatal("no csrf token on /login")
	}
	req := httptest.NewRequest(http.MethodPost, "http://evident.test/login",
		strings.NewReader(url.Values{"csrf": {form[1]}, "token": {token}, "next": {"/runs/1"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

// bearer asks the live API for a turn with token ("": no Authorization
// header).
func (c *addrClient) bearer(token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://evident.test/api/v1/turns/T-none", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return c.do(req)
}

// authStep is one request of a scenario: a client at an address tries a
// token through the login form or the live API.
type authStep struct {
	name   string
	who    string // the address
	door   string // "login" or "bearer"
	token  string
	times  int           // sent this many times (1 when 0), each answered want
	after  time.Duration // the clock moves on this much first
	want   int
	retry  string // Retry-After of a 429
	saying string // in the body
}

// runAuthSteps plays steps in order against one server.
func runAuthSteps(t *testing.T, o web.Options, clock *fakeClock, steps []authStep) {
	o.Now, o.Log = clock.now, log.New(io.Discard, "", 0)
	s, err := web.New(demoStore(t), o)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*addrClient{}
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			clock.add(st.after)
			c := clients[st.who]
			if c == nil {
				c = newAddrClient(t, s, st.who)
				clients[st.who] = c
			}
			c.t = t
			for i := range max(st.times, 1) {
				var rec *httptest.ResponseRecorder
				if st.door == "login" {
					rec = c.login(st.token)
				} else {
					rec = c.bearer(st.token)
				}
				if rec.Code != st.want {
					t.Fatalf("try %d: %d, want %d\n%s", i+1, rec.Code, st.want, rec.Body.String())
				}
				if got := rec.Header().Get("Retry-After"); got != st.retry {
					t.Fatalf("try %d: Retry-After %q, want %q", i+1, got, st.retry)
				}
				if !strings.Contains(rec.Body.String(), st.saying) {
					t.Fatalf("try %d: the answer does not say %q:\n%s", i+1, st.saying, rec.Body.String())
				}
			}
		})
		if !ok {
			return
		}
	}
}

const apiToken = "api-token-9f8e7d6c5b4a"

// Wrong tokens are limited per client address, the login form and the
// live API's bearer tokens together: 10 at once, then one every 6 s
// (web.DefaultAuthFailuresPerMinute). Another address's right token, on
// either door, is never refused because of them. (Before, the login limit
// was one counter for everyone and bearer tokens had none.)
func TestWrongTokensAreLimitedPerClientAddressOnBothDoors(t *testing.T) {
	const a, b = "203.0.113.5:40001", "198.51.100.7:52000"
	clock := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	perAddr := "이 주소에서 틀린 토큰이 1분에 10번을 넘었습니다. 6초 뒤에 다시 해 주세요."
	runAuthSteps(t, web.Options{Token: goodToken, APIToken: apiToken}, clock, []authStep{
		{name: "A's first five wrong bearer tokens are 401", who: a, door: "bearer", token: "guess-guess-guess-guess", times: 5,
			want: http.StatusUnauthorized, saying: "missing or wrong token"},
		{name: "A's next five wrong tokens on the login form are 401 (one budget for both doors)", who: a, door: "login", token: "guess", times: 5,
			want: http.StatusUnauthorized, saying: "토큰이 맞지 않습니다"},
		{name: "A's eleventh wrong bearer token is 429 with Retry-After", who: a, door: "bearer", token: "guess-guess-guess-guess",
			want: http.StatusTooManyRequests, retry: "6",
			saying: `"error":"too many wrong tokens from this address (at most 10 a minute); retry in 6 s"`},
		{name: "A's right token is 429 too: it is not checked", who: a, door: "bearer", token: apiToken,
			want: http.StatusTooManyRequests, retry: "6"},
		{name: "A's right token on the login form is 429", who: a, door: "login", token: goodToken,
			want: http.StatusTooManyRequests, retry: "6", saying: perAddr},
		{name: "B's right bearer token goes through (404: no such turn)", who: b, door: "bearer", token: apiToken,
			want: http.StatusNotFound, saying: "no live turn"},
		{name: "B's login goes through", who: b, door: "login", token: goodToken, want: http.StatusSeeOther},
		{name: "B's own wrong token is 401, not 429", who: b, door: "bearer", token: "nope-nope-nope-nope",
			want: http.StatusUnauthorized},
		{name: "3 s later A is still refused, 3 s to go", who: a, door: "bearer", token: apiToken, after: 3 * time.Second,
			want: http.StatusTooManyRequests, retry: "3", saying: "retry in 3 s"},
		{name: "6 s after its last failure A's right token goes through", who: a, door: "bearer", token: apiToken, after: 3 * time.Second,
			want: http.StatusNotFound},
		{name: "A has one try a refill: a wrong one is 401", who: a, door: "bearer", token: "guess-guess-guess-guess",
			want: http.StatusUnauthorized},
		{name: "and the next is refused again", who: a, door: "login", token: goodToken,
			want: http.StatusTooManyRequests, retry: "6", saying: perAddr},
		{name: "a minute on, A has its ten again", who: a, door: "bearer", token: "guess-guess-guess-guess", after: time.Minute, times: 10,
			want: http.StatusUnauthorized},
		{name: "a request without the header guesses nothing: 401, not 429", who: "192.0.2.9:1", door: "bearer", token: "", times: 20,
			want: http.StatusUnauthorized},
	})
}

// An IPv6 client is its /64: the addresses of one /64 share a limit, the
// next /64 has its own. An IPv4-mapped IPv6 address is its IPv4 address.
func TestAnIPv6ClientIsLimitedByItsSlash64(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	runAuthSteps(t, web.Options{Token: goodToken}, clock, []authStep{
		{name: "ten wrong tokens from 2001:db8:1:2::a", who: "[2001:db8:1:2::a]:5000", door: "bearer", token: "x-guess-x-guess-x", times: 10,
			want: http.StatusUnauthorized},
		{name: "another address of the same /64 is refused", who: "[2001:db8:1:2:ffff:ffff:ffff:ffff]:6000", door: "bearer", token: goodToken,
			want: http.StatusTooManyRequests, retry: "6"},
		{name: "the next /64 is not", who: "[2001:db8:1:3::a]:5000", door: "bearer", token: goodToken,
			want: http.StatusNotFound},
		{name: "ten wrong tokens from ::ffff:192.0.2.1", who: "[::ffff:192.0.2.1]:1", door: "bearer", token: "x-guess-x-guess-x", times: 10,
			want: http.StatusUnauthorized},
		{name: "192.0.2.1 is the same client", who: "192.0.2.1:2", door: "login", token: goodToken,
			want: http.StatusTooManyRequests, retry: "6"},
	})
}

// The ceiling for all addresses together (here 30 a minute, 2 s a token)
// refuses an address that has given no right token, whatever it sends;
// one that logged in or called the API with the right token within
// web.TrustedClientFor is still checked. Its own limit still applies to it.
func TestTheCeilingForAllAddressesSparesAddressesThatGaveTheRightToken(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	all := "모든 주소를 합쳐 틀린 토큰이 1분에 30번을 넘었습니다. 2초 뒤에 다시 해 주세요."
	steps := []authStep{
		{name: "the owner logs in before the attack", who: "198.51.100.7:1", door: "login", token: goodToken, want: http.StatusSeeOther},
		{name: "an integration calls the API before the attack", who: "198.51.100.8:1", door: "bearer", token: goodToken, want: http.StatusNotFound},
	}
	for i := range 3 {
		steps = append(steps, authStep{name: fmt.Sprintf("attacker %d sends its ten wrong tokens", i+1),
			who: fmt.Sprintf("203.0.113.%d:1", i+1), door: "bearer", token: "x-guess-x-guess-x", times: 10, want: http.StatusUnauthorized})
	}
	steps = append(steps,
		authStep{name: "a fourth attacker is refused before its first guess", who: "203.0.113.4:1", door: "bearer", token: "x-guess-x-guess-x",
			want: http.StatusTooManyRequests, retry: "2", saying: "too many wrong tokens from all addresses together (at most 30 a minute); retry in 2 s"},
		authStep{name: "a new address with the right token is refused too", who: "192.0.2.50:1", door: "login", token: goodToken,
			want: http.StatusTooManyRequests, retry: "2", saying: all},
		authStep{name: "the owner logs in again", who: "198.51.100.7:2", door: "login", token: goodToken, want: http.StatusSeeOther},
		authStep{name: "the integration's calls go on", who: "198.51.100.8:2", door: "bearer", token: goodToken, times: 3, want: http.StatusNotFound},
		authStep{name: "the integration's own wrong tokens still count against it", who: "198.51.100.8:2", door: "bearer", token: "x-guess-x-guess-x",
			times: 10, want: http.StatusUnauthorized},
		authStep{name: "and past ten it is refused by its own limit", who: "198.51.100.8:2", door: "bearer", token: goodToken,
			want: http.StatusTooManyRequests, retry: "6"},
		authStep{name: "2 s later the new address gets in", who: "192.0.2.50:1", door: "login", token: goodToken, after: 2 * time.Second,
			want: http.StatusSeeOther},
	)
	runAuthSteps(t, web.Options{Token: goodToken, AuthFailuresAllPerMinute: 30}, clock, steps)
}

// With the defaults one address cannot reach the ceiling for all: guessing
// as fast as it is let for ten minutes (one try a second from 0 to 599 s:
// 10 at once, then one every 6 s, 10 + ⌊599/6⌋ = 109 checked), it leaves a new
// address's login alone. (Before, ten wrong logins from anyone locked
// everyone out for a minute.)
func TestOneAddressGuessingForTenMinutesDoesNotLockOthersOut(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s, err := web.New(demoStore(t), web.Options{Token: goodToken, Now: clock.now, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	attacker := newAddrClient(t, s, "203.0.113.5:1")
	counts := map[int]int{}
	for range 600 { // one a second for ten minutes
		counts[attacker.bearer("x-guess-x-guess-x").Code]++
		clock.add(time.Second)
	}
	if counts[http.StatusUnauthorized] != 109 || counts[http.StatusTooManyRequests] != 491 {
		t.Fatalf("answers %v, want 109 checked (10 + one every 6 s) and 491 refused", counts)
	}
	if rec := newAddrClient(t, s, "198.51.100.7:1").login(goodToken); rec.Code != http.StatusSeeOther {
		t.Fatalf("another address's login: %d\n%s", rec.Code, rec.Body.String())
	}
	if rec := newAddrClient(t, s, "198.51.100.8:1").login("wrong"); rec.Code != http.StatusUnauthorized {
		t.Fatalf("another address's wrong token: %d, want 401 (checked)", rec.Code)
	}
}

// New refuses a negative limit, naming the option.
func TestNegativeLimitsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    web.Options
		says string
	}{
		{"a negative per-address limit", web.Options{AuthFailuresPerMinute: -1}, "web.Options.AuthFailuresPerMinute is -1"},
		{"a negative ceiling", web.Options{AuthFailuresAllPerMinute: -5}, "web.Options.AuthFailuresAllPerMinute is -5"},
		{"a negative upload rate", web.Options{UploadMinRate: -1}, "web.Options.UploadMinRate is -1"},
		{"an upload grace under a second", web.Options{UploadGrace: time.Millisecond}, "web.Options.UploadGrace is 1ms; it must be at least 1s"},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			if _, err := web.New(demoStore(t), tc.o); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want %q", err, tc.says)
			}
		})
	}
}
