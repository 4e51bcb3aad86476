// Package backoff is the retry plumbing the module's HTTP clients share
// (issue 12 item 6; Tailscale's util/backoff is the model): the wait before
// retry n, the server's Retry-After read against an injected clock, and a
// sleep that ends with its context.
//
// Users: evident/llm (model calls: full jitter, Retry-After-Ms and
// Retry-After), evident/arc/client (the ARC-AGI-3 REST client: 429 only,
// doubling without jitter) and evident/crystal/run (its request-rate
// limiter sleeps here). Each keeps its own policy — which statuses are
// retried, how many times, the longest wait honoured; this package only
// computes and waits.
//
// It must not import anything of the module; stdlib only. It keeps no state
// and reads no clock of its own: now is a parameter everywhere, and the only
// timer is Sleep's, which callers replace in tests.
//
// # Decisions where the sources are silent
//
//   - Retry-After seconds may be fractional ("1.5"): RFC 9110 §10.2.3 asks
//     for a non-negative integer, but model servers send fractions, and
//     reading them costs nothing. A negative number, or text that is neither
//     a number nor an HTTP date, is no instruction (ok false): the caller
//     falls back to its own backoff.
//   - An HTTP date in the past is a wait of 0.
//   - Retry-After-Ms (OpenAI's and Anthropic's header, milliseconds, may be
//     fractional) is read before Retry-After when present and valid.
package backoff

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sleep waits d or until ctx is done, whichever comes first. It returns nil
// after a full wait and ctx.Err() otherwise; a d ≤ 0 returns ctx.Err() at
// once without a timer. It is the default of every Sleep hook in the
// module (llm.Policy.Sleep, client.APIOptions.Sleep, run.Config.Sleep).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Exponential is the un-jittered wait before retry n (0-based): base·2ⁿ,
// capped at ceiling, safe from overflow for any n ≥ 0 (a negative n counts
// as 0). With base 1 s and ceiling 1 min it gives 1 s, 2 s, 4 s, …, 32 s,
// 1 min, 1 min (arc/client's back-off on a 429 without Retry-After).
func Exponential(base, ceiling time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	n = max(n, 0)
	if n >= 62 {
		return ceiling
	}
	if d := base << n; d > 0 && d>>n == base && d < ceiling {
		return d
	}
	return ceiling
}

// FullJitter is the "full jitter" wait before retry n (AWS Architecture
// Blog, "Exponential Backoff And Jitter", 2015): uniform in
// [0, Exponential(base, ceiling, n)), r being a number in [0, 1) from the
// caller's random source (llm.Policy.Rand). An r outside [0, 1) is clamped.
func FullJitter(base, ceiling time.Duration, n int, r float64) time.Duration {
	if math.IsNaN(r) || r < 0 {
		r = 0
	}
	r = min(r, 1)
	return time.Duration(r * float64(Exponential(base, ceiling, n)))
}

// ParseRetryAfter reads one Retry-After value (RFC 9110 §10.2.3): decimal
// seconds (fractions allowed) or an HTTP date, which is read against now
// (a date before now is a wait of 0). ok is false for an empty, negative or
// unreadable value: the server gave no instruction. The wait is not capped;
// each caller caps it by its own rule.
func ParseRetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return scaled(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// RetryAfter reads the wait a response's header h asks for: Retry-After-Ms
// (milliseconds) when present and valid, else Retry-After (see
// ParseRetryAfter). A nil header is no instruction.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			if d, ok := scaled(ms, time.Millisecond); ok {
				return d, true
			}
		}
	}
	return ParseRetryAfter(h.Get("Retry-After"), now)
}

// scaled turns x units into a Duration; negative, NaN and values beyond
// Duration's range are refused or saturated.
func scaled(x float64, unit time.Duration) (time.Duration, bool) {
	if math.IsNaN(x) || x < 0 {
		return 0, false
	}
	d := x * float64(unit)
	if d >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return time.Duration(d), true
}
