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

func TestAnthropicAdapterForcesTheSchemaTool(t *testing.T) {
	img := llm.ImageDataURI("image/jpeg", []byte{0xff, 0xd8, 0xff})
	srv := llmtest.NewAnthropic(t, llmtest.Reply{Body: llmtest.AnthropicToolUse("verdict", `{"verdict":"ok","score":0.5}`, 200, 30)})
	c := newAnthropic(t, srv, llm.Options{Model: "claude-test"})

	resp, err := c.Complete(context.Background(), llm.Request{
		System:      "You label replies.",
		Messages:    []llm.Message{llm.User("Label this screen.", img)},
		Schema:      json.RawMessage(verdictSchema),
		SchemaName:  "verdict",
		Temperature: llm.Float(0),
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	got := body(t, srv, 0)

	t.Run("it posts to /v1/messages", func(t *testing.T) {
		r := srv.Requests()[0]
		if r.Method != http.MethodPost || r.Path != "/v1/messages" {
			t.Errorf("got %s %s", r.Method, r.Path)
		}
	})
	t.Run("it sends the model, the default max_tokens and the temperature", func(t *testing.T) {
		if got["model"] != "claude-test" || got["max_tokens"] != 4096.0 {
			t.Errorf("model %v max_tokens %v", got["model"], got["max_tokens"])
		}
		if v, ok := got["temperature"]; !ok || v != 0.0 {
			t.Errorf("temperature = %v (present %v)", v, ok)
		}
	})
	t.Run("it sends the system prompt and the image as a base64 block before the text", func(t *testing.T) {
		if !sameJSON(t, got["system"], `[{"type":"text","text":"You label replies."}]`) {
			t.Errorf("system = %s", mustJSON(t, got["system"]))
		}
		want := `[{"role":"user","content":[
			{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}},
			{"type":"text","text":"Label this screen."}]}]`
		if !sameJSON(t, got["messages"], want) {
			t.Errorf("messages = %s", mustJSON(t, got["messages"]))
		}
	})
	t.Run("it sends one tool whose input_schema is the schema", func(t *testing.T) {
		tools, _ := got["tools"].([]any)
		if len(tools) != 1 {
			t.Fatalf("tools = %s", mustJSON(t, got["tools"]))
		}
		tool := tools[0].(map[string]any)
		if tool["name"] != "verdict" {
			t.Errorf("tool name = %v", tool["name"])
		}
		if !sameJSON(t, tool["input_schema"], verdictSchema) {
			t.Errorf("input_schema = %s", mustJSON(t, tool["input_schema"]))
		}
	})
	t.Run("it forces that tool", func(t *testing.T) {
		if !sameJSON(t, got["tool_choice"], `{"type":"tool","name":"verdict"}`) {
			t.Errorf("tool_choice = %s", mustJSON(t, got["tool_choice"]))
		}
	})
	t.Run("it returns the tool input as the JSON", func(t *testing.T) {
		if !sameJSON(t, json.RawMessage(resp.JSON), `{"verdict":"ok","score":0.5}`) {
			t.Errorf("JSON = %s", resp.JSON)
		}
		if resp.InputTokens != 200 || resp.OutputTokens != 30 || resp.StopReason != "tool_use" {
			t.Errorf("tokens in %d out %d stop %q", resp.InputTokens, resp.OutputTokens, resp.StopReason)
		}
	})
}

func TestAnthropicAdapter(t *testing.T) {
	t.Run("a text answer with fenced JSON is unwrapped", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t, llmtest.Reply{Body: llmtest.AnthropicText("```json\n{\"verdict\":\"ok\"}\n```", 5, 5)})
		c := newAnthropic(t, srv, llm.Options{})
		resp, err := c.Complete(context.Background(), userOnly("Hi."))
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.JSON) != `{"verdict":"ok"}` {
			t.Errorf("JSON = %s", resp.JSON)
		}
	})
	t.Run("no tools and no temperature are sent for a plain request", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		c := newAnthropic(t, srv, llm.Options{DefaultMaxTokens: 100})
		if _, err := c.Complete(context.Background(), userOnly("Hi.")); err != nil {
			t.Fatal(err)
		}
		got := body(t, srv, 0)
		for _, k := range []string{"tools", "tool_choice", "temperature", "system"} {
			if v, ok := got[k]; ok {
				t.Errorf("%s = %v", k, v)
			}
		}
		if got["max_tokens"] != 100.0 {
			t.Errorf("max_tokens = %v", got["max_tokens"])
		}
	})
	t.Run("an image URL goes out as a url source", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		c := newAnthropic(t, srv, llm.Options{})
		if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{llm.User("What is this?", "https://example.invalid/a.png")}}); err != nil {
			t.Fatal(err)
		}
		want := `[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://example.invalid/a.png"}},{"type":"text","text":"What is this?"}]}]`
		if got := body(t, srv, 0)["messages"]; !sameJSON(t, got, want) {
			t.Errorf("messages = %s", mustJSON(t, got))
		}
	})
	t.Run("a schema that is not an object is refused before anything is sent", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t)
		c := newAnthropic(t, srv, llm.Options{})
		req := userOnly("Hi.")
		req.Schema = json.RawMessage(`{"type":"array"}`)
		if _, err := c.Complete(context.Background(), req); err == nil {
			t.Fatal("no error")
		}
		if srv.Count() != 0 {
			t.Errorf("server got %d requests", srv.Count())
		}
	})
	t.Run("an overloaded 529 is an APIError with its status and is not retried by the SDK", func(t *testing.T) {
		srv := llmtest.NewAnthropic(t, llmtest.Reply{Status: 529})
		c := newAnthropic(t, srv, llm.Options{})
		_, err := c.Complete(context.Background(), userOnly("Hi."))
		var ae *llm.APIError
		if !errors.As(err, &ae) || ae.StatusCode != 529 || ae.Provider != "anthropic" {
			t.Fatalf("err = %v", err)
		}
		if srv.Count() != 1 {
			t.Errorf("server got %d requests, want 1", srv.Count())
		}
	})
	t.Run("an answer with neither text nor tool input is ErrEmpty", func(t *testing.T) {
		empty := `{"id":"msg_x","type":"message","role":"assistant","model":"fake-model","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":0}}`
		srv := llmtest.NewAnthropic(t, llmtest.Reply{Body: empty})
		c := newAnthropic(t, srv, llm.Options{})
		if _, err := c.Complete(context.Background(), userOnly("Hi.")); !errors.Is(err, llm.ErrEmpty) {
			t.Fatalf("err = %v, want ErrEmpty", err)
		}
	})
}
