package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"evident/llm"
	"evident/llm/llmtest"
)

func TestRobustRetries(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	half := func() float64 { return 0.5 }
	tests := []struct {
		name         string
		script       []llmtest.Reply
		policy       llm.Policy
		wantRequests int
		wantSleeps   []time.Duration
		wantStatus   int // 0: success
	}{
		{
			name:         "a 429 with Retry-After: 2 waits exactly two seconds and then succeeds",
			script:       []llmtest.Reply{{Status: 429, Header: http.Header{"Retry-After": {"2"}}}, {}},
			wantRequests: 2,
			wantSleeps:   []time.Duration{2 * time.Second},
		},
		{
			name:         "a 429 with an HTTP-date Retry-After waits until that date",
			script:       []llmtest.Reply{{Status: 429, Header: http.Header{"Retry-After": {now.Add(5 * time.Second).Format(http.TimeFormat)}}}, {}},
			wantRequests: 2,
			wantSleeps:   []time.Duration{5 * time.Second},
		},
		{
			name:         "a retry-after-ms header is honoured to the millisecond",
			script:       []llmtest.Reply{{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}}, {}},
			wantRequests: 2,
			wantSleeps:   []time.Duration{1500 * time.Millisecond},
		},
		{
			name:         "two 500s then success back off exponentially with full jitter",
			script:       []llmtest.Reply{{Status: 500}, {Status: 500}, {}},
			policy:       llm.Policy{BaseDelay: 100 * time.Millisecond, Rand: half},
			wantRequests: 3,
			wantSleeps:   []time.Duration{50 * time.Millisecond, 100 * time.Millisecond},
		},
		{
			name:         "the backoff never exceeds MaxDelay",
			script:       []llmtest.Reply{{Status: 502}, {Status: 502}, {Status: 502}, {}},
			policy:       llm.Policy{BaseDelay: time.Second, MaxDelay: 1500 * time.Millisecond, Rand: half},
			wantRequests: 4,
			wantSleeps:   []time.Duration{500 * time.Millisecond, 750 * time.Millisecond, 750 * time.Millisecond},
		},
		{
			name:         "a 503 and a 408 are retried",
			script:       []llmtest.Reply{{Status: 503}, {Status: 408}, {}},
			policy:       llm.Policy{BaseDelay: time.Second, Rand: half},
			wantRequests: 3,
			wantSleeps:   []time.Duration{500 * time.Millisecond, time.Second},
		},
		{
			name:         "a 400 is not retried",
			script:       []llmtest.Reply{{Status: 400}, {}},
			wantRequests: 1,
			wantStatus:   400,
		},
		{
			name:         "a 401 is not retried",
			script:       []llmtest.Reply{{Status: 401}, {}},
			wantRequests: 1,
			wantStatus:   401,
		},
		{
			name:         "a 404 is not retried",
			script:       []llmtest.Reply{{Status: 404}, {}},
			wantRequests: 1,
			wantStatus:   404,
		},
		{
			name:         "a 422 is not retried",
			script:       []llmtest.Reply{{Status: 422}, {}},
			wantRequests: 1,
			wantStatus:   422,
		},
		{
			name:         "retries stop after MaxRetries and the last error is returned",
			script:       []llmtest.Reply{{Status: 500}},
			policy:       llm.Policy{MaxRetries: 2, BaseDelay: time.Second, Rand: half},
			wantRequests: 3,
			wantSleeps:   []time.Duration{500 * time.Millisecond, time.Second},
			wantStatus:   500,
		},
		{
			name:         "a negative MaxRetries means one try only",
			script:       []llmtest.Reply{{Status: 500}, {}},
			policy:       llm.Policy{MaxRetries: -1},
			wantRequests: 1,
			wantStatus:   500,
		},
		{
			name:         "a Retry-After longer than MaxRetryAfter ends the call at once",
			script:       []llmtest.Reply{{Status: 429, Header: http.Header{"Retry-After": {"3600"}}}, {}},
			wantRequests: 1,
			wantStatus:   429,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, tt.script...)
			var s sleeps
			p := tt.policy
			p.Sleep = s.sleep
			p.Now = func() time.Time { return now }
			r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), p)

			resp, err := r.Complete(context.Background(), userOnly("Hi."))

			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if string(resp.JSON) != `{"ok":true}` {
					t.Errorf("JSON = %s", resp.JSON)
				}
			} else {
				var ae *llm.APIError
				if !errors.As(err, &ae) || ae.StatusCode != tt.wantStatus {
					t.Fatalf("err = %v, want an APIError with status %d", err, tt.wantStatus)
				}
			}
			if n := srv.Count(); n != tt.wantRequests {
				t.Errorf("server got %d requests, want %d", n, tt.wantRequests)
			}
			if got := s.got(); !slices.Equal(got, tt.wantSleeps) {
				t.Errorf("waits = %v, want %v", got, tt.wantSleeps)
			}
			tally := r.Tally()
			if tally.Requests != tt.wantRequests || tally.Retries != tt.wantRequests-1 || tally.Calls != 1 {
				t.Errorf("tally = %v", tally)
			}
			if failed := tt.wantStatus != 0; (tally.Failures == 1) != failed {
				t.Errorf("tally = %v, failed %v", tally, failed)
			}
		})
	}
}

