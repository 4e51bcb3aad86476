package web

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// Session and login limits (issue 15 item 4). A session is server-side
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
	// MinTokenLength is the shortest --token accepted, in characters
	// (runes): 16 random characters are beyond guessing at the login rate
	// limit.
	MinTokenLength = 16
	// LoginFailuresPerMinute is how many wrong tokens the server takes per
	// minute from all clients together; past it /login answers 429 until
	// the minute is over, whoever asks.
	LoginFailuresPerMinute = 10
)

// authSession is one logged-in browser.
type authSession struct {
	login, seen time.Time
}

// sessions is the server's table of logged-in sessions and the global
// failed-login counter. The zero value is not usable; see newSessions.
type sessions struct {
	now           func() time.Time
	idle, maxAge  time.Duration
	mu            sync.Mutex
	m             map[string]*authSession
	windowStart   time.Time
	windowFailure int
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

// loginAllowed reports whether /login may check a token now, and when not,
// how long until it may.
func (s *sessions) loginAllowed() (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if now.Sub(s.windowStart) >= time.Minute {
		s.windowStart, s.windowFailure = now, 0
	}
	if s.windowFailure >= LoginFailuresPerMinute {
		return false, time.Minute - now.Sub(s.windowStart)
	}
	return true, 0
}

// failed counts one wrong token against the current minute.
func (s *sessions) failed() {
	s.mu.Lock()
	s.windowFailure++
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
