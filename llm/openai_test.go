package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"evident/llm"
	"evident/llm/llmtest"
)

func TestOpenAIAdapterSendsTheRequest(t *testing.T) {
	img := llm.ImageDataURI("image/png", []byte("not really a png"))
	srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIChat(`{"verdict":"ok"}`, 120, 7)})
	c := newOpenAI(t, srv, llm.Options{Model: "gpt-test"})

	resp, err := c.Complete(context.Background(), llm.Request{
		System: "You label replies.",
		Messages: []llm.Message{
			llm.User("Label this screen.", img),
			llm.Assistant(`{"verdict":"off_canon"}`),
			llm.User("Again, please."),
		},
		Schema:      json.RawMessage(verdictSchema),
		SchemaName:  "verdict",
		Temperature: llm.Float(0.2),
		MaxTokens:   300,
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	got := body(t, srv, 0)

	t.Run("it posts to /v1/chat/completions", func(t *testing.T) {
		r := srv.Requests()[0]
		if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
			t.Errorf("got %s %s", r.Method, r.Path)
		}
	})
	t.Run("it sends the model", func(t *testing.T) {
		if got["model"] != "gpt-test" {
			t.Errorf("model = %v", got["model"])
		}
	})
	t.Run("it sends the system prompt, then the messages with the image before the text", func(t *testing.T) {
		want := `[
			{"role":"system","content":"You label replies."},
			{"role":"user","content":[
				{"type":"image_url","image_url":{"url":"` + img + `"}},
				{"type":"text","text":"Label this screen."}]},
			{"role":"assistant","content":"{\"verdict\":\"off_canon\"}"},
			{"role":"user","content":"Again, please."}]`
		if !sameJSON(t, got["messages"], want) {
			t.Errorf("messages = %s", mustJSON(t, got["messages"]))
		}
	})
	t.Run("it sends the temperature", func(t *testing.T) {
		if got["temperature"] != 0.2 {
			t.Errorf("temperature = %v", got["temperature"])
		}
	})
	t.Run("it sends max_completion_tokens", func(t *testing.T) {
		if got["max_completion_tokens"] != 300.0 {
			t.Errorf("max_completion_tokens = %v", got["max_completion_tokens"])
		}
		if _, ok := got["max_tokens"]; ok {
			t.Errorf("max_tokens sent too")
		}
	})
	t.Run("it sends the schema as a json_schema response format", func(t *testing.T) {
		want := `{"type":"json_schema","json_schema":{"name":"verdict","schema":` + verdictSchema + `}}`
		if !sameJSON(t, got["response_format"], want) {
			t.Errorf("response_format = %s", mustJSON(t, got["response_format"]))
		}
	})
	t.Run("it returns the text, the JSON, the usage and the model", func(t *testing.T) {
		if resp.Text != `{"verdict":"ok"}` || string(resp.JSON) != `{"verdict":"ok"}` {
			t.Errorf("text %q json %s", resp.Text, resp.JSON)
		}
		if resp.InputTokens != 120 || resp.OutputTokens != 7 {
			t.Errorf("tokens in %d out %d", resp.InputTokens, resp.OutputTokens)
		}
		if resp.Model != llmtest.FakeModel || resp.StopReason != "stop" {
			t.Errorf("model %q stop %q", resp.Model, resp.StopReason)
		}
	})
}

func TestOpenAIResponseFormat(t *testing.T) {
	schemaReq := llm.Request{Messages: []llm.Message{llm.User("Answer in JSON.")}, Schema: json.RawMessage(verdictSchema)}
	tests := []struct {
		name string
		opts llm.Options
		req  llm.Request
		want string // response_format as JSON; "" for absent
	}{
		{
			name: "a schema goes out as json_schema named response by default",
			req:  schemaReq,
			want: `{"type":"json_schema","json_schema":{"name":"response","schema":` + verdictSchema + `}}`,
		},
		{
			name: "strict schema mode adds strict: true",
			opts: llm.Options{StrictSchema: true},
			req:  schemaReq,
			want: `{"type":"json_schema","json_schema":{"name":"response","strict":true,"schema":` + verdictSchema + `}}`,
		},
		{
			name: "servers without json_schema get json_object",
			opts: llm.Options{Format: llm.FormatJSONObject},
			req:  schemaReq,
			want: `{"type":"json_object"}`,
		},
		{
			name: "format none sends no response format",
			opts: llm.Options{Format: llm.FormatNone},
			req:  schemaReq,
		},
		{
			name: "a request without a schema sends no response format",
			req:  userOnly("Hello."),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t)
			c := newOpenAI(t, srv, tt.opts)
			if _, err := c.Complete(context.Background(), tt.req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			got, ok := body(t, srv, 0)["response_format"]
			switch {
			case tt.want == "" && ok:
				t.Errorf("response_format = %s, want none", mustJSON(t, got))
			case tt.want != "" && !sameJSON(t, got, tt.want):
				t.Errorf("response_format = %s, want %s", mustJSON(t, got), tt.want)
			}
		})
	}
}

