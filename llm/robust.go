package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"evident/internal/backoff"
)

// Policy is how a wrapped Client calls its model. Zero fields take the
// defaults named below.
type Policy struct {
	// Concurrency is the most calls in flight at once (default 4). A call
	// keeps its slot through its retries and the waits between them.
	Concurrency int
	// Timeout bounds each try (default 2 minutes).
	Timeout time.Duration
	// MaxRetries is the number of tries after the first (default 3;
	// negative for none).
	MaxRetries int
	// BaseDelay and MaxDelay shape the backoff: before retry n (from 0) the
	// wait is uniform in [0, min(MaxDelay, BaseDelay·2ⁿ)) — full jitter
	// (defaults 1 s and 30 s).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a server that asks
	// for a longer wait ends the call at once (default 2 minutes).
	MaxRetryAfter time.Duration
	// MaxCalls is the per-run budget of requests sent, retries included
	// (0: no limit).
	MaxCalls int
	// MaxTokens is the per-run budget of tokens, input and output together
	// (0: no limit). It is checked before each request, so calls already in
	// flight may overshoot it.
	MaxTokens int
	// Sleep waits d or until ctx is done (default: a timer). Tests inject
	// one that records the waits.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the jitter (default math/rand/v2).
	Rand func() float64
	// Now is the clock for Retry-After dates (default time.Now).
	Now func() time.Time
}

// Tally counts what a wrapped Client did in a run.
type Tally struct {
	// Calls is the number of Complete calls.
	Calls int
	// Requests is the number of requests sent to the model, retries
	// included.
	Requests int
	// Retries is the number of requests that were retries.
	Retries int
	// Failures is the number of calls that ended in an error, budget
	// refusals included.
	Failures int
	// OverBudget is the number of calls refused with ErrBudget.
	OverBudget int
	// InputTokens and OutputTokens sum the usage the servers reported
	// (answers refused or empty included).
	InputTokens, OutputTokens int
}

// String is the one-line final tally.
func (t Tally) String() string {
	return fmt.Sprintf("calls %d (requests %d, retries %d, failures %d, over budget %d), tokens in %d out %d",
		t.Calls, t.Requests, t.Retries, t.Failures, t.OverBudget, t.InputTokens, t.OutputTokens)
}

// Robust is a Client with the call policy of a Policy around another Client.
type Robust struct {
	next Client
	p    Policy
	sem  chan struct{}

	mu    sync.Mutex
	tally Tally
}

