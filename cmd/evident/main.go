// Command evident checks what AI models produce against evidence. Code
// decides, models only propose, and every verdict shows the rows it stands on.
//
// This file is the thin command line: it maps flags to package calls and
// holds no rules. Subcommands:
//
//	evident judge --demo
//	evident judge --turns F --cards F --lexicon F [--out F] [--rejects F] [--speech-profile seed|extended] [--endings F]
//	evident check --verdicts F (--demo | --turns F --cards F --lexicon F) [--speech-profile …] [--endings F]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/demo"
	"evident/persona/ingest"
	"evident/persona/speech"
	"evident/persona/summarize"
	"evident/runstore"
)

func main() {
	if err := app().Run(context.Background(), os.Args); err != nil {
		// An empty message was reported already (arc script mode).
		if err.Error() != "" {
			fmt.Fprintln(os.Stderr, "evident:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is the process status for err: 0 for nil, the code of a
// cli.ExitCoder (1 for failed checks or verification), else 2 (usage and
// input errors).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 2
}

func app() *cli.Command {
	return &cli.Command{
		Name:  "evident",
		Usage: "check what AI models produce against evidence",
		// main turns errors into exit codes; the library must not exit.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		// Repeat a flag to give several files; a comma may be part of a path.
		DisableSliceFlagSeparator: true,
		Commands: append([]*cli.Command{
			judgeCommand(),
			checkCommand(),
			arcCommand(),
			crystalCommand(),
			cardCommand(),
		}, webCommands()...),
	}
}

// tableFlags are the three input tables and the speech profile, shared by
// judge and check.
func tableFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "turns", Usage: "chat_turn table (.jsonl, .json array or .csv)"},
		&cli.StringFlag{Name: "cards", Usage: "character_card table (.jsonl, .json array or .csv)"},
		&cli.StringFlag{Name: "lexicon", Usage: "topic_lexicon table (.jsonl, .json array or .csv)"},
		&cli.BoolFlag{Name: "demo", Usage: "use the embedded demo tables instead of --turns/--cards/--lexicon"},
		&cli.StringFlag{Name: "speech-profile", Value: "seed", Usage: "polite-ending profile: seed or extended"},
		&cli.StringFlag{Name: "endings", Usage: "file of extra polite endings, one a line ('!' prefix: noun exception)"},
	}
}

// tables resolves the table flags to inputs.
func tables(cmd *cli.Command) (turns, cards, lexicon ingest.Source, err error) {
	if cmd.Bool("demo") {
		if cmd.String("turns") != "" || cmd.String("cards") != "" || cmd.String("lexicon") != "" {
			return turns, cards, lexicon, errors.New("--demo cannot be combined with --turns, --cards or --lexicon")
		}
		return demo.Turns(), demo.Cards(), demo.Lexicon(), nil
	}
	for _, f := range []struct {
		flag string
		dst  *ingest.Source
	}{{"turns", &turns}, {"cards", &cards}, {"lexicon", &lexicon}} {
		path := cmd.String(f.flag)
		if path == "" {
			return turns, cards, lexicon, fmt.Errorf("--%s is required (or --demo)", f.flag)
		}
		t, err := ingest.File(path)
		if err != nil {
			return nil, nil, nil, err
		}
		*f.dst = t
	}
	return turns, cards, lexicon, nil
}

// tablesAndProfile resolves the table flags and the speech profile, which
// every command that judges needs together.
func tablesAndProfile(cmd *cli.Command) (turns, cards, lexicon ingest.Source, p *speech.Profile, err error) {
	if turns, cards, lexicon, err = tables(cmd); err != nil {
		return
	}
	p, err = profile(cmd)
	return
}

