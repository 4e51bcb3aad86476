// Package llm sends one structured request to a language model and brings back
// its answer as text and, when the text is JSON, as raw JSON. It is the only
// place in evident that talks to a model over the network.
//
// What it owns:
//
//   - [Request], [Response] and the [Client] interface ("give this structured
//     request, get JSON back"), with image parts in user messages for vision
//     models.
//   - Adapters built on the official SDKs: [NewOpenAI] for OpenAI-compatible
//     chat APIs (OpenAI, vLLM, Ollama, llama.cpp servers; base URL
//     configurable), which asks for structured output with a json_schema
//     response_format (or json_object for servers without json_schema), and
//     [NewAnthropic], which forces a single tool whose input_schema is the
//     request's schema and reads that tool's input as the JSON answer.
//   - [Wrap], the robust call policy: bounded concurrency, a timeout per try,
//     retries with exponential backoff and full jitter on 429, 408, 5xx,
//     timeouts and connection errors (honouring Retry-After), a per-run
//     budget of requests and tokens ([ErrBudget]), and a [Tally] for the
//     final report. The SDKs' own retries are switched off so this policy is
//     the only one.
//   - API keys: read from one environment variable per client, sent only in
//     the request header, never logged, and scrubbed from every error text.
//   - A cap on every answer's body ([Options.MaxResponseBytes], default
//     [DefaultMaxResponseBytes], 4 MiB): a longer body ends the call with
//     [ErrTooLarge] as soon as the cap is passed (a declared Content-Length
//     over it before any is read); [Wrap] counts it as a failure and does
//     not retry it.
//
// What it must not touch: judging. Nothing here decides a verdict, checks a
// field against a schema's meaning, fills evidence, writes summaries or hedges,
// or repairs what a model proposed. [Response.JSON] is the model's proposal,
// unvalidated; callers validate it against their schema and the automatic
// checks, and code decides. This package also keeps no cache and writes no
// files; those belong to the callers.
//
// The fake OpenAI-compatible and Anthropic servers in package llmtest let
// tests elsewhere run without network or keys and assert what was sent.
package llm
