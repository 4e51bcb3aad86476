package main

// evident judge --demo
// evident judge --turns F --cards F --lexicon F [--out F] [--rejects F] [--summary-log F]
//     [--speech-profile seed|extended] [--endings F] [--workers N] [--tmp DIR] [--db F]
//     [summary flags, judge_summary.go]
//
// The rules decide (persona/batch.Run); this file maps the flags onto the run
// and its outputs and prints the tallies.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v3"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/ingest"
	"evident/persona/speech"
	"evident/persona/summarize"
	"evident/runstore"
)

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
			niceFlag(),
		), summaryFlags()...),
		Action: runJudge,
	}
}

func runJudge(ctx context.Context, cmd *cli.Command) (err error) {
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
	// --out, --rejects and --summary-log replace their files only when the
	// run succeeds; a failed run leaves what was there (outputs).
	var outs outputs
	defer outs.cleanup()
	records := bufio.NewWriterSize(cmd.Root().Writer, 1<<16)
	if path := cmd.String("out"); path != "" {
		if records, err = outs.create("--out", path); err != nil {
			return err
		}
	}
	reject, err := rejectSink(cmd, &outs)
	if err != nil {
		return err
	}
	prep, err := batch.Prepare(cards, lexicon, p)
	if err != nil {
		return err
	}
	for _, r := range prep.Rejects {
		reject(r)
	}
	for _, n := range prep.Notes { // a card file's guessed fields, to confirm
		fmt.Fprintln(cmd.Root().ErrWriter, n)
	}
	sum, err := openSummaries(ctx, cmd, &outs, prep)
	if err != nil {
		return err
	}
	defer sum.close()
	run := batch.Run{Judge: prep.Judge, Turns: turns, Workers: int(cmd.Int("workers")), TempDir: cmd.String("tmp")}
	sum.configure(&run)
	tally, err := run.Do(ctx, sum.sink(batch.Outputs{Lines: records, Reject: func(r persona.Reject) error { reject(r); return nil }}))
	if err != nil {
		return err
	}
	if err := records.Flush(); err != nil {
		return fmt.Errorf("writing records: %w", err)
	}
	// A run whose every turn was rejected failed: --out (and
	// --summary-log) keep what they held; --rejects says why.
	allRejected := tally.Judged == 0 && tally.Rejected > 0
	var only []string
	if allRejected {
		only = []string{"--rejects"}
	}
	if err := outs.commitOnly(only); err != nil {
		return err
	}
	if err := sum.close(); err != nil {
		return err
	}
	w := cmd.Root().ErrWriter
	sum.finishBar()
	fmt.Fprintln(w, tally) // judged + rejected = chat_turn rows read
	if len(prep.Rejects) > 0 {
		fmt.Fprintf(w, "also rejected %d card or lexicon rows\n", len(prep.Rejects))
	}
	sum.printTally(w)
	if allRejected {
		msg := "no turn could be judged: every chat_turn row was rejected (see the rejects above)"
		if cmd.String("rejects") != "" {
			msg = fmt.Sprintf("no turn could be judged: every chat_turn row was rejected (see %s); --out was left as it was", cmd.String("rejects"))
		} else if cmd.String("out") != "" {
			msg += "; --out was left as it was"
		}
		return cli.Exit(msg, 1)
	}
	return nil
}

// judgeToStore is judge --db: the tables become a dataset and the verdicts a
// run of the store (runstore), as evident import does.
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
	if err := applyNice(cmd); err != nil {
		return err
	}
	db, err := openStore(ctx, cmd)
	if err != nil {
		return err
	}
	defer db.Close()
	// Endings accepted in the endings queue are read as the screen's
	// re-judge reads them (runstore.ReviewedProfile).
	if p, err = runstore.ReviewedProfile(ctx, db, p); err != nil {
		return err
	}
	o := runstore.Options{Profile: p, Workers: int(cmd.Int("workers")), TempDir: cmd.String("tmp")}
	var outs outputs
	defer outs.cleanup()
	var sum *summaries
	if cmd.String("summarizer") != "none" || cmd.IsSet("summary-log") {
		// The summarizer checks answers with a judge of the same tables.
		prep, err := batch.Prepare(cards, lexicon, p)
		if err != nil {
			return err
		}
		if sum, err = openSummaries(ctx, cmd, &outs, prep); err != nil {
			return err
		}
		defer sum.close()
		var r batch.Run
		sum.configure(&r)
		o.Summarizer, o.SummarizeConcurrency = r.Summarizer, r.SummarizeConcurrency
		o.Also = sum.sink(batch.Outputs{})
		if sum.s != nil {
			o.PromptVersion = summarize.PromptVersion
		}
	}
	res, err := runstore.Run(ctx, db, runstore.Tables{Turns: turns, Cards: cards, Lexicon: lexicon}, o)
	if err != nil {
		err = storedWording(ctx, err, res.DatasetID, "the run and its dataset")
	}
	id, tally := res.Run.ID, res.Run.Tally
	if err != nil {
		return err
	}
	if err := outs.commit(); err != nil {
		return err
	}
	w := cmd.Root().ErrWriter
	fmt.Fprintln(w, tally)
	if sum != nil {
		if err := sum.close(); err != nil {
			return err
		}
		sum.finishBar()
		sum.printTally(w)
	}
	fmt.Fprintf(w, "stored run %d in %s (evident serve --db %s)\n", id, cmd.String("db"), cmd.String("db"))
	return indexRun(ctx, w, db, id)
}

// rejectSink returns where rejects go: JSONL to --rejects (an output of
// outs, replaced when the run succeeds), or one readable line each on
// stderr (rejectText).
func rejectSink(cmd *cli.Command, outs *outputs) (func(persona.Reject), error) {
	path := cmd.String("rejects")
	if path == "" {
		w := cmd.Root().ErrWriter
		return func(r persona.Reject) { fmt.Fprintln(w, rejectText(r)) }, nil
	}
	bw, err := outs.create("--rejects", path)
	if err != nil {
		return nil, err
	}
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return func(r persona.Reject) { _ = enc.Encode(r) }, nil
}

// rejectText is one reject for people: "reject FILE:LINE: reason", or
// "reject FILE: reason" when the reason names its position itself
// (persona.Reject.Located) or concerns the whole table.
func rejectText(r persona.Reject) string {
	if r.Line > 0 && !r.Located {
		return fmt.Sprintf("reject %s:%d: %s", r.File, r.Line, r.Reason)
	}
	return fmt.Sprintf("reject %s: %s", r.File, r.Reason)
}
