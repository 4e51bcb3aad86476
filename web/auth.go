package web

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Session limits (package doc, "Safety"). A session is server-side
// state keyed by the random session cookie: logging out deletes it, so a
// copied cookie stops working at once, and it ends by itself after
// SessionIdle without a request or SessionMaxAge after the login.
const (
	// DefaultSessionIdle ends a logged-in session after 12 hours without
	// a request.
	DefaultSessionIdle = 12 * time.Hour
	// DefaultSessionMaxAge ends a logged-in session 7 days after its login
	// whatever its use.
	DefaultSessionMaxAge = 7 * 24 * time.Hour
	// MaxSessions is the most logged-in sessions kept; a login past it
	// ends the one used least recently, so memory stays bounded.
	MaxSessions = 4096
	// MinTokenLength is the shortest --token (and --api-token) accepted,
	// in characters (runes), on any address: 16 random characters are
	// beyond guessing at the wrong-token limits (ratelimit.go).
	MinTokenLength = 16
	// MinTokenDistinct is how many different characters a token needs to
	// serve off loopback (CheckAddr, CheckAPIToken): "aaaa…", "abab…" or
	// "passwordpassword" (7) are refused, while a random token passes
	// (openssl rand -base64 24 has about 25 distinct; a 16-character hex
	// token fewer than 8 about once in a hundred).
	MinTokenDistinct = 8
)

// authSession is one logged-in browser.
type authSession struct {
	login, seen time.Time
}

// sessions is the server's table of logged-in sessions. The zero value is
// not usable; see newSessions. Wrong tokens are limited per client address
// by authLimiter (ratelimit.go).
type sessions struct {
	now          func() time.Time
	idle, maxAge time.Duration
	mu           sync.Mutex
	m            map[string]*authSession
}

func newSessions(now func() time.Time, idle, maxAge time.Duration) *sessions {
	if now == nil {
		now = time.Now
	}
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if maxAge <= 0 {
		maxAge = DefaultSessionMaxAge
	}
	return &sessions{now: now, idle: idle, maxAge: maxAge, m: map[string]*authSession{}}
}

// newSID is a fresh random session id (32 bytes, base64url).
func newSID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authed reports whether sid is a live logged-in session, and marks its use.
func (s *sessions) authed(sid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[sid]
	if !ok {
		return false
	}
	now := s.now()
	if now.Sub(a.seen) > s.idle || now.Sub(a.login) > s.maxAge {
		delete(s.m, sid)
		return false
	}
	a.seen = now
	return true
}

// login records sid as logged in, first dropping expired sessions and, at
// MaxSessions, the least recently used one.
func (s *sessions) login(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.m) >= MaxSessions {
		var oldest string
		var at time.Time
		for k, a := range s.m {
			if now.Sub(a.seen) > s.idle || now.Sub(a.login) > s.maxAge {
				delete(s.m, k)
				continue
			}
			if oldest == "" || a.seen.Before(at) {
				oldest, at = k, a.seen
			}
		}
		if len(s.m) >= MaxSessions {
			delete(s.m, oldest)
		}
	}
	s.m[sid] = &authSession{login: now, seen: now}
}

// logout ends sid.
func (s *sessions) logout(sid string) {
	s.mu.Lock()
	delete(s.m, sid)
	s.mu.Unlock()
}

// checkToken is the token rule: empty (no login) or at least MinTokenLength
// characters.
func checkToken(token string) error {
	if n := utf8.RuneCountInString(token); token != "" && n < MinTokenLength {
		return fmt.Errorf("--token is %d characters; use at least %d random characters (e.g. openssl rand -base64 24)", n, MinTokenLength)
	}
	return nil
}

// strongToken is the rule for a token that serves off loopback (flag
// names it in the error): at least MinTokenLength characters, at least
// MinTokenDistinct distinct ones, and no whitespace or control character
// (a bearer header's token is read trimmed, so a token ending in a space
// could never be sent). The error says what is wanted and what the token
// has, never the token itself.
func strongToken(flag, token string) error {
	n, seen, space := 0, map[rune]bool{}, false
	for _, r := range token {
		n++
		seen[r] = true
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = true
		}
	}
	if n >= MinTokenLength && len(seen) >= MinTokenDistinct && !space {
		return nil
	}
	got := fmt.Sprintf("%d characters, %d distinct", n, len(seen))
	if space {
		got += ", whitespace or control characters"
	}
	return fmt.Errorf("%s: want at least %d characters, at least %d distinct, no whitespace or control characters to serve off loopback; got %s (e.g. openssl rand -base64 24)",
		flag, MinTokenLength, MinTokenDistinct, got)
}

// CheckAPIToken is CheckAddr's rule for --api-token (Options.APIToken) on
// addr: empty (none) or at least MinTokenLength characters anywhere, as
// New also asks, and off loopback strong as --token must be (at least
// MinTokenDistinct distinct characters, no whitespace or control
// character). The error names the flag, never the token.
func CheckAPIToken(addr, token string) error {
	if err := checkAPIToken(token); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if token != "" && !isLoopback(host) {
		return strongToken("--api-token", token)
	}
	return nil
}
