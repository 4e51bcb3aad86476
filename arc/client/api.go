package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"evident/arc/api"
	"evident/arc/frame"
	"evident/arc/session"
	"evident/internal/backoff"
)

// Back-off of the REST client on 429 (spec arc.md: "429
// RATE_LIMIT_EXCEEDED → back off").
const (
	// DefaultMaxRetries is how many times one request is retried after a
	// 429 before the error is returned.
	DefaultMaxRetries = 8
	// MaxRetryWait caps one wait, whatever Retry-After says.
	MaxRetryWait = 10 * time.Minute
	// firstBackoff is the wait after the first 429 without Retry-After;
	// it doubles each retry up to maxBackoff.
	firstBackoff = time.Second
	maxBackoff   = time.Minute
	// maxResponse bounds a response body, in bytes.
	maxResponse = 64 << 20
	// DefaultTimeout bounds one HTTP exchange when APIOptions.HTTPClient is
	// nil: baseline1's client's 30 s (client.py post_json), not the
	// official toolkit's 10 s, because a command's answer may carry many
	// animation frames and a timed-out action may still have been played
	// (it is not retried, as neither of them retries).
	DefaultTimeout = 30 * time.Second
)

// Errors of the REST client; test with errors.Is.
var (
	// ErrGameOver: a non-RESET action was refused because the game is in
	// state GAME_OVER (the server's 400, or the client's own check). Only
	// RESET is accepted.
	ErrGameOver = errors.New("the game is over (state GAME_OVER): only RESET is accepted")
	// ErrRateLimited: the server kept answering 429 after every retry.
	ErrRateLimited = errors.New("rate limited (429 RATE_LIMIT_EXCEEDED)")
)

// HTTPError is a response with a status other than 2xx.
type HTTPError struct {
	Method, Path string
	// Status is the HTTP status code.
	Status int
	// Code and Message are the api.ErrorBody fields when the body is one;
	// otherwise Code is "" and Message the body's first 300 bytes.
	Code, Message string
}

// Error returns "POST /api/cmd/ACTION1: 400 GAME_OVER: message".
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%s %s: %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	} else {
		s += " " + http.StatusText(e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is matches ErrGameOver for a 400 whose code or message says the game is
// over in any wording (GAME_OVER, "game over", "Game is over",
// case-insensitive), and ErrRateLimited for a 429.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrGameOver:
		return e.Status == http.StatusBadRequest && (e.Code == api.CodeGameOver || saysGameOver(e.Code, e.Message))
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	}
	return false
}

// APIOptions configures an API.
type APIOptions struct {
	// Key is sent as X-API-Key when not "".
	Key string
	// HTTPClient does the exchanges; nil means a client with
	// DefaultTimeout. A cookie jar is added when it has none (a copy is
	// made; the caller's client is not changed).
	HTTPClient *http.Client
	// MaxRetries after a 429; 0 means DefaultMaxRetries, a negative value
	// none.
	MaxRetries int
	// Sleep waits d or until ctx is done; nil means a timer. Tests replace
	// it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Log receives one line per back-off; nil discards them.
	Log io.Writer
	// Now is the clock that a Retry-After HTTP date is read against; nil
	// means time.Now.
	Now func() time.Time
}

// API is the REST client of the ARC-AGI-3 API (spec arc.md "The real game"):
// one method per endpoint, the API key on every request, cookies kept in a
// jar (session affinity), 429 answered by waiting Retry-After (seconds or
// an HTTP date; without it 1 s doubling to 1 min) and retrying. Only 429 is
// retried: any other failure may have reached the game, and repeating an
// action would play it twice. It is safe for concurrent use.
type API struct {
	base  *url.URL
	opts  APIOptions
	http  *http.Client
	sleep func(context.Context, time.Duration) error
}

// NewAPI returns a client of the server at baseURL (scheme and host, e.g.
// "https://three.arcprize.org" or "http://127.0.0.1:8001"). It fails on a
// URL that is not absolute http(s).
func NewAPI(baseURL string, opts APIOptions) (*API, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port]", baseURL)
	}
	hc := &http.Client{Timeout: DefaultTimeout}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	if hc.Jar == nil {
		hc.Jar, _ = cookiejar.New(nil)
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	sleep := opts.Sleep
	if sleep == nil {
		sleep = backoff.Sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &API{base: u, opts: opts, http: hc, sleep: sleep}, nil
}

// BaseURL returns the server's base URL.
func (a *API) BaseURL() string { return a.base.String() }

// cookieURL is the URL whose cookies are saved and restored: every API
// path lies under it.
func (a *API) cookieURL() *url.URL {
	u, _ := url.Parse(a.base.String() + api.PathCmd + "RESET")
	return u
}

// Cookies returns the cookies the jar would send with a command (name and
// value only, as a jar gives them), for saving between processes.
func (a *API) Cookies() []*http.Cookie { return a.http.Jar.Cookies(a.cookieURL()) }

// SetCookies restores saved cookies, valid for every path of the server.
func (a *API) SetCookies(cs []*http.Cookie) {
	out := make([]*http.Cookie, 0, len(cs))
	for _, c := range cs {
		out = append(out, &http.Cookie{Name: c.Name, Value: c.Value, Path: "/"})
	}
	u, _ := url.Parse(a.base.String() + "/")
	a.http.Jar.SetCookies(u, out)
}

// retryWait is the wait before retry number attempt (0-based) after a 429
// carrying header Retry-After h.
func retryWait(h string, attempt int, now time.Time) time.Duration {
	if d, ok := backoff.ParseRetryAfter(h, now); ok {
		return min(d, MaxRetryWait)
	}
	return backoff.Exponential(firstBackoff, maxBackoff, attempt)
}

// do sends one request (retrying on 429) and decodes a 2xx JSON answer into
// out (when not nil); it returns the raw body too.
func (a *API) do(ctx context.Context, method, path string, body, out any) (json.RawMessage, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, a.base.String()+path, bytes.NewReader(payload))
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
		}
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if a.opts.Key != "" {
			req.Header.Set(api.HeaderAPIKey, a.opts.Key)
		}
		resp, err := a.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: reading the response: %w", method, path, err)
		}
		if len(data) > maxResponse {
			// Said as such, not as the JSON decoder's "unexpected end of
			// JSON input" of the cut body.
			return nil, fmt.Errorf("client: %s %s: the response (HTTP %d) is larger than the client's cap of %d bytes; it was not read", method, path, resp.StatusCode, maxResponse)
		}
		if resp.StatusCode == http.StatusTooManyRequests && attempt < a.opts.MaxRetries {
			wait := retryWait(resp.Header.Get("Retry-After"), attempt, a.opts.Now())
			if a.opts.Log != nil {
				fmt.Fprintf(a.opts.Log, "rate limited (429) on %s %s; retry %d of %d in %s\n", method, path, attempt+1, a.opts.MaxRetries, wait)
			}
			if err := a.sleep(ctx, wait); err != nil {
				return nil, fmt.Errorf("client: %s %s: waiting after 429: %w", method, path, err)
			}
			continue
		}
		if resp.StatusCode/100 != 2 {
			e := &HTTPError{Method: method, Path: path, Status: resp.StatusCode}
			var eb api.ErrorBody
			if json.Unmarshal(data, &eb) == nil && (eb.Error != "" || eb.Message != "") {
				e.Code, e.Message = eb.Error, eb.Message
			} else {
				e.Message = strings.TrimSpace(string(data[:min(len(data), 300)]))
			}
			return nil, e
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return nil, fmt.Errorf("client: %s %s: decoding the response: %w", method, path, err)
			}
		}
		return data, nil
	}
}

