package backoff

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestExponential(t *testing.T) {
	for _, c := range []struct {
		name          string
		base, ceiling time.Duration
		n             int
		want          time.Duration
	}{
		{"retry 0 waits the base", time.Second, time.Minute, 0, time.Second},
		{"retry 2 waits four times the base", time.Second, time.Minute, 2, 4 * time.Second},
		{"retry 5 is 32 s, still under the ceiling", time.Second, time.Minute, 5, 32 * time.Second},
		{"retry 6 (64 s) is capped at the ceiling", time.Second, time.Minute, 6, time.Minute},
		{"a huge retry number does not overflow", time.Second, time.Minute, 1000, time.Minute},
		{"retry 40 overflows the shift and is capped", time.Hour, 24 * time.Hour, 40, 24 * time.Hour},
		{"a negative retry number counts as 0", time.Second, time.Minute, -3, time.Second},
		{"a zero base waits nothing", 0, time.Minute, 3, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Exponential(c.base, c.ceiling, c.n); got != c.want {
				t.Errorf("Exponential(%s, %s, %d) = %s, want %s", c.base, c.ceiling, c.n, got, c.want)
			}
		})
	}
}

func TestFullJitter(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		r    float64
		want time.Duration
	}{
		{"r 0 waits nothing", 3, 0, 0},
		{"r 0.5 waits half the exponential ceiling (8 s of retry 3)", 3, 0.5, 4 * time.Second},
		{"r 0.25 of the capped 30 s is 7.5 s", 10, 0.25, 7500 * time.Millisecond},
		{"an r above 1 is clamped to the ceiling", 0, 7, time.Second},
		{"a negative r waits nothing", 0, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := FullJitter(time.Second, 30*time.Second, c.n, c.r); got != c.want {
				t.Errorf("FullJitter(1s, 30s, %d, %v) = %s, want %s", c.n, c.r, got, c.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"integer seconds are that many seconds", "3", 3 * time.Second, true},
		{"spaces around the value are ignored", " 7 ", 7 * time.Second, true},
		{"fractional seconds are read", "1.5", 1500 * time.Millisecond, true},
		{"zero is an instruction to retry at once", "0", 0, true},
		{"an HTTP date waits until that date on the given clock", now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{"an HTTP date in the past waits nothing", now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"a negative number is no instruction", "-1", 0, false},
		{"text is no instruction", "soon", 0, false},
		{"an empty value is no instruction", "", 0, false},
		{"NaN is no instruction", "NaN", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(c.value, now)
			if got != c.want || ok != c.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", c.value, got, ok, c.want, c.wantOK)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Unix(995, 0)
	for _, c := range []struct {
		name   string
		h      http.Header
		want   time.Duration
		wantOK bool
	}{
		{"Retry-After-Ms wins over Retry-After", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, 1500 * time.Millisecond, true},
		{"a bad Retry-After-Ms falls back to Retry-After", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"2"}}, 2 * time.Second, true},
		{"a negative Retry-After-Ms falls back to Retry-After", http.Header{"Retry-After-Ms": {"-5"}, "Retry-After": {"4"}}, 4 * time.Second, true},
		{"Retry-After alone as a date", http.Header{"Retry-After": {time.Unix(1000, 0).UTC().Format(http.TimeFormat)}}, 5 * time.Second, true},
		{"no header is no instruction", http.Header{}, 0, false},
		{"a nil header is no instruction", nil, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := RetryAfter(c.h, now)
			if got != c.want || ok != c.wantOK {
				t.Errorf("RetryAfter(%v) = %s, %v; want %s, %v", c.h, got, ok, c.want, c.wantOK)
			}
		})
	}
}

func TestSleep(t *testing.T) {
	t.Run("a cancelled context ends the wait with its error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep = %v, want context.Canceled", err)
		}
	})
	t.Run("a wait of 0 returns at once with the context's state", func(t *testing.T) {
		if err := Sleep(context.Background(), 0); err != nil {
			t.Errorf("Sleep(0) = %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Sleep(ctx, -time.Second); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(cancelled, -1s) = %v", err)
		}
	})
	t.Run("a short wait completes with nil", func(t *testing.T) {
		if err := Sleep(context.Background(), time.Nanosecond); err != nil {
			t.Errorf("Sleep(1ns) = %v", err)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "1.5", "-1", "Sun, 06 Nov 1994 08:49:37 GMT", "1e300", "NaN", "Inf", ""} {
		f.Add(s)
	}
	now := time.Unix(0, 0)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := ParseRetryAfter(v, now)
		if d < 0 {
			t.Errorf("ParseRetryAfter(%q) = %s, negative", v, d)
		}
		if !ok && d != 0 {
			t.Errorf("ParseRetryAfter(%q) = %s with ok false", v, d)
		}
	})
}