func TestOpenAIOptions(t *testing.T) {
	t.Run("legacy max tokens sends max_tokens instead of max_completion_tokens", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t)
		c := newOpenAI(t, srv, llm.Options{LegacyMaxTokens: true})
		req := userOnly("Hi.")
		req.MaxTokens = 50
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		got := body(t, srv, 0)
		if got["max_tokens"] != 50.0 {
			t.Errorf("max_tokens = %v", got["max_tokens"])
		}
		if _, ok := got["max_completion_tokens"]; ok {
			t.Errorf("max_completion_tokens sent too")
		}
	})
	t.Run("no temperature is sent when none is set", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t)
		c := newOpenAI(t, srv, llm.Options{})
		if _, err := c.Complete(context.Background(), userOnly("Hi.")); err != nil {
			t.Fatal(err)
		}
		if v, ok := body(t, srv, 0)["temperature"]; ok {
			t.Errorf("temperature = %v", v)
		}
	})
	t.Run("a zero temperature is sent as zero", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t)
		c := newOpenAI(t, srv, llm.Options{})
		req := userOnly("Hi.")
		req.Temperature = llm.Float(0)
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if v, ok := body(t, srv, 0)["temperature"]; !ok || v != 0.0 {
			t.Errorf("temperature = %v (present %v)", v, ok)
		}
	})
	t.Run("the SDK does not retry on its own", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Status: 500})
		c := newOpenAI(t, srv, llm.Options{})
		_, err := c.Complete(context.Background(), userOnly("Hi."))
		var ae *llm.APIError
		if !errors.As(err, &ae) || ae.StatusCode != 500 {
			t.Fatalf("err = %v, want an APIError with status 500", err)
		}
		if n := srv.Count(); n != 1 {
			t.Errorf("server got %d requests, want 1", n)
		}
	})
	t.Run("a plain-text error body still yields the status", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Status: 503, Body: "upstream down", Header: http.Header{"Content-Type": {"text/plain"}}})
		c := newOpenAI(t, srv, llm.Options{})
		_, err := c.Complete(context.Background(), userOnly("Hi."))
		var ae *llm.APIError
		if !errors.As(err, &ae) || ae.StatusCode != 503 {
			t.Fatalf("err = %v, want an APIError with status 503", err)
		}
	})
	t.Run("a refusal is an ErrRefused error", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIRefusal("I can't help with that.")})
		c := newOpenAI(t, srv, llm.Options{})
		_, err := c.Complete(context.Background(), userOnly("Hi."))
		if !errors.Is(err, llm.ErrRefused) {
			t.Fatalf("err = %v, want ErrRefused", err)
		}
	})
	t.Run("a model is required", func(t *testing.T) {
		if _, err := llm.NewOpenAI(llm.Options{BaseURL: "http://127.0.0.1:1/v1"}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("the public API needs its key variable set", func(t *testing.T) {
		t.Setenv("EVIDENT_LLM_UNSET_KEY", "")
		_, err := llm.NewOpenAI(llm.Options{Model: "gpt-test", APIKeyEnv: "EVIDENT_LLM_UNSET_KEY"})
		if err == nil || !contains(err.Error(), "EVIDENT_LLM_UNSET_KEY") {
			t.Fatalf("err = %v, want one naming the variable", err)
		}
	})
	t.Run("an invalid request is refused before anything is sent", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t)
		c := newOpenAI(t, srv, llm.Options{})
		bad := []llm.Request{
			{},
			{Messages: []llm.Message{{Role: "system", Text: "x"}}},
			{Messages: []llm.Message{{Role: "assistant", Text: "x", Images: []string{"data:image/png;base64,AA=="}}}},
			{Messages: []llm.Message{llm.User("x")}, Schema: json.RawMessage(`{`)},
			{Messages: []llm.Message{llm.User("x")}, SchemaName: "has space"},
		}
		for i, req := range bad {
			if _, err := c.Complete(context.Background(), req); err == nil {
				t.Errorf("request %d: no error", i)
			}
		}
		if n := srv.Count(); n != 0 {
			t.Errorf("server got %d requests", n)
		}
	})
}

func TestOpenAIEmptyAnswer(t *testing.T) {
	t.Run("an answer with no content is ErrEmpty", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Reply{Body: llmtest.OpenAIChat("", 3, 0)})
		c := newOpenAI(t, srv, llm.Options{})
		if _, err := c.Complete(context.Background(), userOnly("Hi.")); !errors.Is(err, llm.ErrEmpty) {
			t.Fatalf("err = %v, want ErrEmpty", err)
		}
	})
}
