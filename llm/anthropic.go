package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"evident/internal/datauri"
)

const (
	anthropicProvider  = "anthropic"
	anthropicMaxTokens = 4096
)

// Anthropic is a Client for the Anthropic Messages API (POST
// {BaseURL}/v1/messages), built on github.com/anthropics/anthropic-sdk-go/v2.
// Structured output is a single forced tool whose input_schema is the
// request's schema; the tool's input is the JSON answer.
type Anthropic struct {
	client anthropic.Client
	opts   Options
	key    string
}

// NewAnthropic returns a Client for the Anthropic Messages API. The SDK's own
// retries and its environment defaults (ANTHROPIC_BASE_URL, profiles,
// federation) are off; the key comes only from Options.APIKeyEnv.
func NewAnthropic(o Options) (*Anthropic, error) {
	if o.Model == "" {
		return nil, errors.New("llm: anthropic: model is required")
	}
	if o.DefaultMaxTokens < 0 {
		return nil, errors.New("llm: anthropic: default max tokens is negative")
	}
	if o.DefaultMaxTokens == 0 {
		o.DefaultMaxTokens = anthropicMaxTokens
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = "ANTHROPIC_API_KEY"
	}
	key := strings.TrimSpace(os.Getenv(o.APIKeyEnv))
	if key == "" && o.BaseURL == "" {
		return nil, fmt.Errorf("llm: anthropic: environment variable %s is not set", o.APIKeyEnv)
	}
	opts := []aoption.RequestOption{
		aoption.WithoutEnvironmentDefaults(),
		aoption.WithMaxRetries(0),
	}
	limit, err := o.maxResponseBytes()
	if err != nil {
		return nil, fmt.Errorf("llm: anthropic: %w", err)
	}
	opts = append(opts, aoption.WithMiddleware(capResponse(limit)))
	if o.BaseURL != "" {
		opts = append(opts, aoption.WithBaseURL(o.BaseURL))
	}
	if key != "" {
		opts = append(opts, aoption.WithAPIKey(key))
	}
	if o.HTTPClient != nil {
		opts = append(opts, aoption.WithHTTPClient(o.HTTPClient))
	}
	return &Anthropic{client: anthropic.NewClient(opts...), opts: o, key: key}, nil
}

// Complete sends one Messages API request.
func (c *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, err
	}
	var httpResp *http.Response
	callOpts := []aoption.RequestOption{aoption.WithResponseInto(&httpResp)}
	if req.Temperature != nil {
		// MessageNewParams in this SDK version has no temperature field;
		// the API still takes one.
		callOpts = append(callOpts, aoption.WithJSONSet("temperature", *req.Temperature))
	}
	msg, err := c.client.Messages.New(ctx, params, callOpts...)
	if err != nil {
		var apiErr *anthropic.Error
		text := ""
		if errors.As(err, &apiErr) {
			text = apiErr.Message
			if text == "" {
				text = apiErr.RawJSON()
			}
		}
		return Response{}, wrapCallError(anthropicProvider, err, httpResp, text, c.key)
	}
	out := Response{
		Model:        string(msg.Model),
		StopReason:   string(msg.StopReason),
		InputTokens:  int(msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens),
		OutputTokens: int(msg.Usage.OutputTokens),
	}
	var text strings.Builder
	var toolInput json.RawMessage
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if len(req.Schema) > 0 && b.Name == req.schemaName() && toolInput == nil {
				toolInput = b.Input
			}
		}
	}
	out.Text = text.String()
	switch {
	case toolInput != nil:
		out.JSON = ExtractJSON(string(toolInput))
		if out.Text == "" {
			out.Text = string(toolInput)
		}
	default:
		out.JSON = ExtractJSON(out.Text)
	}
	if out.Text == "" && out.JSON == nil {
		if out.StopReason == string(anthropic.StopReasonRefusal) {
			return out, fmt.Errorf("%w: anthropic: stop reason %s", ErrRefused, out.StopReason)
		}
		return out, fmt.Errorf("%w: anthropic: no text or tool input (stop reason %q)", ErrEmpty, out.StopReason)
	}
	return out, nil
}

func (c *Anthropic) params(req Request) (anthropic.MessageNewParams, error) {
	if err := req.check(); err != nil {
		return anthropic.MessageNewParams{}, err
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = c.opts.DefaultMaxTokens
	}
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(c.opts.Model),
		MaxTokens: int64(maxTokens),
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for i, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		for _, img := range m.Images {
			if mt, data, err := datauri.Split(img); err == nil {
				blocks = append(blocks, anthropic.NewImageBlockBase64(mt, data))
				continue
			}
			if strings.HasPrefix(img, "https://") || strings.HasPrefix(img, "http://") {
				blocks = append(blocks, anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: img}))
				continue
			}
			return p, fmt.Errorf("llm: anthropic: message %d: image is neither a base64 data URI nor an http(s) URL", i)
		}
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		if m.Role == RoleAssistant {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	if len(req.Schema) > 0 {
		schema, err := toolSchema(req.Schema)
		if err != nil {
			return p, err
		}
		name := req.schemaName()
		p.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        name,
			Description: anthropic.String("Record the answer. Its input is the whole answer, shaped by the schema."),
			InputSchema: schema,
		}}}
		p.ToolChoice = anthropic.ToolChoiceParamOfTool(name)
	}
	return p, nil
}

// toolSchema turns a JSON Schema for an object into a tool input_schema,
// keeping every keyword.
func toolSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	// Plain float64 numbers: the SDK's encoder writes json.Number as a
	// string.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return anthropic.ToolInputSchemaParam{}, errors.New("llm: anthropic: schema must be a JSON object")
	}
	if t, ok := m["type"]; ok && t != "object" {
		return anthropic.ToolInputSchemaParam{}, fmt.Errorf("llm: anthropic: schema type must be \"object\" for a tool input, not %v", t)
	}
	s := anthropic.ToolInputSchemaParam{Properties: m["properties"]}
	if req, ok := m["required"]; ok {
		list, ok := req.([]any)
		if !ok {
			return s, errors.New("llm: anthropic: schema \"required\" must be a list of names")
		}
		for _, r := range list {
			name, ok := r.(string)
			if !ok {
				return s, errors.New("llm: anthropic: schema \"required\" must be a list of names")
			}
			s.Required = append(s.Required, name)
		}
	}
	for k, v := range m {
		switch k {
		case "type", "properties", "required":
			continue
		}
		if s.ExtraFields == nil {
			s.ExtraFields = map[string]any{}
		}
		s.ExtraFields[k] = v
	}
	return s, nil
}
