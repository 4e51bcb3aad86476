package web

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// readBody gives the whole body whether Content-Length is announced or not,
// and a *http.MaxBytesError past the limit either way; the bytes it asks
// grow for are its buffer's, at most the body's length (or the limit) plus
// bytes.MinRead; and it stops when grow says no.
func TestReadBodyReadsWholeBodiesAndRefusesOnesOverTheLimit(t *testing.T) {
	small := strings.Repeat("가나다라", 300)   // 3,600 bytes
	large := strings.Repeat("가나다라", 20000) // 240,000 bytes: the buffer doubles from 64 KiB
	for _, c := range []struct {
		name    string
		body    string
		length  int64 // -1: not announced
		limit   int64
		wantErr bool
	}{
		{"an announced body within the limit is read whole", small, int64(len(small)), 1 << 20, false},
		{"a body without Content-Length is read whole", small, -1, 1 << 20, false},
		{"a body of exactly the limit is read whole", small, int64(len(small)), int64(len(small)), false},
		{"an announced body over the limit is refused", small, int64(len(small)), 1000, true},
		{"an unannounced body over the limit is refused", small, -1, 1000, true},
		{"a large announced body is read whole", large, int64(len(large)), 1 << 20, false},
		{"a large unannounced body is read whole", large, -1, 1 << 20, false},
		{"a large unannounced body over the limit is refused", large, -1, 100_000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := c.body
			r := httptest.NewRequest(http.MethodPost, "/api/v1/turns", io.NopCloser(strings.NewReader(body)))
			r.ContentLength = c.length
			var grown int64
			got, err := readBody(httptest.NewRecorder(), r, c.limit, func(n int64) bool { grown += n; return true })
			end := c.limit + bytes.MinRead
			if c.length >= 0 {
				end = min(end, c.length+bytes.MinRead)
			}
			if grown > end || (err == nil && grown != int64(cap(got))) {
				t.Fatalf("asked grow for %d bytes (buffer %d), want the buffer's, at most %d", grown, cap(got), end)
			}
			var mb *http.MaxBytesError
			if c.wantErr {
				if !errors.As(err, &mb) || mb.Limit != c.limit {
					t.Fatalf("err %v, want a MaxBytesError with limit %d", err, c.limit)
				}
				return
			}
			if err != nil || !bytes.Equal(got, []byte(body)) {
				t.Fatalf("read %d bytes, %v; want the %d-byte body", len(got), err, len(body))
			}
		})
	}
	t.Run("it stops when grow says no", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/turns", io.NopCloser(strings.NewReader(large)))
		r.ContentLength = -1
		asked := 0
		_, err := readBody(httptest.NewRecorder(), r, 1<<20, func(int64) bool { asked++; return asked == 1 })
		if !errors.Is(err, errBodyBudget) || asked != 2 {
			t.Fatalf("%v after %d asks, want errBodyBudget at the second", err, asked)
		}
	})
}