func TestRobustTimeouts(t *testing.T) {
	t.Run("a hang past the timeout is retried, then fails with a timeout error", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Delay: 10 * time.Second})
		var s sleeps
		r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), llm.Policy{Timeout: 50 * time.Millisecond, MaxRetries: 2, Sleep: s.sleep})
		start := time.Now()
		_, err := r.Complete(context.Background(), userOnly("Hi."))
		if !errors.Is(err, llm.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrTimeout wrapping context.DeadlineExceeded", err)
		}
		if !strings.Contains(err.Error(), "gave up after 3 tries") {
			t.Errorf("err = %q, want it to say how many tries", err)
		}
		if n := srv.Count(); n != 3 {
			t.Errorf("server got %d requests, want 3", n)
		}
		if len(s.got()) != 2 {
			t.Errorf("waits = %v, want 2", s.got())
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("took %v; the timeout was not applied", el)
		}
	})
	t.Run("a hang then a quick answer succeeds on the retry", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Delay: 10 * time.Second}, llmtest.Reply{})
		var s sleeps
		r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), llm.Policy{Timeout: 50 * time.Millisecond, Sleep: s.sleep})
		if _, err := r.Complete(context.Background(), userOnly("Hi.")); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if got := r.Tally(); got.Requests != 2 || got.Retries != 1 || got.Failures != 0 {
			t.Errorf("tally = %v", got)
		}
	})
	t.Run("a caller that cancels is not retried", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Delay: 10 * time.Second})
		var s sleeps
		r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), llm.Policy{Sleep: s.sleep})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := r.Complete(ctx, userOnly("Hi."))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if n := srv.Count(); n != 1 || len(s.got()) != 0 {
			t.Errorf("server got %d requests and %d waits, want 1 and 0", n, len(s.got()))
		}
	})
	t.Run("a refused connection is retried", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		t.Setenv(testKeyEnv, "sk-x")
		c, err := llm.NewOpenAI(llm.Options{BaseURL: dead.URL + "/v1", Model: "m", APIKeyEnv: testKeyEnv})
		if err != nil {
			t.Fatal(err)
		}
		var s sleeps
		r := llm.Wrap(c, llm.Policy{MaxRetries: 2, Sleep: s.sleep})
		_, err = r.Complete(context.Background(), userOnly("Hi."))
		var ae *llm.APIError
		if err == nil || errors.As(err, &ae) {
			t.Fatalf("err = %v, want a connection error", err)
		}
		if got := r.Tally(); got.Requests != 3 || got.Retries != 2 {
			t.Errorf("tally = %v", got)
		}
	})
}

