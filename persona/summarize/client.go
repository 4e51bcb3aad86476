package summarize

import (
	"fmt"
	"time"

	"evident/llm"
)

// ClientOptions are the model-call settings of a summarizer run, as the
// judge command's --summarizer flags give them (cmd/evident judge_summary.go).
type ClientOptions struct {
	// Provider is ProviderOpenAI (any OpenAI-compatible server) or
	// ProviderAnthropic; Model the model name (required).
	Provider, Model string
	// BaseURL is the API base URL ("" for the provider's public API);
	// APIKeyEnv the environment variable holding the key ("" for the
	// provider's default). Keys come only from the environment.
	BaseURL, APIKeyEnv string
	// MaxResponseBytes caps each answer's body (llm.Options; 0 for
	// llm.DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// Concurrency is how many calls are in flight at once; Timeout the limit
	// of each try (llm.Policy; 0 for its defaults).
	Concurrency int
	Timeout     time.Duration
	// Retries is the number of retries after a 429, 5xx, timeout or
	// connection error; 0 means none (unlike llm.Policy, where 0 is the
	// default 3).
	Retries int
	// MaxCalls and MaxTokens are the run's budget (0: no limit).
	MaxCalls, MaxTokens int
}

// NewClient returns the provider's client wrapped in the call policy of o
// (llm.Wrap: timeouts, retries with backoff, concurrency, budget). An
// unknown provider, a missing model or a missing API key is an error.
func NewClient(o ClientOptions) (*llm.Robust, error) {
	if o.Model == "" {
		return nil, fmt.Errorf("summarize: provider %s needs a model", o.Provider)
	}
	opts := llm.Options{BaseURL: o.BaseURL, Model: o.Model, APIKeyEnv: o.APIKeyEnv, MaxResponseBytes: o.MaxResponseBytes}
	var client llm.Client
	var err error
	switch o.Provider {
	case ProviderOpenAI:
		client, err = llm.NewOpenAI(opts)
	case ProviderAnthropic:
		client, err = llm.NewAnthropic(opts)
	default:
		return nil, fmt.Errorf("summarize: provider %q: want %s or %s", o.Provider, ProviderOpenAI, ProviderAnthropic)
	}
	if err != nil {
		return nil, err
	}
	retries := o.Retries
	if retries == 0 {
		retries = -1 // llm.Policy: 0 means the default, negative none
	}
	return llm.Wrap(client, llm.Policy{Concurrency: o.Concurrency, Timeout: o.Timeout, MaxRetries: retries,
		MaxCalls: o.MaxCalls, MaxTokens: o.MaxTokens}), nil
}