// Games lists the games (GET /api/games).
func (a *API) Games(ctx context.Context) ([]api.GameInfo, error) {
	var out []api.GameInfo
	_, err := a.do(ctx, http.MethodGet, api.PathGames, nil, &out)
	return out, err
}

// OpenScorecard opens a scorecard and returns its card_id.
func (a *API) OpenScorecard(ctx context.Context, req api.OpenScorecardRequest) (string, error) {
	var out api.OpenScorecardResponse
	if _, err := a.do(ctx, http.MethodPost, api.PathScorecardOpen, req, &out); err != nil {
		return "", err
	}
	if out.CardID == "" {
		return "", fmt.Errorf("client: POST %s: no card_id in the response", api.PathScorecardOpen)
	}
	return out.CardID, nil
}

// CloseScorecard closes a scorecard and returns the server's final
// scorecard as raw JSON.
func (a *API) CloseScorecard(ctx context.Context, cardID string) (json.RawMessage, error) {
	return a.do(ctx, http.MethodPost, api.PathScorecardClose, api.CloseScorecardRequest{CardID: cardID}, nil)
}

// Scorecard returns GET /api/scorecard/{card_id}[/{game_id}] as raw JSON
// (gameID "" for the whole card).
func (a *API) Scorecard(ctx context.Context, cardID, gameID string) (json.RawMessage, error) {
	p := api.PathScorecard + url.PathEscape(cardID)
	if gameID != "" {
		p += "/" + url.PathEscape(gameID)
	}
	return a.do(ctx, http.MethodGet, p, nil, nil)
}

// Reset sends RESET: a new game without guid, else a level or game reset
// (see api.ResetRequest).
func (a *API) Reset(ctx context.Context, gameID, cardID, guid string) (*api.FrameResponse, error) {
	var out api.FrameResponse
	if _, err := a.do(ctx, http.MethodPost, api.PathCmd+"RESET", api.ResetRequest{GameID: gameID, CardID: cardID, GUID: guid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Act sends one of ACTION1..ACTION7 (x, y for ACTION6) with optional
// reasoning (any JSON value). A 400 because the game is over matches
// ErrGameOver.
func (a *API) Act(ctx context.Context, gameID, guid string, act session.Action, reasoning json.RawMessage) (*api.FrameResponse, error) {
	if _, ok := api.ActionID(act.Name); !ok || act.Name == "RESET" {
		return nil, fmt.Errorf("client: %q is not ACTION1..ACTION7", act.Name)
	}
	req := api.ActionRequest{GameID: gameID, GUID: guid, Reasoning: reasoning}
	if act.Name == "ACTION6" {
		x, y := act.X, act.Y
		req.X, req.Y = &x, &y
	}
	var out api.FrameResponse
	if _, err := a.do(ctx, http.MethodPost, api.PathCmd+act.Name, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// FullFrame asks the local server's extension for the initial full frame
// of the play's current level. ok is false, with no error, when the server
// has none (404, or any other 4xx: the real server lacks the endpoint).
func (a *API) FullFrame(ctx context.Context, guid string) (g frame.Grid, level int, ok bool, err error) {
	var out api.FullFrameResponse
	_, err = a.do(ctx, http.MethodGet, api.PathFullFrame+url.PathEscape(guid), nil, &out)
	var he *HTTPError
	if errors.As(err, &he) && he.Status/100 == 4 {
		return frame.Grid{}, 0, false, nil
	}
	if err != nil {
		return frame.Grid{}, 0, false, err
	}
	if g, err = frame.FromRows(out.Frame); err != nil || out.Level < 1 {
		return frame.Grid{}, 0, false, fmt.Errorf("client: bad full frame from %s: level %d: %v", api.PathFullFrame, out.Level, err)
	}
	return g, out.Level, true, nil
}
