// Package llmtest runs fake model servers for tests: an OpenAI-compatible
// chat completions server and an Anthropic Messages server, on httptest at
// 127.0.0.1. Each answers from a script of canned replies, one per request in
// order (the last reply repeats once the script runs out), and records the
// requests it got so tests can assert what was sent. No network, no keys.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Reply is one canned answer.
type Reply struct {
	// Status is the HTTP status (0: 200).
	Status int
	// Header is added to the response (for example Retry-After).
	Header http.Header
	// Body is the raw response body. Empty means a default: a small JSON
	// answer `{"ok":true}` for 2xx, or the provider's error body for
	// other statuses.
	Body string
	// Delay is how long to wait before answering; a client that gives up
	// first ends the wait.
	Delay time.Duration
}

// Recorded is one request a fake server got.
type Recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Decode unmarshals the recorded JSON body into v.
func (r Recorded) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Server is a fake model server.
type Server struct {
	// URL is the base URL to give the client (Options.BaseURL): it ends in
	// /v1 for the OpenAI-compatible server and is the bare origin for the
	// Anthropic one, as each SDK expects.
	URL string

	kind   kind
	srv    *httptest.Server
	mu     sync.Mutex
	script []Reply
	reqs   []Recorded
	flight int
	peak   int
}

type kind int

const (
	openAIKind kind = iota
	anthropicKind
)

// NewOpenAI starts a fake OpenAI-compatible server that answers POST
// /v1/chat/completions from script. It is closed when the test ends.
func NewOpenAI(tb testing.TB, script ...Reply) *Server {
	s := start(tb, openAIKind, script)
	s.URL = s.srv.URL + "/v1"
	return s
}

// NewAnthropic starts a fake Anthropic server that answers POST /v1/messages
// from script. It is closed when the test ends.
func NewAnthropic(tb testing.TB, script ...Reply) *Server {
	s := start(tb, anthropicKind, script)
	s.URL = s.srv.URL
	return s
}

func start(tb testing.TB, k kind, script []Reply) *Server {
	tb.Helper()
	s := &Server{kind: k, script: append([]Reply(nil), script...)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// MaxInFlight is the largest number of requests the server was handling at
// once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

func (s *Server) path() string {
	if s.kind == anthropicKind {
		return "/v1/messages"
	}
	return "/v1/chat/completions"
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	s.flight++
	if s.flight > s.peak {
		s.peak = s.flight
	}
	var rep Reply
	switch {
	case n < len(s.script):
		rep = s.script[n]
	case len(s.script) > 0:
		rep = s.script[len(s.script)-1]
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.flight--
		s.mu.Unlock()
	}()

	if r.Method != http.MethodPost || r.URL.Path != s.path() {
		rep = Reply{Status: http.StatusNotFound, Body: s.errorBody(http.StatusNotFound, "llmtest: no route "+r.Method+" "+r.URL.Path)}
	}
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	out := rep.Body
	if out == "" {
		if status < 300 {
			out = s.okBody(`{"ok":true}`)
		} else {
			out = s.errorBody(status, http.StatusText(status))
		}
	}
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}

func (s *Server) okBody(text string) string {
	if s.kind == anthropicKind {
		return AnthropicText(text, 10, 5)
	}
	return OpenAIChat(text, 10, 5)
}

func (s *Server) errorBody(status int, msg string) string {
	if s.kind == anthropicKind {
		return AnthropicError(anthropicErrorType(status), msg)
	}
	return OpenAIError("server_error", msg)
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// FakeModel is the model name the canned bodies report.
const FakeModel = "fake-model"

// OpenAIChat is a chat.completion body whose one choice says content.
func OpenAIChat(content string, inTokens, outTokens int) string {
	return mustJSON(map[string]any{
		"id":      "chatcmpl-llmtest",
		"object":  "chat.completion",
		"created": 0,
		"model":   FakeModel,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": "stop",
			"logprobs":      nil,
		}},
		"usage": map[string]any{
			"prompt_tokens":     inTokens,
			"completion_tokens": outTokens,
			"total_tokens":      inTokens + outTokens,
		},
	})
}

// OpenAIRefusal is a chat.completion body whose one choice is a refusal.
func OpenAIRefusal(refusal string) string {
	return mustJSON(map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "created": 0, "model": FakeModel,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": nil, "refusal": refusal},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

// OpenAIError is an OpenAI error body.
func OpenAIError(typ, message string) string {
	return mustJSON(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil}})
}

// AnthropicText is a Messages body with one text block.
func AnthropicText(text string, inTokens, outTokens int) string {
	return anthropicMessage([]any{map[string]any{"type": "text", "text": text}}, "end_turn", inTokens, outTokens)
}

// AnthropicToolUse is a Messages body with one tool_use block calling tool
// name with input (raw JSON).
func AnthropicToolUse(name, input string, inTokens, outTokens int) string {
	return anthropicMessage([]any{map[string]any{
		"type":  "tool_use",
		"id":    "toolu_llmtest",
		"name":  name,
		"input": json.RawMessage(input),
	}}, "tool_use", inTokens, outTokens)
}

func anthropicMessage(content []any, stop string, inTokens, outTokens int) string {
	return mustJSON(map[string]any{
		"id":            "msg_llmtest",
		"type":          "message",
		"role":          "assistant",
		"model":         FakeModel,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         map[string]any{"input_tokens": inTokens, "output_tokens": outTokens},
	})
}

// AnthropicError is an Anthropic error body.
func AnthropicError(typ, message string) string {
	return mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest: %v", err))
	}
	return string(b)
}