// Wrap returns c with the call policy p: bounded concurrency, a timeout per
// try, retries with backoff and jitter, a per-run budget and a tally.
func Wrap(c Client, p Policy) *Robust {
	if p.Concurrency <= 0 {
		p.Concurrency = 4
	}
	if p.Timeout <= 0 {
		p.Timeout = 2 * time.Minute
	}
	switch {
	case p.MaxRetries == 0:
		p.MaxRetries = 3
	case p.MaxRetries < 0:
		p.MaxRetries = 0
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 2 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = backoff.Sleep
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return &Robust{next: c, p: p, sem: make(chan struct{}, p.Concurrency)}
}

// Tally returns the counts so far.
func (r *Robust) Tally() Tally {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tally
}

// Complete calls the wrapped Client under the policy.
func (r *Robust) Complete(ctx context.Context, req Request) (Response, error) {
	r.count(func(t *Tally) { t.Calls++ })
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return Response{}, r.fail(fmt.Errorf("llm: waiting for a free slot: %w", ctx.Err()))
	}
	defer func() { <-r.sem }()

	var last error
	for try := 0; ; try++ {
		if err := r.reserve(try > 0); err != nil {
			if last != nil {
				err = fmt.Errorf("%w (last error: %w)", err, last)
			}
			return Response{}, r.fail(err)
		}
		tctx, cancel := context.WithTimeout(ctx, r.p.Timeout)
		resp, err := r.next.Complete(tctx, req)
		timedOut := errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		// Usage counts even when the answer is refused or empty: it was
		// spent.
		r.count(func(t *Tally) {
			t.InputTokens += resp.InputTokens
			t.OutputTokens += resp.OutputTokens
		})
		if err == nil {
			return resp, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			if !errors.Is(err, cerr) {
				err = fmt.Errorf("%w: %w", cerr, err)
			}
			return Response{}, r.fail(fmt.Errorf("llm: call abandoned: %w", err))
		}
		if timedOut {
			err = fmt.Errorf("%w after %s: %w", ErrTimeout, r.p.Timeout, err)
		}
		last = err
		retry, wait, told := r.classify(err, timedOut)
		tries := plural(try+1, "try", "tries")
		if !retry {
			return Response{}, r.fail(fmt.Errorf("llm: not retried after %s: %w", tries, err))
		}
		if try >= r.p.MaxRetries {
			return Response{}, r.fail(fmt.Errorf("llm: gave up after %s: %w", tries, err))
		}
		if told && wait > r.p.MaxRetryAfter {
			return Response{}, r.fail(fmt.Errorf("llm: server asked to wait %s, longer than %s: %w", wait, r.p.MaxRetryAfter, err))
		}
		if !told {
			wait = r.backoff(try)
		}
		if serr := r.p.Sleep(ctx, wait); serr != nil {
			return Response{}, r.fail(fmt.Errorf("llm: waiting to retry: %w (last error: %w)", serr, err))
		}
	}
}

// reserve takes one request from the budget, or says the budget is spent.
func (r *Robust) reserve(retry bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &r.tally
	if r.p.MaxCalls > 0 && t.Requests >= r.p.MaxCalls {
		t.OverBudget++
		return fmt.Errorf("%w: %d of %d requests used", ErrBudget, t.Requests, r.p.MaxCalls)
	}
	if used := t.InputTokens + t.OutputTokens; r.p.MaxTokens > 0 && used >= r.p.MaxTokens {
		t.OverBudget++
		return fmt.Errorf("%w: %d of %d tokens used", ErrBudget, used, r.p.MaxTokens)
	}
	t.Requests++
	if retry {
		t.Retries++
	}
	return nil
}

func (r *Robust) count(f func(*Tally)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.tally)
}

func (r *Robust) fail(err error) error {
	r.count(func(t *Tally) { t.Failures++ })
	return err
}

// backoff is the full-jitter wait before retry n (from 0).
func (r *Robust) backoff(n int) time.Duration {
	return backoff.FullJitter(r.p.BaseDelay, r.p.MaxDelay, n, r.p.Rand())
}

// classify says whether err is worth another try and, when the server said
// how long to wait, that wait.
func (r *Robust) classify(err error, timedOut bool) (retry bool, wait time.Duration, told bool) {
	if timedOut {
		return true, 0, false
	}
	if status, header := statusOf(err); status != 0 {
		if status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500 {
			wait, told = backoff.RetryAfter(header, r.p.Now())
			return true, wait, told
		}
		return false, 0, false
	}
	switch {
	case errors.Is(err, context.Canceled):
		return false, 0, false
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF):
		return true, 0, false
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true, 0, false
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return true, 0, false
	}
	return false, 0, false
}

// statusOf finds an HTTP status in err: from an *APIError, or from the SDKs'
// own *openai.Error and *anthropic.Error.
func statusOf(err error) (int, http.Header) {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.StatusCode, ae.Header
	}
	var oe *openai.Error
	if errors.As(err, &oe) {
		return oe.StatusCode, headerOf(oe.Response)
	}
	var an *anthropic.Error
	if errors.As(err, &an) {
		return an.StatusCode, headerOf(an.Response)
	}
	return 0, nil
}

func headerOf(r *http.Response) http.Header {
	if r == nil {
		return nil
	}
	return r.Header
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
