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
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"evident/llm"
	"evident/persona"
	"evident/persona/batch"
	"evident/persona/ingest"
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

// summarySetup is what the judge action needs for summaries.
type summarySetup struct {
	s           *summarize.Summarizer // nil for --summarizer none
	concurrency int                   // --concurrency
	log         func(*persona.Record, persona.Summary) error
	bar         *progressbar.ProgressBar
	counted     func(int)
	hook        func(context.Context, *persona.Record, persona.Context) persona.Summary
	closeAll    []func() error
}

// finish flushes and closes what setupSummary opened, last first.
func (st *summarySetup) finish() error {
	var first error
	for i := len(st.closeAll) - 1; i >= 0; i-- {
		if err := st.closeAll[i](); err != nil && first == nil {
			first = err
		}
	}
	st.closeAll = nil
	return first
}

// setupSummary reads the summary flags and opens what they name. j and cards
// are the run's judge and cards input. The caller must call finish.
func setupSummary(ctx context.Context, cmd *cli.Command, j *persona.Judge, cards ingest.Source) (st *summarySetup, err error) {
	st = &summarySetup{concurrency: int(cmd.Int("concurrency"))}
	opened := st // a failing return sets st to nil
	defer func() {
		if err != nil {
			opened.finish()
		}
	}()
	provider, model := cmd.String("summarizer"), cmd.String("model")
	switch provider {
	case "none":
		for _, name := range []string{"model", "base-url", "api-key-env", "max-response-bytes", "cache", "max-calls", "max-tokens"} {
			if cmd.IsSet(name) {
				return nil, fmt.Errorf("--%s needs --summarizer openai or anthropic", name)
			}
		}
	case summarize.ProviderOpenAI, summarize.ProviderAnthropic:
		if model == "" {
			return nil, fmt.Errorf("--summarizer %s needs --model", provider)
		}
	default:
		return nil, fmt.Errorf("--summarizer %q: want openai, anthropic or none", provider)
	}

	if path := cmd.String("summary-log"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriter(f)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		st.log = func(r *persona.Record, s persona.Summary) error { return enc.Encode(summarize.Line(r, s)) }
		st.closeAll = append(st.closeAll, func() error {
			if err := bw.Flush(); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		})
	}
	if provider == "none" {
		return st, nil
	}

	opts := llm.Options{BaseURL: cmd.String("base-url"), Model: model, APIKeyEnv: cmd.String("api-key-env"),
		MaxResponseBytes: cmd.Int64("max-response-bytes")}
	var client llm.Client
	if provider == summarize.ProviderOpenAI {
		client, err = llm.NewOpenAI(opts)
	} else {
		client, err = llm.NewAnthropic(opts)
	}
	if err != nil {
		return nil, err
	}
	retries := int(cmd.Int("retries"))
	if retries == 0 {
		retries = -1 // llm.Policy: 0 means the default, negative none
	}
	robust := llm.Wrap(client, llm.Policy{
		Concurrency: st.concurrency,
		Timeout:     cmd.Duration("timeout"),
		MaxRetries:  retries,
		MaxCalls:    int(cmd.Int("max-calls")),
		MaxTokens:   int(cmd.Int("max-tokens")),
	})

	var cache summarize.Cache // nil: in memory, this run only
	if path := cmd.String("cache"); path != "" {
		db, err := store.Open(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("--cache: %w", err)
		}
		st.closeAll = append(st.closeAll, db.Close)
		cache = store.SummaryCache{DB: db}
	}
	cardList, _, err := batch.LoadCards(cards)
	if err != nil {
		return nil, err
	}
	st.s, err = summarize.New(summarize.Config{Judge: j, Cards: cardList, Client: robust, Provider: provider, Model: model, Cache: cache})
	if err != nil {
		return nil, err
	}
	st.hook = st.s.Summarize

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
		st.counted = func(n int) { st.bar.ChangeMax(n) }
		st.hook = func(ctx context.Context, r *persona.Record, cx persona.Context) persona.Summary {
			out := st.s.Summarize(ctx, r, cx)
			_ = st.bar.Add(1)
			return out
		}
	}
	return st, nil
}

// configure adds the summarizer to a run.
func (st *summarySetup) configure(r *batch.Run) {
	if st.hook != nil {
		r.Summarizer = batch.SummarizerFunc(st.hook)
		// Per worker; the client's --concurrency bounds the run, so one chunk
		// alone can keep every slot busy.
		r.SummarizeConcurrency = max(1, st.concurrency)
	}
}

// sink adds the summary log and the progress bar's total to out.
func (st *summarySetup) sink(out batch.Outputs) batch.Sink {
	if st.log != nil {
		out.Record = func(j *batch.Judged) error { return st.log(&j.Record, j.Summary) }
	}
	return countingSink{Outputs: out, counted: st.counted}
}

// countingSink is batch.Outputs that passes the first pass's turn count on
// (batch.Counter).
type countingSink struct {
	batch.Outputs
	counted func(int)
}

func (s countingSink) Counted(n int) {
	if s.counted != nil {
		s.counted(n)
	}
}

// report finishes the progress bar (cleared from the terminal).
func (st *summarySetup) report() {
	if st.bar != nil {
		_ = st.bar.Finish()
	}
}
