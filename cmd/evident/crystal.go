package main

// The crystal subcommands: the CRYSTAL reasoning-step scorer (spec crystal.md).
//
//	evident crystal score (--demo | --refs FILE --preds FILE...) [--profile seed|paper]
//	    [--embedder lexical|onnx [--model-dir DIR] [--onnx-lib FILE] [--batch-size N]]
//	    [--threshold X] [--order lis|kendall] [--json] [--items FILE]
//
// The table (or its JSON with --json) goes to stdout, per-item evidence to
// --items as JSON Lines; progress of the onnx embedder goes to stderr. Bad
// flags or unreadable inputs exit with status 2 (main's default for errors).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"evident/crystal"
	"evident/crystal/demo"
	"evident/crystal/embed"
	"evident/crystal/report"
)

func crystalCommand() *cli.Command {
	return &cli.Command{
		Name:     "crystal",
		Usage:    "CRYSTAL reasoning-step scorer: answers and steps of vision-language models against reference steps",
		Commands: []*cli.Command{crystalScoreCommand()},
	}
}

func crystalScoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "score predictions against references: Acc, Match F1, P, R, LIS, Ord.F1, average steps and CPR per model",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "refs", Usage: "references: JSON keyed by item id {id: {reference_steps, answer, question, options}}, a JSON array or JSON Lines"},
			&cli.StringSliceFlag{Name: "preds", Usage: "predictions, JSON Lines {id, model, reasoning_steps, answer} or raw replies {id, model, reply}; repeatable"},
			&cli.BoolFlag{Name: "demo", Usage: "score the embedded sample set (15 items, three fictional models) instead of --refs/--preds"},
			&cli.StringFlag{Name: "profile", Value: string(crystal.ProfileSeed), Usage: "rule set: seed (seed 002, clean judge) or paper (reference package, quirks included)"},
			&cli.StringFlag{Name: "embedder", Value: "lexical", Usage: "step similarity: lexical (word overlap, no model) or onnx (sentence-transformer in --model-dir; needs a build with -tags onnx)"},
			&cli.StringFlag{Name: "model-dir", Usage: "onnx: directory with model.onnx (or onnx/model.onnx) and tokenizer.json, e.g. an export of all-distilroberta-v1"},
			&cli.StringFlag{Name: "onnx-lib", Usage: "onnx: path of libonnxruntime.so (default $" + embed.LibraryEnv + ")"},
			&cli.IntFlag{Name: "batch-size", Value: embed.DefaultBatchSize, Usage: "onnx: texts per model run"},
			&cli.Float64Flag{Name: "threshold", Usage: "match threshold (default: 0.30 for lexical, 0.35 for embeddings)"},
			&cli.StringFlag{Name: "order", Value: string(crystal.OrderLIS), Usage: "order score of Ord.F1: lis or kendall"},
			&cli.BoolFlag{Name: "json", Usage: "print the table as JSON"},
			&cli.StringFlag{Name: "items", Usage: "write per-item evidence here as JSON Lines (matched pairs with similarity, unmatched steps, the answer rule that decided)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			items, runs, err := crystalInputs(cmd)
			if err != nil {
				return err
			}
			profile, err := crystal.ParseProfile(cmd.String("profile"))
			if err != nil {
				return err
			}
			order := crystal.OrderMethod(cmd.String("order"))
			if order != crystal.OrderLIS && order != crystal.OrderKendall {
				return fmt.Errorf("--order %q: want lis or kendall", order)
			}
			sim, closeSim, err := crystalSimilarity(ctx, cmd, profile, items)
			if err != nil {
				return err
			}
			defer closeSim()
			tab, err := report.Score(ctx, items, runs, crystal.Config{Profile: profile, Similarity: sim,
				Threshold: cmd.Float64("threshold"), Order: order})
			if err != nil {
				return err
			}
			if path := cmd.String("items"); path != "" {
				if err := writeFile(path, func(w *bufio.Writer) error { return tab.WriteItems(w, items, runs) }); err != nil {
					return err
				}
			}
			if cmd.Bool("json") {
				return tab.WriteJSON(cmd.Root().Writer)
			}
			return tab.WriteText(cmd.Root().Writer)
		},
	}
}

// crystalInputs resolves --demo or --refs/--preds.
func crystalInputs(cmd *cli.Command) ([]crystal.Item, []report.Run, error) {
	refs, preds := cmd.String("refs"), cmd.StringSlice("preds")
	if cmd.Bool("demo") {
		if refs != "" || len(preds) > 0 {
			return nil, nil, errors.New("--demo cannot be combined with --refs or --preds")
		}
		items, err := demo.Items()
		if err != nil {
			return nil, nil, err
		}
		runs, err := demo.Predictions()
		return items, runs, err
	}
	if refs == "" || len(preds) == 0 {
		return nil, nil, errors.New("give --refs FILE and --preds FILE (or --demo)")
	}
	items, err := report.ReadItemsFile(refs)
	if err != nil {
		return nil, nil, err
	}
	runs, err := report.ReadPredictionFiles(preds...)
	return items, runs, err
}

// crystalSimilarity builds the step similarity of --embedder. For onnx it
// loads the model, embeds every reference step once into a cache (full
// batches) and returns the cached cosine similarity and a closer.
func crystalSimilarity(ctx context.Context, cmd *cli.Command, p crystal.Profile, items []crystal.Item) (embed.Similarity, func(), error) {
	switch e := cmd.String("embedder"); e {
	case "lexical":
		if cmd.String("model-dir") != "" {
			return nil, nil, errors.New("--model-dir needs --embedder onnx")
		}
		return crystal.LexicalFor(p), func() {}, nil
	case "onnx":
		if cmd.String("model-dir") == "" {
			return nil, nil, errors.New("--embedder onnx needs --model-dir DIR (model.onnx + tokenizer.json)")
		}
		m, err := embed.OpenONNX(embed.ONNXOptions{ModelDir: cmd.String("model-dir"), Library: cmd.String("onnx-lib"),
			BatchSize: int(cmd.Int("batch-size"))})
		if err != nil {
			return nil, nil, err
		}
		var refs []string
		for _, it := range items {
			refs = append(refs, it.ReferenceSteps...)
		}
		cache := embed.NewCache()
		n, err := cache.Warm(ctx, m, refs)
		if err != nil {
			m.Close()
			return nil, nil, err
		}
		fmt.Fprintf(cmd.Root().ErrWriter, "crystal: embedded %d distinct reference steps with %s\n", n, m.Name())
		return embed.Cosine{Embedder: m, Cache: cache}, func() { m.Close() }, nil
	default:
		return nil, nil, fmt.Errorf("--embedder %q: want lexical or onnx", e)
	}
}

// writeFile creates path and writes it through a buffer.
func writeFile(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
