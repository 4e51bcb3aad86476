package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"evident/llm"
)

// hugeServer answers every request with a valid-looking JSON body of size
// bytes: a chat completion whose content is padded with spaces. With
// declared it sets Content-Length; without it the body is chunked, so only
// reading it reveals the size.
func hugeServer(t *testing.T, size int, declared bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		head := `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"`
		tail := `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`
		pad := size - len(head) - len(tail)
		w.Header().Set("Content-Type", "application/json")
		if declared {
			w.Header().Set("Content-Length", itoa(size))
		}
		w.Write([]byte(head))
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for pad > 0 {
			n := min(pad, len(chunk))
			if _, err := w.Write(chunk[:n]); err != nil {
				return // the client hung up: what the cap is for
			}
			pad -= n
			if !declared {
				w.(http.Flusher).Flush()
			}
		}
		w.Write([]byte(tail))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func TestAnOversizedAnswerIsAFailedCall(t *testing.T) {
	const limit = 1 << 20
	for _, declared := range []bool{true, false} {
		for _, provider := range []string{"openai", "anthropic"} {
			name := provider + " with Content-Length"
			if !declared {
				name = provider + " chunked"
			}
			t.Run(name, func(t *testing.T) {
				srv, hits := hugeServer(t, 3*limit, declared)
				t.Setenv(testKeyEnv, "sk-test-not-a-secret")
				o := llm.Options{BaseURL: srv.URL + "/v1", APIKeyEnv: testKeyEnv, Model: "m", MaxResponseBytes: limit}
				var c llm.Client
				var err error
				if provider == "openai" {
					c, err = llm.NewOpenAI(o)
				} else {
					o.BaseURL = srv.URL
					c, err = llm.NewAnthropic(o)
				}
				if err != nil {
					t.Fatal(err)
				}
				r := llm.Wrap(c, llm.Policy{Sleep: (&sleeps{}).sleep})
				_, err = r.Complete(context.Background(), llm.Request{Messages: []llm.Message{llm.User("hi")}})
				if !errors.Is(err, llm.ErrTooLarge) {
					t.Fatalf("err = %v, want ErrTooLarge", err)
				}
				if tl := r.Tally(); tl.Failures != 1 || tl.Requests != 1 || hits.Load() != 1 {
					t.Fatalf("tally %+v, server hits %d: want one failed request, no retry", tl, hits.Load())
				}
			})
		}
	}
}

func TestAnAnswerUnderTheCapIsRead(t *testing.T) {
	srv, _ := hugeServer(t, 200<<10, false)
	t.Setenv(testKeyEnv, "sk-test-not-a-secret")
	c, err := llm.NewOpenAI(llm.Options{BaseURL: srv.URL + "/v1", APIKeyEnv: testKeyEnv, Model: "m", MaxResponseBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{llm.User("hi")}})
	if err != nil {
		t.Fatalf("a 200 KiB answer under a 256 KiB cap: %v", err)
	}
	if n := len(resp.Text); n < 190<<10 {
		t.Fatalf("content of %d bytes, want the padded ~200 KiB", n)
	}
}

func TestANegativeCapIsAnError(t *testing.T) {
	t.Setenv(testKeyEnv, "sk-test-not-a-secret")
	if _, err := llm.NewOpenAI(llm.Options{BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: testKeyEnv, Model: "m", MaxResponseBytes: -1}); err == nil {
		t.Fatal("NewOpenAI accepted MaxResponseBytes -1")
	}
	if _, err := llm.NewAnthropic(llm.Options{BaseURL: "http://127.0.0.1:1", APIKeyEnv: testKeyEnv, Model: "m", MaxResponseBytes: -1}); err == nil {
		t.Fatal("NewAnthropic accepted MaxResponseBytes -1")
	}
}