func TestRobustBudget(t *testing.T) {
	t.Run("a budget of 2 calls stops the third with ErrBudget", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t)
		r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), llm.Policy{MaxCalls: 2})
		for i := range 2 {
			if _, err := r.Complete(context.Background(), userOnly("Hi.")); err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
		}
		if _, err := r.Complete(context.Background(), userOnly("Hi.")); !errors.Is(err, llm.ErrBudget) {
			t.Fatalf("third call: err = %v, want ErrBudget", err)
		}
		if n := srv.Count(); n != 2 {
			t.Errorf("server got %d requests, want 2", n)
		}
		if got := r.Tally(); got.Calls != 3 || got.OverBudget != 1 || got.Failures != 1 {
			t.Errorf("tally = %v", got)
		}
	})
	t.Run("retries count against the call budget and the last error is kept", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Status: 500}, llmtest.Reply{})
		var s sleeps
		r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), llm.Policy{MaxCalls: 1, Sleep: s.sleep})
		_, err := r.Complete(context.Background(), userOnly("Hi."))
		var ae *llm.APIError
		if !errors.Is(err, llm.ErrBudget) || !errors.As(err, &ae) || ae.StatusCode != 500 {
			t.Fatalf("err = %v, want ErrBudget with the 500 kept", err)
		}
		if n := srv.Count(); n != 1 {
			t.Errorf("server got %d requests, want 1", n)
		}
	})
	t.Run("a token budget stops calls once it is spent", func(t *testing.T) {
		// Each default answer uses 10 input and 5 output tokens.
		srv := llmtest.NewOpenAI(t)
		r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), llm.Policy{MaxTokens: 20})
		for i := range 2 {
			if _, err := r.Complete(context.Background(), userOnly("Hi.")); err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
		}
		if _, err := r.Complete(context.Background(), userOnly("Hi.")); !errors.Is(err, llm.ErrBudget) {
			t.Fatalf("third call: err = %v, want ErrBudget", err)
		}
		if got := r.Tally(); got.InputTokens != 20 || got.OutputTokens != 10 {
			t.Errorf("tally = %v", got)
		}
	})
}

func TestRobustConcurrency(t *testing.T) {
	t.Run("a limit of 2 is never exceeded on the server", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Delay: 30 * time.Millisecond})
		r := llm.Wrap(newOpenAI(t, srv, llm.Options{}), llm.Policy{Concurrency: 2})
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if _, err := r.Complete(context.Background(), userOnly("Hi.")); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := srv.MaxInFlight(); got > 2 {
			t.Errorf("server saw %d requests at once, limit 2", got)
		} else if got < 2 {
			t.Errorf("server saw at most %d at once; calls did not run in parallel", got)
		}
		if got := r.Tally(); got.Calls != 10 || got.Requests != 10 || got.InputTokens != 100 || got.OutputTokens != 50 {
			t.Errorf("tally = %v", got)
		}
	})
	t.Run("the tally stays exact under many concurrent calls", func(t *testing.T) {
		var inFlight, peak atomic.Int64
		fake := clientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			return llm.Response{InputTokens: 3, OutputTokens: 2}, nil
		})
		r := llm.Wrap(fake, llm.Policy{Concurrency: 3})
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() { _, _ = r.Complete(context.Background(), userOnly("Hi.")) })
		}
		wg.Wait()
		if p := peak.Load(); p > 3 {
			t.Errorf("peak in flight %d, limit 3", p)
		}
		want := llm.Tally{Calls: 100, Requests: 100, InputTokens: 300, OutputTokens: 200}
		if got := r.Tally(); got != want {
			t.Errorf("tally = %v, want %v", got, want)
		}
	})
}

func TestTallyString(t *testing.T) {
	t.Run("the final tally reads as one line", func(t *testing.T) {
		got := llm.Tally{Calls: 3, Requests: 5, Retries: 2, Failures: 1, OverBudget: 1, InputTokens: 40, OutputTokens: 9}.String()
		want := "calls 3 (requests 5, retries 2, failures 1, over budget 1), tokens in 40 out 9"
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

type clientFunc func(context.Context, llm.Request) (llm.Response, error)

func (f clientFunc) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return f(ctx, req)
}
