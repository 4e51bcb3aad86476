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
// and a *http.MaxBytesError past the limit either way.
func TestReadBodyReadsWholeBodiesAndRefusesOnesOverTheLimit(t *testing.T) {
	body := strings.Repeat("가나다라", 300) // 3,600 bytes
	for _, c := range []struct {
		name    string
		length  int64 // -1: not announced
		limit   int64
		wantErr bool
	}{
		{"an announced body within the limit is read whole", int64(len(body)), 1 << 20, false},
		{"a body without Content-Length is read whole", -1, 1 << 20, false},
		{"a body of exactly the limit is read whole", int64(len(body)), int64(len(body)), false},
		{"an announced body over the limit is refused", int64(len(body)), 1000, true},
		{"an unannounced body over the limit is refused", -1, 1000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/api/v1/turns", io.NopCloser(strings.NewReader(body)))
			r.ContentLength = c.length
			got, err := readBody(httptest.NewRecorder(), r, c.limit)
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
}
