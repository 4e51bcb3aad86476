package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/web"
)

// fakeClock is a settable clock for sessions and the login limit.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const goodToken = "correct horse battery staple"

// loginAs logs c in with token and reports the status of the POST.
func loginAs(t *testing.T, c *client, token string) int {
	t.Helper()
	form := csrfRE.FindStringSubmatch(c.ok("/login"))
	if form == nil {
		t.Fatal("no csrf token on /login")
	}
	return c.postForm("/login", url.Values{"csrf": {form[1]}, "token": {token}, "next": {"/runs/1"}}).status
}

// copyCookies gives other every cookie of c (a stolen cookie jar).
func copyCookies(c, other *client) {
	u, _ := url.Parse(c.base)
	other.http.Jar.SetCookies(u, c.http.Jar.Cookies(u))
}

func TestSessions(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	opts := web.Options{Token: goodToken, Now: clock.now, SessionIdle: time.Hour, SessionMaxAge: 24 * time.Hour}

	t.Run("logout revokes the session: a copy of its cookies no longer opens a page", func(t *testing.T) {
		c := serve(t, demoStore(t), opts)
		if st := loginAs(t, c, goodToken); st != http.StatusSeeOther {
			t.Fatalf("login: %d", st)
		}
		thief := newClient(t, c.base)
		copyCookies(c, thief)
		if p := thief.get("/runs/1"); p.status != http.StatusOK {
			t.Fatalf("before logout the copied cookies should work (same session): %d", p.status)
		}
		c.postForm("/logout", url.Values{"csrf": {c.csrf()}})
		if p := thief.get("/runs/1"); p.status != http.StatusSeeOther {
			t.Errorf("after logout the copied cookies still open /runs/1: %d", p.status)
		}
	})
	t.Run("a session ends after the idle limit without a request", func(t *testing.T) {
		c := serve(t, demoStore(t), opts)
		loginAs(t, c, goodToken)
		clock.add(59 * time.Minute)
		if p := c.get("/runs/1"); p.status != http.StatusOK {
			t.Fatalf("59 minutes idle: %d", p.status)
		}
		clock.add(61 * time.Minute)
		if p := c.get("/runs/1"); p.status != http.StatusSeeOther {
			t.Errorf("61 minutes idle with a 1 h limit: %d, want the login redirect", p.status)
		}
	})
	t.Run("a session ends at its maximum age however busy", func(t *testing.T) {
		c := serve(t, demoStore(t), opts)
		loginAs(t, c, goodToken)
		for range 23 {
			clock.add(time.Hour - time.Second)
			if p := c.get("/runs/1"); p.status != http.StatusOK {
				t.Fatalf("a busy session closed early: %d", p.status)
			}
		}
		clock.add(2 * time.Hour)
		if p := c.get("/runs/1"); p.status != http.StatusSeeOther {
			t.Errorf("past 24 h: %d", p.status)
		}
	})
	t.Run("the session id set before login is not the logged-in one (no fixation)", func(t *testing.T) {
		c := serve(t, demoStore(t), opts)
		c.ok("/login")
		planted := newClient(t, c.base)
		copyCookies(c, planted) // an attacker who set the victim's pre-login cookie
		loginAs(t, c, goodToken)
		if p := planted.get("/runs/1"); p.status != http.StatusSeeOther {
			t.Errorf("the pre-login session id opened a page after the victim logged in: %d", p.status)
		}
	})
	t.Run("one address's wrong tokens are limited: the right one is 429 too, until a token refills", func(t *testing.T) {
		c := serve(t, demoStore(t), opts) // every client of a test server is 127.0.0.1: one address
		for i := range web.DefaultAuthFailuresPerMinute {
			cl := newClient(t, c.base) // a new browser each time: the limit is the address's, not the cookie's
			if st := loginAs(t, cl, "wrong token number "+strings.Repeat("x", i)); st != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d", i+1, st)
			}
		}
		late := newClient(t, c.base)
		if st := loginAs(t, late, goodToken); st != http.StatusTooManyRequests {
			t.Errorf("the right token after %d failures from this address: %d, want 429", web.DefaultAuthFailuresPerMinute, st)
		}
		clock.add(6 * time.Second) // 10 a minute: one token every 6 s
		if st := loginAs(t, late, goodToken); st != http.StatusSeeOther {
			t.Errorf("the right token 6 s later: %d", st)
		}
	})
}

func TestTokenStrength(t *testing.T) {
	const want = "want at least 16 characters, at least 8 distinct, no whitespace or control characters to serve off loopback"
	tests := []struct {
		name, addr, token string
		ok                bool
		says              string // in the error, besides the length
	}{
		{"a short token is refused off loopback", "0.0.0.0:8080", "a", false, ""},
		{"a 15-character token is refused", "0.0.0.0:8080", "fifteen-chars-x", false, ""},
		{"a 16-character token of 11 distinct characters is accepted", "0.0.0.0:8080", "sixteen-chars-xx", true, ""},
		{"a short token is refused on loopback too", "127.0.0.1:8080", "abc", false, ""},
		{"no token on loopback is fine", "127.0.0.1:8080", "", true, ""},
		{"six Hangul syllables are six characters, not eighteen bytes", "0.0.0.0:8080", "가나다라마바", false, ""},
		{"one character repeated is refused off loopback, saying how many distinct", "0.0.0.0:8080", strings.Repeat("a", 32), false,
			want + "; got 32 characters, 1 distinct"},
		{"a repeated word of 7 distinct characters is refused off loopback", "[::]:8080", "passwordpassword", false,
			want + "; got 16 characters, 7 distinct"},
		{"a passphrase with spaces is refused off loopback", ":8080", goodToken, false,
			want + "; got 28 characters, 13 distinct, whitespace or control characters"},
		{"a token ending in a newline is refused off loopback", "192.0.2.1:8080", "s3cret-token-of-16+\n", false,
			"got 20 characters, 15 distinct, whitespace or control characters"},
		{"a passphrase with spaces is accepted on loopback (length only)", "127.0.0.1:8080", goodToken, true, ""},
		{"a repeated character is accepted on loopback (length only)", "localhost:8080", strings.Repeat("a", 16), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, check := range []struct {
				flag string
				f    func(addr, token string) error
			}{{"--token", web.CheckAddr}, {"--api-token", web.CheckAPIToken}} {
				err := check.f(tt.addr, tt.token)
				if (err == nil) != tt.ok {
					t.Fatalf("%s %q on %q: %v, want ok=%v", check.flag, tt.token, tt.addr, err, tt.ok)
				}
				if err == nil {
					continue
				}
				if !strings.Contains(err.Error(), "at least 16") || !strings.Contains(err.Error(), check.flag) {
					t.Errorf("message %q does not name %s and say how long", err, check.flag)
				}
				if !strings.Contains(err.Error(), tt.says) {
					t.Errorf("message %q\ndoes not say %q", err, tt.says)
				}
				if len(tt.token) > 3 && strings.Contains(err.Error(), tt.token) {
					t.Errorf("message %q prints the token", err)
				}
			}
		})
	}
	if _, err := web.New(demoStore(t), web.Options{Token: "short"}); err == nil {
		t.Error("web.New accepted a 5-character token")
	}
}
