package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"evident/llm"
	"evident/llm/llmtest"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name, text, want string // want "" for nil
	}{
		{"plain JSON is returned as is", `{"a":1}`, `{"a":1}`},
		{"surrounding whitespace is trimmed", "\n  [1,2]\n", `[1,2]`},
		{"a json fence is unwrapped", "```json\n{\"a\":1}\n```", `{"a":1}`},
		{"a bare fence is unwrapped", "```\n{\"a\":1}\n```", `{"a":1}`},
		{"prose around a fence is ignored", "Here it is:\n```json\n{\"a\": [1, 2]}\n```\nDone.", `{"a": [1, 2]}`},
		{"prose alone is not JSON", "The verdict is ok.", ""},
		{"JSON inside prose without a fence is not guessed at", `The answer: {"a":1}`, ""},
		{"a fence holding broken JSON is not JSON", "```json\n{\"a\":\n```", ""},
		{"an unclosed fence is not JSON", "```json\n{\"a\":1}", ""},
		{"empty text is not JSON", "  ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := llm.ExtractJSON(tt.text)
			if tt.want == "" {
				if got != nil {
					t.Errorf("got %s, want nil", got)
				}
				return
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("fenced JSON in an OpenAI answer is unwrapped", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIChat("```json\n{\"verdict\":\"ok\"}\n```", 1, 1)})
		resp, err := newOpenAI(t, srv, llm.Options{}).Complete(context.Background(), userOnly("Hi."))
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.JSON) != `{"verdict":"ok"}` {
			t.Errorf("JSON = %s", resp.JSON)
		}
		if !strings.HasPrefix(resp.Text, "```json") {
			t.Errorf("Text = %q, want the raw text kept", resp.Text)
		}
	})
}

func TestAPIKeys(t *testing.T) {
	const key = "sk-evident-SECRET-5f1c9a"
	echo := func(status int) llmtest.Reply {
		// A server that echoes the key back in its error body: the worst
		// case for an error message.
		return llmtest.Reply{Status: status, Body: llmtest.OpenAIError("invalid_request_error", "bad key "+key+" (Bearer "+key+")")}
	}
	type adapter struct {
		name   string
		server func(*testing.T, ...llmtest.Reply) *llmtest.Server
		client func(base string) (llm.Client, error)
		header func(http.Header) string
	}
	adapters := []adapter{
		{
			name:   "openai",
			server: func(t *testing.T, r ...llmtest.Reply) *llmtest.Server { return llmtest.NewOpenAI(t, r...) },
			client: func(base string) (llm.Client, error) {
				return llm.NewOpenAI(llm.Options{BaseURL: base, Model: "m", APIKeyEnv: testKeyEnv})
			},
			header: func(h http.Header) string { return strings.TrimPrefix(h.Get("Authorization"), "Bearer ") },
		},
		{
			name:   "anthropic",
			server: func(t *testing.T, r ...llmtest.Reply) *llmtest.Server { return llmtest.NewAnthropic(t, r...) },
			client: func(base string) (llm.Client, error) {
				return llm.NewAnthropic(llm.Options{BaseURL: base, Model: "m", APIKeyEnv: testKeyEnv})
			},
			header: func(h http.Header) string {
				if v := h.Get("X-Api-Key"); v != "" {
					return v
				}
				return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
			},
		},
	}
	for _, a := range adapters {
		for _, status := range []int{400, 401, 500} {
			t.Run(fmt.Sprintf("the %s key reaches the auth header but not a %d error message", a.name, status), func(t *testing.T) {
				t.Setenv(testKeyEnv, key)
				body := echo(status)
				if a.name == "anthropic" {
					body.Body = llmtest.AnthropicError("authentication_error", "bad key "+key)
				}
				srv := a.server(t, body)
				c, err := a.client(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				var s sleeps
				r := llm.Wrap(c, llm.Policy{MaxRetries: 1, Sleep: s.sleep})
				_, err = r.Complete(context.Background(), userOnly("Hi."))
				if err == nil {
					t.Fatal("no error")
				}
				if got := a.header(srv.Requests()[0].Header); got != key {
					t.Errorf("auth header carried %q, want the key", got)
				}
				for _, text := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), fmt.Sprintf("%q", err)} {
					if strings.Contains(text, key) {
						t.Errorf("error text leaks the key: %s", text)
					}
				}
				var ae *llm.APIError
				if !errors.As(err, &ae) || strings.Contains(ae.Message, key) || !strings.Contains(ae.Message, "[REDACTED]") {
					t.Errorf("APIError message = %q", ae.Message)
				}
			})
		}
	}
	t.Run("a key in OPENAI_API_KEY is not sent when another variable is named", func(t *testing.T) {
		t.Setenv("OPENAI_API_KEY", "sk-other-"+key)
		t.Setenv(testKeyEnv, "")
		srv := llmtest.NewOpenAI(t)
		c, err := llm.NewOpenAI(llm.Options{BaseURL: srv.URL, Model: "m", APIKeyEnv: testKeyEnv})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), userOnly("Hi.")); err != nil {
			t.Fatal(err)
		}
		if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
			t.Errorf("Authorization = %q, want none", h)
		}
	})
	t.Run("a key in ANTHROPIC_API_KEY is not sent when another variable is named", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "sk-other-"+key)
		t.Setenv(testKeyEnv, "")
		srv := llmtest.NewAnthropic(t)
		c, err := llm.NewAnthropic(llm.Options{BaseURL: srv.URL, Model: "m", APIKeyEnv: testKeyEnv})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(context.Background(), userOnly("Hi.")); err != nil {
			t.Fatal(err)
		}
		h := srv.Requests()[0].Header
		if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
			t.Errorf("auth headers = %q / %q, want none", h.Get("Authorization"), h.Get("X-Api-Key"))
		}
	})
	t.Run("a missing key for the public Anthropic API is an error naming the variable, not the key", func(t *testing.T) {
		t.Setenv(testKeyEnv, "")
		_, err := llm.NewAnthropic(llm.Options{Model: "m", APIKeyEnv: testKeyEnv})
		if err == nil || !strings.Contains(err.Error(), testKeyEnv) {
			t.Fatalf("err = %v", err)
		}
	})
}
