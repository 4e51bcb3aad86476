package client

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestResponseOverTheCapIsSaidSo: a response body one byte over the
// client's cap is refused as too large (naming the cap), not decoded into
// the JSON decoder's "unexpected end of JSON input"; one at the cap is read.
func TestResponseOverTheCapIsSaidSo(t *testing.T) {
	for _, c := range []struct {
		name string
		size int
		want string
	}{
		{"one byte over the cap", maxResponse + 1, fmt.Sprintf("client: GET /api/games: the response (HTTP 200) is larger than the client's cap of %d bytes; it was not read", maxResponse)},
		{"exactly the cap", maxResponse, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A JSON list of spaces: valid at any size.
			body := append(append([]byte{'['}, bytes.Repeat([]byte{' '}, c.size-2)...), ']')
			f := newFake(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(body)
			})
			a, err := NewAPI(f.h.URL, APIOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Games(context.Background())
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != c.want || strings.Contains(err.Error(), "unexpected end") {
				t.Fatalf("err = %v, want %s", err, c.want)
			}
		})
	}
}
