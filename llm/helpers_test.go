package llm_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	"evident/llm"
	"evident/llm/llmtest"
)

const testKeyEnv = "EVIDENT_LLM_TEST_KEY"

// newOpenAI returns an OpenAI adapter pointed at srv, with a test key.
func newOpenAI(t *testing.T, srv *llmtest.Server, o llm.Options) *llm.OpenAI {
	t.Helper()
	t.Setenv(testKeyEnv, "sk-test-not-a-secret")
	o.BaseURL = srv.URL
	o.APIKeyEnv = testKeyEnv
	if o.Model == "" {
		o.Model = "gpt-test"
	}
	c, err := llm.NewOpenAI(o)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return c
}

// newAnthropic returns an Anthropic adapter pointed at srv, with a test key.
func newAnthropic(t *testing.T, srv *llmtest.Server, o llm.Options) *llm.Anthropic {
	t.Helper()
	t.Setenv(testKeyEnv, "sk-ant-test-not-a-secret")
	o.BaseURL = srv.URL
	o.APIKeyEnv = testKeyEnv
	if o.Model == "" {
		o.Model = "claude-test"
	}
	c, err := llm.NewAnthropic(o)
	if err != nil {
		t.Fatalf("NewAnthropic: %v", err)
	}
	return c
}

// sleeps is a fake Policy.Sleep that records the waits and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// body decodes the n-th recorded request body.
func body(t *testing.T, srv *llmtest.Server, n int) map[string]any {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= n {
		t.Fatalf("server got %d requests, want at least %d", len(reqs), n+1)
	}
	var m map[string]any
	if err := reqs[n].Decode(&m); err != nil {
		t.Fatalf("request %d body is not JSON: %v\n%s", n, err, reqs[n].Body)
	}
	return m
}

// sameJSON reports whether got (a decoded value) equals the JSON text want.
func sameJSON(t *testing.T, got any, want string) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON %q: %v", want, err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("marshal got: %v", err)
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("unmarshal got: %v", err)
	}
	return reflect.DeepEqual(g, w)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const verdictSchema = `{"type":"object","properties":{"verdict":{"type":"string","enum":["ok","off_canon"]},"score":{"type":"number","minimum":0}},"required":["verdict"],"additionalProperties":false}`

func userOnly(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{llm.User(text)}}
}