// profile resolves --speech-profile and --endings.
func profile(cmd *cli.Command) (*speech.Profile, error) {
	p, err := speech.ByName(cmd.String("speech-profile"))
	if err != nil {
		return nil, err
	}
	path := cmd.String("endings")
	if path == "" {
		return p, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	endings, exceptions, err := speech.ReadEndings(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.With(endings, exceptions), nil
}

func judgeCommand() *cli.Command {
	return &cli.Command{
		Name:  "judge",
		Usage: "judge every reply turn against its character card (JSONL records, input order)",
		Description: "Rules decide every verdict. With --summarizer a model may rewrite each record's one-line summary\n" +
			"(and propose the evidence it quotes); code checks the answer (persona/summarize) and keeps the rules'\n" +
			"sentence and evidence when it fails. API keys come only from environment variables.",
		Flags: append(append(tableFlags(),
			&cli.StringFlag{Name: "out", Usage: "write records here instead of stdout"},
			&cli.StringFlag{Name: "rejects", Usage: "write rejected rows here as JSONL {file, line, turn_id, reason} (default: stderr)"},
			&cli.IntFlag{Name: "workers", Usage: "parallel decoders/judges (0 = all cores)"},
			&cli.StringFlag{Name: "tmp", Usage: "directory for the first pass's sorted runs (default: /var/tmp, else the system temp dir)"},
			&cli.StringFlag{Name: "db", Usage: "store the tables and the run in this SQLite store instead of printing records (see evident serve)"},
		), summaryFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) (err error) {
			// SIGINT and SIGTERM cancel the run through ctx, so the deferred
			// cleanups below remove pending outputs and temporary files.
			ctx, stop := interruptible(ctx)
			defer func() {
				err = interrupted(ctx, err)
				stop()
			}()
			if err := checkJudgeFlags(cmd); err != nil {
				return err
			}
			turns, cards, lexicon, p, err := tablesAndProfile(cmd)
			if err != nil {
				return err
			}
			if cmd.String("db") != "" {
				return judgeToStore(ctx, cmd, turns, cards, lexicon, p)
			}
			// --out and --rejects replace their files only when the run
			// succeeds; a failed run leaves what was there. (A device or
			// named pipe is written as the run goes: createOutput.)
			var out io.Writer = cmd.Root().Writer
			var pending []*outFile
			defer func() {
				for _, f := range pending {
					_ = f.cleanup() // no-op after commit
				}
			}()
			if path := cmd.String("out"); path != "" {
				f, err := createOutput("--out", path)
				if err != nil {
					return err
				}
				pending = append(pending, f)
				out = f
			}
			bw := bufio.NewWriterSize(out, 1<<16)
			rejects, flushRejects, rejectFile, err := rejectSink(cmd)
			if err != nil {
				return err
			}
			if rejectFile != nil {
				pending = append(pending, rejectFile)
			}

			j, tableRejects, err := batch.NewJudge(cards, lexicon, p)
			if err != nil {
				return err
			}
			for _, r := range tableRejects {
				rejects(r)
			}
			notes, err := batch.CardNotes(cards) // a card file's guessed fields, to confirm
			if err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(cmd.Root().ErrWriter, n)
			}
			sum, err := setupSummary(ctx, cmd, j, cards)
			if err != nil {
				return err
			}
			defer sum.finish()
			run := batch.Run{Judge: j, Turns: turns, Workers: int(cmd.Int("workers")), TempDir: cmd.String("tmp")}
			sum.configure(&run)
			tally, err := run.Do(ctx, sum.sink(batch.Outputs{Lines: bw, Reject: func(r persona.Reject) error { rejects(r); return nil }}))
			if err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("writing records: %w", err)
			}
			if err := flushRejects(); err != nil {
				return fmt.Errorf("writing rejects: %w", err)
			}
			for _, f := range pending {
				if err := f.commit(); err != nil {
					return err
				}
			}
			if err := sum.finish(); err != nil {
				return err
			}
			sum.report()
			w := cmd.Root().ErrWriter
			fmt.Fprintln(w, tally) // judged + rejected = chat_turn rows read
			if len(tableRejects) > 0 {
				fmt.Fprintf(w, "also rejected %d card or lexicon rows\n", len(tableRejects))
			}
			if sum.s != nil {
				fmt.Fprintln(w, sum.s.Tally())
			}
			if tally.Judged == 0 && tally.Rejected > 0 {
				return cli.Exit("no turn could be judged: every chat_turn row was rejected (see the rejects)", 1)
			}
			return nil
		},
	}
}

