package main

// The judge command's model-written summaries (issue 4; package
// evident/persona/summarize):
//
//	evident judge … --summarizer openai|anthropic|none --model NAME [--base-url URL]
//	    [--api-key-env NAME] [--concurrency N] [--timeout D] [--retries N]
//	    [--max-calls N] [--max-tokens N] [--cache FILE] [--summary-log FILE] [--no-progress]
//
// Rules still decide every verdict; a model only rewrites the summary (and
// proposes evidence), and code checks it before it is used. Keys come only
// from environment variables. The final summary tally goes to stderr after
// the judge tally; a progress bar is drawn on stderr when it is a terminal.

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"evident/llm"
	"evident/persona"
	"evident/persona/batch"
	"evident/persona/summarize"
	"evident/store"
)

// summaryFlags are the judge command's flags for model-written summaries.
// maxResponseFlag caps each model answer's body (llm.Options.MaxResponseBytes).
func maxResponseFlag() cli.Flag {
	return &cli.Int64Flag{Name: "max-response-bytes", Value: llm.DefaultMaxResponseBytes,
		Usage: "longest model answer read, in bytes; a longer one is a failed call (not retried)"}
}

func summaryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "summarizer", Value: "none", Usage: "who may rewrite each record's summary: openai (any OpenAI-compatible server), anthropic, or none (the rules' sentence)"},
		&cli.StringFlag{Name: "model", Usage: "model name for --summarizer"},
		&cli.StringFlag{Name: "base-url", Usage: "API base URL (OpenAI-compatible: up to and including /v1); default the provider's public API"},
		&cli.StringFlag{Name: "api-key-env", Usage: "environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)"},
		maxResponseFlag(),
		&cli.IntFlag{Name: "concurrency", Value: 4, Usage: "model calls in flight at once"},
		&cli.DurationFlag{Name: "timeout", Value: 60 * time.Second, Usage: "limit for each model call (each try)"},
		&cli.IntFlag{Name: "retries", Value: 3, Usage: "retries after a 429, 5xx, timeout or connection error (backoff with jitter, Retry-After honoured; 0 = none)"},
		&cli.IntFlag{Name: "max-calls", Usage: "run budget: most requests sent, retries included (0 = no limit)"},
		&cli.IntFlag{Name: "max-tokens", Usage: "run budget: most tokens, input and output together (0 = no limit)"},
		&cli.StringFlag{Name: "cache", Usage: "evident database (SQLite) whose llm_cache table keeps answers across runs; default: in memory for this run only"},
		&cli.StringFlag{Name: "summary-log", Usage: "write one JSONL line per record: {turn_id, summary_source, rejected_by, cached[, detail]}"},
		&cli.BoolFlag{Name: "no-progress", Usage: "no progress bar on stderr"},
	}
}

// summaries is what a judge run needs for summaries; openSummaries opens
// it from the flags.
type summaries struct {
	s           *summarize.Summarizer // nil for --summarizer none
	concurrency int                   // --concurrency
	log         *summarize.LogWriter  // --summary-log, nil without
	bar         *progressbar.ProgressBar
	cache       *store.DB // --cache, nil without
}

// checkSummaryFlags checks --summarizer and the flags that need a model.
func checkSummaryFlags(cmd *cli.Command) error {
	switch provider := cmd.String("summarizer"); provider {
	case "none":
		for _, name := range []string{"model", "base-url", "api-key-env", "max-response-bytes", "cache", "max-calls", "max-tokens"} {
			if cmd.IsSet(name) {
				return fmt.Errorf("--%s needs --summarizer openai or anthropic", name)
			}
		}
	case summarize.ProviderOpenAI, summarize.ProviderAnthropic:
		if cmd.String("model") == "" {
			return fmt.Errorf("--summarizer %s needs --model", provider)
		}
	default:
		return fmt.Errorf("--summarizer %q: want openai, anthropic or none", provider)
	}
	return nil
}

