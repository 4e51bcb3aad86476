package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Options configures an adapter.
type Options struct {
	// BaseURL is the API's base URL. OpenAI-compatible servers take the
	// URL up to and including /v1 ("http://localhost:8000/v1" for vLLM,
	// "http://localhost:11434/v1" for Ollama); empty means the provider's
	// public API. Environment variables such as OPENAI_BASE_URL are not
	// read.
	BaseURL string
	// Model is the model name; required.
	Model string
	// APIKeyEnv names the environment variable that holds the API key
	// (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key is read once,
	// when the client is made. It may be unset only when BaseURL is set
	// (local servers); then no key is sent.
	APIKeyEnv string
	// HTTPClient is used for requests; nil means the SDK's default.
	HTTPClient *http.Client
	// MaxResponseBytes caps the body of every answer, in bytes (0:
	// DefaultMaxResponseBytes; negative is an error). A longer body ends
	// the call with ErrTooLarge as soon as the cap is passed, so a hostile
	// or broken endpoint cannot grow the process (issue 15 item 3).
	MaxResponseBytes int64

	// Format says how an OpenAI-compatible request asks for structured
	// output when Request.Schema is set (default FormatJSONSchema).
	Format Format
	// StrictSchema sets strict: true on the json_schema response format
	// (OpenAI's strict structured outputs; the schema must then follow
	// its rules).
	StrictSchema bool
	// LegacyMaxTokens sends max_tokens instead of max_completion_tokens,
	// for OpenAI-compatible servers that only know the old name.
	LegacyMaxTokens bool

	// DefaultMaxTokens is the Anthropic max_tokens when Request.MaxTokens
	// is 0 (the Messages API requires one; default 4096).
	DefaultMaxTokens int
}

// Format is how an OpenAI-compatible request asks for JSON.
type Format int

const (
	// FormatJSONSchema sends response_format {type: json_schema} with the
	// request's schema.
	FormatJSONSchema Format = iota
	// FormatJSONObject sends response_format {type: json_object}, for
	// servers without json_schema; the schema itself is not sent, so the
	// prompt must describe the shape.
	FormatJSONObject
	// FormatNone sends no response_format; the answer is parsed as JSON
	// when it is JSON.
	FormatNone
)

func (f Format) String() string {
	switch f {
	case FormatJSONSchema:
		return "json_schema"
	case FormatJSONObject:
		return "json_object"
	case FormatNone:
		return "none"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

const (
	openAIProvider   = "openai"
	openAIDefaultURL = "https://api.openai.com/v1/"
)

// OpenAI is a Client for OpenAI-compatible chat completions
// (POST {BaseURL}/chat/completions), built on github.com/openai/openai-go/v3.
type OpenAI struct {
	client openai.Client
	opts   Options
	key    string
}

// NewOpenAI returns a Client for an OpenAI-compatible chat API. The SDK's own
// retries are off; wrap the client with [Wrap] for the retry policy.
func NewOpenAI(o Options) (*OpenAI, error) {
	if o.Model == "" {
		return nil, errors.New("llm: openai: model is required")
	}
	if o.Format < FormatJSONSchema || o.Format > FormatNone {
		return nil, fmt.Errorf("llm: openai: unknown format %d", int(o.Format))
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = "OPENAI_API_KEY"
	}
	key := strings.TrimSpace(os.Getenv(o.APIKeyEnv))
	if key == "" && o.BaseURL == "" {
		return nil, fmt.Errorf("llm: openai: environment variable %s is not set", o.APIKeyEnv)
	}
	base := o.BaseURL
	if base == "" {
		base = openAIDefaultURL
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		// Always set, even empty, so that a key in OPENAI_API_KEY is not
		// sent when the caller named another variable.
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
	}
	limit, err := o.maxResponseBytes()
	if err != nil {
		return nil, fmt.Errorf("llm: openai: %w", err)
	}
	opts = append(opts, option.WithMiddleware(capResponse(limit)))
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &OpenAI{client: openai.NewClient(opts...), opts: o, key: key}, nil
}

// Complete sends one chat completion request.
func (c *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, err
	}
	var httpResp *http.Response
	cc, err := c.client.Chat.Completions.New(ctx, params, option.WithResponseInto(&httpResp))
	if err != nil {
		var apiErr *openai.Error
		msg := ""
		if errors.As(err, &apiErr) {
			msg = apiErr.Message
		}
		return Response{}, wrapCallError(openAIProvider, err, httpResp, msg, c.key)
	}
	if len(cc.Choices) == 0 {
		return Response{}, fmt.Errorf("%w: openai: no choices", ErrEmpty)
	}
	choice := cc.Choices[0]
	out := Response{
		Text:         choice.Message.Content,
		InputTokens:  int(cc.Usage.PromptTokens),
		OutputTokens: int(cc.Usage.CompletionTokens),
		Model:        cc.Model,
		StopReason:   choice.FinishReason,
	}
	if out.Text == "" {
		if choice.Message.Refusal != "" {
			return out, fmt.Errorf("%w: openai: %s", ErrRefused, scrub(choice.Message.Refusal, c.key, 500))
		}
		return out, fmt.Errorf("%w: openai: no content (finish reason %q)", ErrEmpty, out.StopReason)
	}
	out.JSON = ExtractJSON(out.Text)
	return out, nil
}

func (c *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	if err := req.check(); err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.opts.Model)}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			p.Messages = append(p.Messages, openai.AssistantMessage(m.Text))
		case RoleUser:
			if len(m.Images) == 0 {
				p.Messages = append(p.Messages, openai.UserMessage(m.Text))
				continue
			}
			parts := make([]openai.ChatCompletionContentPartUnionParam, 0, len(m.Images)+1)
			for _, img := range m.Images {
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: img}))
			}
			if m.Text != "" {
				parts = append(parts, openai.TextContentPart(m.Text))
			}
			p.Messages = append(p.Messages, openai.UserMessage(parts))
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if c.opts.LegacyMaxTokens {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if len(req.Schema) > 0 {
		switch c.opts.Format {
		case FormatJSONSchema:
			js := shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   req.schemaName(),
				Schema: req.Schema,
			}
			if c.opts.StrictSchema {
				js.Strict = openai.Bool(true)
			}
			p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
		case FormatJSONObject:
			obj := shared.NewResponseFormatJSONObjectParam()
			p.ResponseFormat.OfJSONObject = &obj
		}
	}
	return p, nil
}
