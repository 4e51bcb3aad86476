package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// serve's live limits must be positive: 0 or less stops serve before it
// listens, with an error naming the flag.
func TestServeRefusesANonPositiveLiveLimit(t *testing.T) {
	tests := []struct{ flag, value string }{
		{"--live-max-names", "0"},
		{"--live-max-row-bytes", "-1"},
		{"--live-max-state-bytes", "0"},
	}
	for _, tc := range tests {
		t.Run(tc.flag+" "+tc.value+" is refused", func(t *testing.T) {
			_, errOut, err := webCLI(context.Background(), t, "serve", "--demo", "--addr", "127.0.0.1:0", tc.flag, tc.value)
			want := fmt.Sprintf("%s is %s: it must be positive", tc.flag, tc.value)
			if err == nil || err.Error() != want {
				t.Fatalf("serve %s %s: %v, want %q", tc.flag, tc.value, err, want)
			}
			if strings.Contains(errOut, "serving http://") {
				t.Fatalf("serve listened: %s", errOut)
			}
		})
	}
}

// serve --live-max-names 2 makes the live API refuse a row naming three
// entities with 413 naming the limit and its value.
func TestServeAppliesItsLiveLimits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := startServe(t, ctx, "--demo", "--addr", "127.0.0.1:0", "--live-max-names", "2")
	addr, done := srv.addr, srv.done
	row := `{"turn_id":"X1","session_id":"S","character_id":"CHR-0100","model_id":"m","user_message":"?","reply_text":".","first_person":"나","named_entities":["가","나","다"],"honorific_level":"반말","user_asked_recall":false}`
	resp, err := http.Post(addr+"api/v1/turns", "application/json", strings.NewReader(row))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"limit":"names_per_row","max":2,"got":3`) {
		t.Fatalf("%d %s; want 413 naming names_per_row, max 2, got 3", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v after stop", err)
	}
}
