package main

// evident check --verdicts F (--demo | --turns F --cards F --lexicon F)
//     [--speech-profile …] [--endings F] [--summary-log F] [--json]
//
// Runs the seed's ten automatic checks (persona/batch.Check) on a verdict
// file, ours or another system's; exit 1 on any failure.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"evident/persona/batch"
	"evident/persona/ingest"
	"evident/persona/summarize"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "run the seed's ten automatic checks on a verdict file (ours or another system's); exit 1 on any failure",
		Flags: append(tableFlags(),
			&cli.StringFlag{Name: "verdicts", Usage: "JSONL verdict records to check", Required: true},
			&cli.StringFlag{Name: "summary-log", Usage: "the judge's --summary-log sidecar: also show which records carry a model's summary and what rejected the others"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		),
		Action: runCheck,
	}
}

func runCheck(ctx context.Context, cmd *cli.Command) error {
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
		st, err := readWith(path, summarize.ReadLog)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, st)
	}
	if !rep.OK() {
		return cli.Exit(fmt.Sprintf("%s: check failures: %d", path, len(rep.Failures)), 1)
	}
	return nil
}