// judgeToStore is judge --db: the tables become a dataset and the verdicts a
// run of the store (persona/runstore), as evident import does.
func judgeToStore(ctx context.Context, cmd *cli.Command, turns, cards, lexicon ingest.Source, p *speech.Profile) error {
	for _, f := range []string{"out", "rejects"} {
		if cmd.IsSet(f) {
			return fmt.Errorf("--db stores records and rejects in the store; it cannot be combined with --%s", f)
		}
	}
	if cmd.String("cache") == cmd.String("db") {
		// The run holds the store's write lock until it commits.
		return fmt.Errorf("--cache must be another file than --db")
	}
	db, err := openStore(ctx, cmd)
	if err != nil {
		return err
	}
	defer db.Close()
	o := runstore.Options{Profile: p, Workers: int(cmd.Int("workers")), TempDir: cmd.String("tmp")}
	var sum *summarySetup
	if cmd.String("summarizer") != "none" || cmd.IsSet("summary-log") {
		// The summarizer checks answers with a judge of the same tables.
		j, _, err := batch.NewJudge(cards, lexicon, p)
		if err != nil {
			return err
		}
		if sum, err = setupSummary(ctx, cmd, j, cards); err != nil {
			return err
		}
		defer sum.finish()
		var r batch.Run
		sum.configure(&r)
		o.Summarizer, o.SummarizeConcurrency = r.Summarizer, r.SummarizeConcurrency
		o.Also = sum.sink(batch.Outputs{})
		if sum.s != nil {
			o.PromptVersion = summarize.PromptVersion
		}
	}
	id, tally, err := runstore.JudgeToStoreWith(ctx, db, runstore.Tables{Turns: turns, Cards: cards, Lexicon: lexicon}, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.Root().ErrWriter, tally)
	if sum != nil {
		if err := sum.finish(); err != nil {
			return err
		}
		sum.report()
		if sum.s != nil {
			fmt.Fprintln(cmd.Root().ErrWriter, sum.s.Tally())
		}
	}
	fmt.Fprintf(cmd.Root().ErrWriter, "stored run %d in %s (evident serve --db %s)\n", id, cmd.String("db"), cmd.String("db"))
	return nil
}

// rejectSink returns where rejects go: JSONL to --rejects (an output file,
// createOutput, that the caller commits on success; flush before that), or
// one readable line each on stderr.
func rejectSink(cmd *cli.Command) (func(persona.Reject), func() error, *outFile, error) {
	path := cmd.String("rejects")
	if path == "" {
		w := cmd.Root().ErrWriter
		return func(r persona.Reject) {
			if r.Line > 0 && !strings.HasPrefix(r.Reason, "line ") {
				fmt.Fprintf(w, "reject %s:%d: %s\n", r.File, r.Line, r.Reason)
			} else {
				fmt.Fprintf(w, "reject %s: %s\n", r.File, r.Reason)
			}
		}, func() error { return nil }, nil, nil
	}
	f, err := createOutput("--rejects", path)
	if err != nil {
		return nil, nil, nil, err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return func(r persona.Reject) { _ = enc.Encode(r) }, bw.Flush, f, nil
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "run the seed's ten automatic checks on a verdict file (ours or another system's); exit 1 on any failure",
		Flags: append(tableFlags(),
			&cli.StringFlag{Name: "verdicts", Usage: "JSONL verdict records to check", Required: true},
			&cli.StringFlag{Name: "summary-log", Usage: "the judge's --summary-log sidecar: also show which records carry a model's summary and what rejected the others"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			turns, cards, lexicon, p, err := tablesAndProfile(cmd)
			if err != nil {
				return err
			}
			j, _, err := batch.NewJudge(cards, lexicon, p)
			if err != nil {
				return err
			}
			path := cmd.String("verdicts")
			verdicts := ingest.NewTable(path, ingest.JSONL, func() (io.ReadCloser, error) { return os.Open(path) })
			rep, err := batch.Check(ctx, verdicts, turns, j)
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			if cmd.Bool("json") {
				enc := json.NewEncoder(w)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				rep.WriteText(w)
			}
			if path := cmd.String("summary-log"); path != "" {
				f, err := os.Open(path)
				if err != nil {
					return err
				}
				st, err := summarize.ReadLog(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				fmt.Fprintln(w, st)
			}
			if !rep.OK() {
				return cli.Exit(fmt.Sprintf("%s: check failures: %d", path, len(rep.Failures)), 1)
			}
			return nil
		},
	}
}
