package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"evident/arc/api"
	"evident/arc/session"
)

// fake is a scripted HTTP server: answer decides each response; requests
// are kept.
type fake struct {
	mu   sync.Mutex
	reqs []*http.Request
	h    *httptest.Server
}

func newFake(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *fake {
	f := &fake{}
	f.h = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reqs = append(f.reqs, r)
		n := len(f.reqs)
		f.mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(f.h.Close)
	return f
}

func (f *fake) count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.reqs) }

func gamesOK(w http.ResponseWriter) {
	json.NewEncoder(w).Encode([]api.GameInfo{{GameID: "g1", Title: "G"}})
}

// sleeps records the waits of an API instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestRateLimit(t *testing.T) {
	t.Run("a 429 with Retry-After seconds is retried after exactly that wait", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n <= 2 {
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(429)
				json.NewEncoder(w).Encode(api.ErrorBody{Error: api.CodeRateLimited})
				return
			}
			gamesOK(w)
		})
		var s sleeps
		a, _ := NewAPI(f.h.URL, APIOptions{Sleep: s.sleep})
		gs, err := a.Games(context.Background())
		if err != nil || len(gs) != 1 || f.count() != 3 || len(s.d) != 2 || s.d[0] != 3*time.Second || s.d[1] != 3*time.Second {
			t.Fatalf("games %v, err %v, %d requests, waits %v", gs, err, f.count(), s.d)
		}
	})
	t.Run("a 429 without Retry-After backs off 1 s, 2 s, 4 s", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n <= 3 {
				w.WriteHeader(429)
				return
			}
			gamesOK(w)
		})
		var s sleeps
		a, _ := NewAPI(f.h.URL, APIOptions{Sleep: s.sleep})
		if _, err := a.Games(context.Background()); err != nil || len(s.d) != 3 || s.d[0] != time.Second || s.d[1] != 2*time.Second || s.d[2] != 4*time.Second {
			t.Fatalf("err %v, waits %v", err, s.d)
		}
	})
	t.Run("Retry-After as an HTTP date waits until that time", func(t *testing.T) {
		if d := retryWait(time.Unix(1000, 0).UTC().Format(http.TimeFormat), 0, time.Unix(995, 0)); d != 5*time.Second {
			t.Errorf("wait %v", d)
		}
		if d := retryWait("86400", 0, time.Now()); d != MaxRetryWait {
			t.Errorf("a day is capped to %v, got %v", MaxRetryWait, d)
		}
		if d := retryWait("soon", 20, time.Now()); d != maxBackoff {
			t.Errorf("backoff cap %v, got %v", maxBackoff, d)
		}
	})
	t.Run("past MaxRetries the 429 is returned as ErrRateLimited", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			json.NewEncoder(w).Encode(api.ErrorBody{Error: api.CodeRateLimited, Message: "slow down"})
		})
		var s sleeps
		a, _ := NewAPI(f.h.URL, APIOptions{Sleep: s.sleep, MaxRetries: 2})
		_, err := a.Games(context.Background())
		var he *HTTPError
		if !errors.Is(err, ErrRateLimited) || !errors.As(err, &he) || he.Code != api.CodeRateLimited || f.count() != 3 {
			t.Fatalf("err %v after %d requests", err, f.count())
		}
		if err.Error() != "GET /api/games: 429 RATE_LIMIT_EXCEEDED: slow down" {
			t.Errorf("message %q", err)
		}
	})
	t.Run("a cancelled context stops the back-off", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		a, _ := NewAPI(f.h.URL, APIOptions{})
		if _, err := a.Games(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestGameOverError(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		over   bool
	}{
		{"a 400 with error GAME_OVER matches ErrGameOver", 400, `{"error":"GAME_OVER","message":"only RESET"}`, true},
		{"a 400 whose text says game over matches ErrGameOver", 400, `Game over: the game is in GAME_OVER state`, true},
		{"a 400 whose only field says the game is over (baseline1's shape) matches", 400, `{"error":"The game is over."}`, true},
		{"a 400 whose message says game over in lower case matches", 400, `{"error":"VALIDATION_ERROR","message":"game over, send RESET"}`, true},
		{"a 400 saying game-over with a hyphen matches", 400, `{"error":"SERVER_ERROR","message":"cannot act: game-over"}`, true},
		{"a 400 in plain text GAME IS OVER matches", 400, `GAME IS OVER`, true},
		{"a 400 about a game overlay does not", 400, `{"error":"VALIDATION_ERROR","message":"game overlay missing"}`, false},
		{"a 400 game not found does not", 400, `{"error":"SERVER_ERROR","message":"game ls20 not found"}`, false},
		{"a 400 for another reason does not", 400, `{"error":"VALIDATION_ERROR","message":"bad x"}`, false},
		{"a 500 never does", 500, `GAME_OVER`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			})
			a, _ := NewAPI(f.h.URL, APIOptions{})
			_, err := a.Act(context.Background(), "g1", "guid", session.Action{Name: "ACTION1"}, nil)
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != c.status || errors.Is(err, ErrGameOver) != c.over {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestCookiesAndKey(t *testing.T) {
	t.Run("cookies set by the server are sent back, and survive a save and restore", func(t *testing.T) {
		var mu sync.Mutex
		var seen []string
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			c, err := r.Cookie("AWSALB")
			if err == nil {
				seen = append(seen, c.Value)
			} else {
				seen = append(seen, "")
			}
			mu.Unlock()
			if n == 1 {
				http.SetCookie(w, &http.Cookie{Name: "AWSALB", Value: "node-7", Path: "/"})
			}
			gamesOK(w)
		})
		a, _ := NewAPI(f.h.URL, APIOptions{})
		a.Games(context.Background())
		a.Scorecard(context.Background(), "c", "")
		saved := a.Cookies()
		b, _ := NewAPI(f.h.URL, APIOptions{})
		b.SetCookies(saved)
		b.Act(context.Background(), "g1", "guid", session.Action{Name: "ACTION1"}, nil)
		if len(seen) != 3 || seen[0] != "" || seen[1] != "node-7" || seen[2] != "node-7" {
			t.Fatalf("cookies seen %q, saved %v", seen, saved)
		}
	})
	t.Run("the API key goes in X-API-Key on every request", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(api.HeaderAPIKey) != "secret" {
				w.WriteHeader(401)
				return
			}
			gamesOK(w)
		})
		a, _ := NewAPI(f.h.URL, APIOptions{Key: "secret"})
		if _, err := a.Games(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ACTION6 sends x and y, other actions neither", func(t *testing.T) {
		var bodies []map[string]any
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
			var m map[string]any
			json.NewDecoder(r.Body).Decode(&m)
			bodies = append(bodies, m)
			json.NewEncoder(w).Encode(api.FrameResponse{})
		})
		a, _ := NewAPI(f.h.URL, APIOptions{})
		a.Act(context.Background(), "g", "u", session.Action{Name: "ACTION6", X: 15, Y: 47}, json.RawMessage(`{"why":"test"}`))
		a.Act(context.Background(), "g", "u", session.Action{Name: "ACTION2"}, nil)
		if len(bodies) != 2 || bodies[0]["x"] != 15.0 || bodies[0]["y"] != 47.0 || bodies[0]["reasoning"] == nil || bodies[1]["x"] != nil {
			t.Fatalf("bodies %v", bodies)
		}
		if _, err := a.Act(context.Background(), "g", "u", session.Action{Name: "RESET"}, nil); err == nil {
			t.Error("Act sent RESET")
		}
	})
	t.Run("NewAPI refuses a URL that is not absolute http(s)", func(t *testing.T) {
		for _, u := range []string{"", "three.arcprize.org", "ftp://x", "http://"} {
			if _, err := NewAPI(u, APIOptions{}); err == nil {
				t.Errorf("%q accepted", u)
			}
		}
	})
	t.Run("a missing full frame is no error, a broken server is", func(t *testing.T) {
		f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader([]int{404, 500}[(n-1)%2]) })
		a, _ := NewAPI(f.h.URL, APIOptions{})
		if _, _, ok, err := a.FullFrame(context.Background(), "u"); ok || err != nil {
			t.Errorf("404: ok %v err %v", ok, err)
		}
		if _, _, ok, err := a.FullFrame(context.Background(), "u"); ok || err == nil {
			t.Errorf("500: ok %v err %v", ok, err)
		}
	})
}

func TestParseAction(t *testing.T) {
	for _, c := range []struct {
		in   string
		want session.Action
		ok   bool
	}{
		{"ACTION1", session.Action{Name: "ACTION1"}, true},
		{"action7", session.Action{Name: "ACTION7"}, true},
		{"reset", session.Action{Name: "RESET"}, true},
		{`{"name":"ACTION6","x":15,"y":47}`, session.Action{Name: "ACTION6", X: 15, Y: 47}, true},
		{`{"name": "ACTION2"}`, session.Action{Name: "ACTION2"}, true},
		{"ACTION6", session.Action{}, false},
		{"ACTION8", session.Action{}, false},
		{"ACTION01", session.Action{}, false},
		{`{"name":"ACTION6","x":64,"y":0}`, session.Action{}, false},
		{`{"name":"ACTION6","x":1}`, session.Action{}, false},
		{`{"name":"ACTION1","x":1,"y":1}`, session.Action{}, false},
		{`{"x":1,"y":1}`, session.Action{}, false},
		{`{"name":"ACTION6","x":1,"y":1,"z":2}`, session.Action{}, false},
	} {
		got, err := ParseAction(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseAction(%s) = %+v, %v", c.in, got, err)
		}
	}
}
