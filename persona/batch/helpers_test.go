package batch

import (
	"bytes"
	"context"
	"io"

	"evident/persona"
	"evident/persona/ingest"
)

// The tests below were written against the pipeline's callback form; these
// helpers map that form onto Run and a Sink, so every assertion reads as it
// did: Judge(ctx, turns, Config{…}) is Run{…}.Do with an Outputs sink (plus
// the summary outcome and the pass-1 count).

type (
	Input   = ingest.Source
	Tally   = persona.Tally
	Reject  = persona.Reject
	Summary = persona.Summary
)

const (
	SummaryRule  = persona.SummaryRule
	SummaryModel = persona.SummaryModel
)

// Config is the test form of a run.
type Config struct {
	Judge                *persona.Judge
	Out                  io.Writer
	Reject               func(Reject)
	Workers              int
	Record               func(rec *persona.Record, t *persona.Turn) error
	Summarize            func(ctx context.Context, rec *persona.Record, cx persona.Context) Summary
	SummarizeConcurrency int
	SummarizeInline      bool // Summarize is an Inline summarizer
	Summarized           func(rec *persona.Record, t *persona.Turn, s Summary) error
	TempDir              string
	runSize              int
	Counted              func(turns int)
}

// testSink is Config's outputs as a Sink.
type testSink struct {
	Outputs
	counted func(int)
}

func (s testSink) Counted(n int) {
	if s.counted != nil {
		s.counted(n)
	}
}

// Judge runs turns with cfg.
func Judge(ctx context.Context, turns Input, cfg Config) (persona.Tally, error) {
	r := Run{Judge: cfg.Judge, Turns: turns, Workers: cfg.Workers, TempDir: cfg.TempDir,
		SummarizeConcurrency: cfg.SummarizeConcurrency, runSize: cfg.runSize}
	if cfg.Summarize != nil {
		r.Summarizer = SummarizerFunc(cfg.Summarize)
		if cfg.SummarizeInline {
			r.Summarizer = inlineSummarizer{SummarizerFunc(cfg.Summarize)}
		}
	}
	s := testSink{counted: cfg.Counted}
	if cfg.Out != nil {
		s.Lines = cfg.Out
	}
	if cfg.Reject != nil {
		s.Reject = func(x Reject) error { cfg.Reject(x); return nil }
	}
	if cfg.Record != nil || cfg.Summarized != nil {
		s.Record = func(j *Judged) error {
			if cfg.Record != nil {
				if err := cfg.Record(&j.Record, &j.Turn); err != nil {
					return err
				}
			}
			if cfg.Summarized != nil {
				return cfg.Summarized(&j.Record, &j.Turn, j.Summary)
			}
			return nil
		}
	}
	return r.Do(ctx, s)
}

// FileInput is ingest.File as a Source.
func FileInput(path string) (Input, error) {
	t, err := ingest.File(path)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func bytesInput(name string, f ingest.Format, b []byte) Input {
	return ingest.NewTable(name, f, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

// inlineSummarizer is a SummarizerFunc that says it is Inline.
type inlineSummarizer struct{ SummarizerFunc }

func (inlineSummarizer) Inline() bool { return true }
