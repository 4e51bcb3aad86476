package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"evident/internal/clip"
)

// Client sends one request to a model and returns its answer.
// Implementations are safe for concurrent use.
type Client interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Request is one structured request to a model.
type Request struct {
	// System is the system prompt; empty for none.
	System string
	// Messages is the conversation, oldest first; at least one is required.
	Messages []Message
	// Schema is a JSON Schema (an object schema) for structured output;
	// empty for free text.
	Schema json.RawMessage
	// SchemaName names the schema for the API (letters, digits, _ and -,
	// at most 64); empty means "response".
	SchemaName string
	// Temperature is sent when set; nil leaves the server's default.
	Temperature *float64
	// MaxTokens caps the answer's length; 0 leaves the adapter's default.
	MaxTokens int
}

// Message is one turn of the conversation.
type Message struct {
	// Role is "user" or "assistant".
	Role string
	// Text is the turn's text.
	Text string
	// Images are image data URIs ("data:image/png;base64,...") or http(s)
	// URLs. Only user messages may carry images; they are sent before the
	// text.
	Images []string
}

// User returns a user message with optional images (data URIs or URLs).
func User(text string, images ...string) Message {
	return Message{Role: RoleUser, Text: text, Images: images}
}

// Assistant returns an assistant message.
func Assistant(text string) Message {
	return Message{Role: RoleAssistant, Text: text}
}

// Roles a Message may have.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ImageDataURI encodes an image as a data URI for Message.Images.
func ImageDataURI(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// Float returns a pointer to f, for Request.Temperature.
func Float(f float64) *float64 { return &f }

// Response is a model's answer.
type Response struct {
	// Text is the answer's text (for a forced tool answer with no text, the
	// tool's input).
	Text string
	// JSON is the answer as raw JSON when it parses as JSON (a Markdown code
	// fence around it is stripped), or the forced tool's input; nil
	// otherwise. It is the model's proposal and has not been validated.
	JSON json.RawMessage
	// InputTokens and OutputTokens are the usage the server reported.
	InputTokens, OutputTokens int
	// Model is the model name the server reported.
	Model string
	// StopReason is the server's finish or stop reason ("stop", "length",
	// "end_turn", "tool_use", "max_tokens", ...).
	StopReason string
}

// Errors a call can end with; test with errors.Is.
var (
	// ErrBudget means the per-run budget of requests or tokens is spent.
	ErrBudget = errors.New("llm: run budget exhausted")
	// ErrTimeout means a try ran past the per-call timeout.
	ErrTimeout = errors.New("llm: call timed out")
	// ErrRefused means the model refused to answer.
	ErrRefused = errors.New("llm: model refused")
	// ErrEmpty means the server answered with no content at all.
	ErrEmpty = errors.New("llm: empty answer")
	// ErrTooLarge means the server's answer was longer than
	// Options.MaxResponseBytes; the call failed and is not retried.
	ErrTooLarge = errors.New("llm: answer exceeds the response cap")
)

// APIError is an HTTP error status from a model server. Its text never holds
// the API key.
type APIError struct {
	// Provider is "openai" or "anthropic".
	Provider string
	// StatusCode is the HTTP status.
	StatusCode int
	// Header is the response's header (Retry-After and the like).
	Header http.Header
	// Message is the server's error message, with the API key scrubbed out
	// and cut to a few hundred bytes.
	Message string
	err     error
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Provider, e.StatusCode)
	t := http.StatusText(e.StatusCode)
	if t != "" {
		s += " " + t
	}
	if e.Message != "" && e.Message != t {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the SDK's own error (*openai.Error or *anthropic.Error), or
// nil.
func (e *APIError) Unwrap() error { return e.err }

// transportError is a failure with no HTTP status (connection refused, reset,
// timeout, a body that could not be read). Its text is scrubbed of the key.
type transportError struct {
	msg string
	err error
}

func (e *transportError) Error() string { return e.msg }
func (e *transportError) Unwrap() error { return e.err }

const redacted = "[REDACTED]"

// minScrubbed is the shortest key scrub removes from texts, in bytes.
const minScrubbed = 8

// scrub removes the secret from s and cuts s to max bytes (0: no cut).
func scrub(s, secret string, max int) string {
	// A "key" of a few characters (a placeholder such as OPENAI_API_KEY=x
	// for a local server) is no secret worth a mangled message: replacing
	// every "x" made "answer e[REDACTED]ceeds the response cap".
	if len(secret) >= minScrubbed {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	s = strings.TrimSpace(s)
	if max > 0 && len(s) > max {
		s = s[:clip.Bytes(s, max)] + "…" // between grapheme clusters
	}
	return s
}

// wrapCallError turns an SDK error into an error whose text carries no key.
// resp is the HTTP response the SDK saw, when it saw one.
func wrapCallError(provider string, err error, resp *http.Response, message, secret string) error {
	if resp != nil && resp.StatusCode >= 400 {
		if message == "" {
			message = err.Error()
		}
		return &APIError{
			Provider:   provider,
			StatusCode: resp.StatusCode,
			Header:     resp.Header.Clone(),
			Message:    scrub(message, secret, 500),
			err:        err,
		}
	}
	return &transportError{msg: provider + ": request failed: " + scrub(err.Error(), secret, 0), err: err}
}

// ExtractJSON returns text as raw JSON when it is JSON, either whole or inside
// the first Markdown code fence (```json ... ```); nil otherwise. It does not
// guess at JSON embedded in prose outside a fence.
func ExtractJSON(text string) json.RawMessage {
	s := strings.TrimSpace(text)
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	start := strings.Index(s, "```")
	if start < 0 {
		return nil
	}
	rest := s[start+3:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return nil
	}
	if tag := strings.TrimSpace(rest[:nl]); tag != "" && !fenceTag.MatchString(tag) {
		return nil
	}
	rest = rest[nl+1:]
	end := strings.Index(rest, "```")
	if end < 0 {
		return nil
	}
	body := bytes.TrimSpace([]byte(rest[:end]))
	if len(body) == 0 || !json.Valid(body) {
		return nil
	}
	return json.RawMessage(body)
}

var fenceTag = regexp.MustCompile(`^[A-Za-z0-9_+-]+$`)

var schemaNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// check validates a request before anything is sent.
func (r Request) check() error {
	if len(r.Messages) == 0 {
		return errors.New("llm: request has no messages")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case RoleUser:
		case RoleAssistant:
			if len(m.Images) > 0 {
				return fmt.Errorf("llm: message %d: only user messages may carry images", i)
			}
		default:
			return fmt.Errorf("llm: message %d: role %q is not user or assistant", i, m.Role)
		}
		if m.Text == "" && len(m.Images) == 0 {
			return fmt.Errorf("llm: message %d is empty", i)
		}
	}
	if len(r.Schema) > 0 && !json.Valid(r.Schema) {
		return errors.New("llm: schema is not valid JSON")
	}
	if r.SchemaName != "" && !schemaNameRE.MatchString(r.SchemaName) {
		return fmt.Errorf("llm: schema name %q must be 1-64 letters, digits, _ or -", r.SchemaName)
	}
	if r.MaxTokens < 0 {
		return errors.New("llm: max tokens is negative")
	}
	return nil
}

func (r Request) schemaName() string {
	if r.SchemaName == "" {
		return "response"
	}
	return r.SchemaName
}