// openSummaries reads the summary flags and opens what they name: the
// sidecar as an output of outs (replaced when the run succeeds), the model
// client (summarize.NewClient), the --cache store (store.SummaryCache) and
// the progress bar when stderr is a terminal. prep is the run's judge and
// cards. The caller must call close.
func openSummaries(ctx context.Context, cmd *cli.Command, outs *outputs, prep batch.Prepared) (st *summaries, err error) {
	if err := checkSummaryFlags(cmd); err != nil {
		return nil, err
	}
	st = &summaries{concurrency: int(cmd.Int("concurrency"))}
	if path := cmd.String("summary-log"); path != "" {
		w, err := outs.create("--summary-log", path)
		if err != nil {
			return nil, err
		}
		st.log = summarize.NewLogWriter(w)
	}
	provider := cmd.String("summarizer")
	if provider == "none" {
		return st, nil
	}
	client, err := summarize.NewClient(summarize.ClientOptions{Provider: provider, Model: cmd.String("model"),
		BaseURL: cmd.String("base-url"), APIKeyEnv: cmd.String("api-key-env"), MaxResponseBytes: cmd.Int64("max-response-bytes"),
		Concurrency: st.concurrency, Timeout: cmd.Duration("timeout"), Retries: int(cmd.Int("retries")),
		MaxCalls: int(cmd.Int("max-calls")), MaxTokens: int(cmd.Int("max-tokens"))})
	if err != nil {
		return nil, err
	}
	var cache summarize.Cache // nil: in memory, this run only
	if path := cmd.String("cache"); path != "" {
		if st.cache, err = store.Open(ctx, path); err != nil {
			return nil, fmt.Errorf("--cache: %w", err)
		}
		cache = store.SummaryCache{DB: st.cache}
	}
	st.s, err = summarize.New(summarize.Config{Judge: prep.Judge, Cards: prep.Cards, Client: client,
		Provider: provider, Model: cmd.String("model"), Cache: cache})
	if err != nil {
		st.close()
		return nil, err
	}
	if f, ok := cmd.Root().ErrWriter.(*os.File); ok && !cmd.Bool("no-progress") && term.IsTerminal(int(f.Fd())) {
		st.bar = progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(f),
			progressbar.OptionSetDescription("summaries"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("records"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return st, nil
}

// close closes the --cache store; a no-op after the first call.
func (st *summaries) close() error {
	if st.cache == nil {
		return nil
	}
	db := st.cache
	st.cache = nil
	return db.Close()
}

// configure adds the summarizer (counted by the progress bar) to a run.
func (st *summaries) configure(r *batch.Run) {
	if st.s == nil {
		return
	}
	r.Summarizer = st.s
	if st.bar != nil {
		r.Summarizer = batch.SummarizerFunc(func(ctx context.Context, rec *persona.Record, cx persona.Context) persona.Summary {
			out := st.s.Summarize(ctx, rec, cx)
			_ = st.bar.Add(1)
			return out
		})
	}
	// Per worker; the client's --concurrency bounds the run, so one chunk
	// alone can keep every slot busy.
	r.SummarizeConcurrency = max(1, st.concurrency)
}

// sink adds the sidecar and the progress bar's total to out.
func (st *summaries) sink(out batch.Outputs) batch.Sink {
	if st.log != nil {
		out.Record = func(j *batch.Judged) error { return st.log.Write(&j.Record, j.Summary) }
	}
	return countingSink{Outputs: out, bar: st.bar}
}

// countingSink is batch.Outputs that gives the progress bar the first
// pass's turn count (batch.Counter).
type countingSink struct {
	batch.Outputs
	bar *progressbar.ProgressBar
}

func (s countingSink) Counted(n int) {
	if s.bar != nil {
		s.bar.ChangeMax(n)
	}
}

// finishBar finishes the progress bar (cleared from the terminal).
func (st *summaries) finishBar() {
	if st.bar != nil {
		_ = st.bar.Finish()
	}
}

// printTally prints the summarizer's tally (none for --summarizer none).
func (st *summaries) printTally(w io.Writer) {
	if st.s != nil {
		fmt.Fprintln(w, st.s.Tally())
	}
}
