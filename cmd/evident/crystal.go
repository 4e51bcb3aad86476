package main

// The crystal subcommands: the CRYSTAL reasoning-step scorer (spec crystal.md).
//
//	evident crystal score (--demo [--preds FILE...] | --refs FILE --preds FILE...) [--profile seed|paper]
//	    [--embedder lexical|onnx [--model-dir DIR] [--onnx-lib FILE] [--batch-size N]]
//	    [--threshold X] [--order lis|kendall] [--json] [--items FILE] [--db FILE [--name TEXT]]
//	evident crystal run (--demo | --data FILE) --model NAME [--base-url URL] [--api-key-env NAME]
//	    [--out FILE] [--concurrency N] [--rps X] [--timeout D] [--retries N] [--no-progress]
//
// score: the table (or its JSON with --json) goes to stdout, per-item
// evidence to --items as JSON Lines; progress of the onnx embedder goes to
// stderr. --db FILE also saves the run (its table, per-item evidence and
// inputs, and the image files its items name: see crystalImageFiles) in
// that SQLite store, where `evident serve --db FILE` lists it
// beside the judge's runs (issue 16 item 3); "stored CRYSTAL run N in FILE"
// goes to stderr, stdout is unchanged. --demo scores the embedded sample's references against its three
// fictional models, or against --preds (e.g. what `crystal run --demo` wrote).
//
// run (issue 5 item 4, package evident/crystal/run): asks an OpenAI-compatible
// vision-language model each item and writes its raw replies as JSON Lines
// {id, model, reply, …} to --out (resumed: ids the model already answered
// there are skipped, new lines appended) or stdout, ready for
// `crystal score --preds`. The progress bar (when stderr is a terminal),
// failed items and the final tally go to stderr. Items that failed exit
// with status 1 once all others are done; bad flags or unreadable inputs
// exit with status 2 (main's default for errors).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"evident/crystal"
	"evident/crystal/demo"
	"evident/crystal/embedder"
	"evident/crystal/report"
	"evident/crystal/run"
	"evident/internal/file"
	"evident/llm"
	"evident/store"
)

func crystalCommand() *cli.Command {
	return &cli.Command{
		Name:     "crystal",
		Usage:    "CRYSTAL reasoning-step scorer: answers and steps of vision-language models against reference steps",
		Commands: []*cli.Command{crystalScoreCommand(), crystalRunCommand()},
	}
}

func crystalScoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "score predictions against references: Acc, Match F1, P, R, LIS, Ord.F1, average steps and CPR per model",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "refs", Usage: "references: JSON keyed by item id {id: {reference_steps, answer, question, options}}, a JSON array or JSON Lines"},
			&cli.StringSliceFlag{Name: "preds", Usage: "predictions, JSON Lines {id, model, reasoning_steps, answer} or raw replies {id, model, reply}; repeatable"},
			&cli.BoolFlag{Name: "demo", Usage: "score the embedded sample set (15 items) instead of --refs: its three fictional models, or --preds when given"},
			&cli.StringFlag{Name: "profile", Value: string(crystal.ProfileSeed), Usage: "rule set: seed (seed 002, clean judge) or paper (reference package, quirks included)"},
			&cli.StringFlag{Name: "embedder", Value: "lexical", Usage: "step similarity: lexical (word overlap, no model) or onnx (sentence-transformer in --model-dir; needs a build with -tags onnx)"},
			&cli.StringFlag{Name: "model-dir", Usage: "onnx: directory with model.onnx (or onnx/model.onnx) and tokenizer.json, e.g. an export of all-distilroberta-v1"},
			&cli.StringFlag{Name: "onnx-lib", Usage: "onnx: path of libonnxruntime.so (default $" + embedder.LibraryEnv + ")"},
			&cli.IntFlag{Name: "batch-size", Value: embedder.DefaultBatchSize, Usage: "onnx: texts per model run"},
			&cli.Float64Flag{Name: "threshold", HideDefault: true, Usage: "match threshold (default: 0.30 for lexical, 0.35 for embeddings)"},
			&cli.StringFlag{Name: "order", Value: string(crystal.OrderLIS), Usage: "order score of Ord.F1: lis or kendall"},
			&cli.BoolFlag{Name: "json", Usage: "print the table as JSON"},
			&cli.StringFlag{Name: "items", Usage: "write per-item evidence here as JSON Lines (matched pairs with similarity, unmatched steps, the answer rule that decided)"},
			&cli.StringFlag{Name: "db", Usage: "also save the run in this SQLite store (see evident serve --db)"},
			&cli.StringFlag{Name: "name", Usage: "--db: the run's name in the store (default: the input files, or \"Demo sample\")"},
		},
		Action: runCrystalScore,
	}
}

func runCrystalScore(ctx context.Context, cmd *cli.Command) error {
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
		if err := writeOutput("--items", path, func(w *bufio.Writer) error { return tab.WriteItems(w, items, runs) }); err != nil {
			return err
		}
	}
	if path := cmd.String("db"); path != "" {
		if err := saveCrystalRun(ctx, cmd, path, items, runs, tab); err != nil {
			return err
		}
	}
	if cmd.Bool("json") {
		return tab.WriteJSON(cmd.Root().Writer)
	}
	return tab.WriteText(cmd.Root().Writer)
}

// saveCrystalRun saves the scored run in the store at path (--db), named by
// --name or after its inputs, and says so on stderr.
func saveCrystalRun(ctx context.Context, cmd *cli.Command, path string, items []crystal.Item, runs []report.Run, tab report.Table) error {
	source := "embedded sample (crystal/demo)"
	if !cmd.Bool("demo") {
		source = "--refs " + cmd.String("refs")
	}
	for _, p := range cmd.StringSlice("preds") {
		source += " --preds " + p
	}
	name := strings.TrimSpace(cmd.String("name"))
	if name == "" {
		name = "Demo sample"
		if !cmd.Bool("demo") {
			name = filepath.Base(cmd.String("refs"))
		}
		name += " · " + string(tab.Profile) + " profile"
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return fmt.Errorf("--db %s: %w", path, err)
	}
	defer db.Close()
	images, missing := crystalImageFiles(cmd, items)
	info, err := db.SaveCrystalRun(ctx, store.CrystalRunMeta{Name: name, Source: source, Images: images}, items, runs, tab)
	if err != nil {
		return fmt.Errorf("--db %s: %w", path, err)
	}
	fmt.Fprintf(cmd.Root().ErrWriter, "stored CRYSTAL run %d in %s (evident serve --db %s)\n", info.ID, path, path)
	if paged, _ := db.CrystalPaged(ctx); paged && (len(images) > 0 || len(missing) > 0) {
		fmt.Fprintf(cmd.Root().ErrWriter, "crystal: kept %d image file(s) with the run", len(images))
		if len(missing) > 0 {
			fmt.Fprintf(cmd.Root().ErrWriter, "; %d not kept (the screen says so on their items): %s", len(missing), strings.Join(missing, "; "))
		}
		fmt.Fprintln(cmd.Root().ErrWriter)
	}
	return nil
}

// crystalImageMax caps one image file read for --db (the screen's upload
// cap for a whole run is of the same order).
const crystalImageMax = 32 << 20

// crystalImageFiles reads the image files the items name, for --db: a path
// relative to the --refs file's directory (absolute paths as they are), or
// the embedded sample's file under --demo. Data URIs stay in the items and
// http(s) addresses are not fetched. A file that cannot be read, is over
// crystalImageMax or is not a PNG, JPEG, GIF or WebP image is left out and
// named in missing ("REF: why").
func crystalImageFiles(cmd *cli.Command, items []crystal.Item) (map[string][]byte, []string) {
	images := map[string][]byte{}
	var missing []string
	dir := filepath.Dir(cmd.String("refs"))
	for _, it := range items {
		ref := strings.TrimSpace(it.Image)
		low := strings.ToLower(ref)
		if ref == "" || images[ref] != nil || strings.HasPrefix(low, "data:") || strings.HasPrefix(low, "http://") || strings.HasPrefix(low, "https://") {
			continue
		}
		var b []byte
		var err error
		if cmd.Bool("demo") {
			if b, err = fs.ReadFile(demo.Images(), strings.TrimPrefix(ref, "./")); err == nil && len(b) > crystalImageMax {
				err = fmt.Errorf("larger than %d bytes", crystalImageMax)
			}
		} else {
			p := filepath.FromSlash(ref)
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			b, err = file.ReadCapped(p, crystalImageMax)
		}
		if err == nil {
			if ct, ok := report.ImageType(b); !ok {
				err = fmt.Errorf("reads as %s, not PNG, JPEG, GIF or WebP", ct)
			}
		}
		if err != nil {
			missing = append(missing, ref+": "+err.Error())
			continue
		}
		images[ref] = b
	}
	return images, missing
}

// crystalInputs resolves --demo [--preds] or --refs/--preds. Predictions
// read from files pass report.ReadRuns's checks, as an upload on the screen
// does.
func crystalInputs(cmd *cli.Command) ([]crystal.Item, []report.Run, error) {
	refs, preds := cmd.String("refs"), cmd.StringSlice("preds")
	var items []crystal.Item
	var err error
	switch {
	case cmd.Bool("demo") && refs != "":
		return nil, nil, errors.New("--demo cannot be combined with --refs")
	case cmd.Bool("demo"):
		if items, err = demo.Items(); err != nil {
			return nil, nil, err
		}
		if len(preds) == 0 {
			runs, err := demo.Predictions()
			return items, runs, err
		}
	case refs == "" || len(preds) == 0:
		return nil, nil, errors.New("give --refs FILE and --preds FILE (or --demo)")
	default:
		if items, err = report.ReadItemsFile(refs); err != nil {
			return nil, nil, err
		}
	}
	files, err := report.ReadFiles(preds...)
	if err != nil {
		return nil, nil, err
	}
	runs, err := report.ReadRuns(items, files)
	return items, runs, err
}

// crystalSimilarity builds the step similarity of --embedder. For onnx it
// loads the model, embeds every reference step once into a cache (full
// batches) and returns the cached cosine similarity and a closer.
func crystalSimilarity(ctx context.Context, cmd *cli.Command, p crystal.Profile, items []crystal.Item) (embedder.Similarity, func(), error) {
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
		m, err := embedder.OpenONNX(embedder.ONNXOptions{ModelDir: cmd.String("model-dir"), Library: cmd.String("onnx-lib"),
			BatchSize: int(cmd.Int("batch-size"))})
		if err != nil {
			return nil, nil, err
		}
		var refs []string
		for _, it := range items {
			refs = append(refs, it.ReferenceSteps...)
		}
		cache := embedder.NewCache()
		n, err := cache.Warm(ctx, m, refs)
		if err != nil {
			m.Close()
			return nil, nil, err
		}
		fmt.Fprintf(cmd.Root().ErrWriter, "crystal: embedded %d distinct reference steps with %s\n", n, m.Name())
		return embedder.Cosine{Embedder: m, Cache: cache}, func() { m.Close() }, nil
	default:
		return nil, nil, fmt.Errorf("--embedder %q: want lexical or onnx", e)
	}
}

func crystalRunCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "ask an OpenAI-compatible vision-language model every item and write its raw replies as predictions for score --preds",
		Description: "Each item is sent as the benchmark's authors did (spec crystal.md \"Prompt and parsing\"): the seed's system\n" +
			"prompt, temperature 0.1, one user message with the image as a data URI and the question with its options as\n" +
			"\"A) …\" lines. A server that refuses the image as too large (413, or a 4xx naming the image and a size) gets\n" +
			"one more try with the image downscaled to at most 1024 px on its longer side. 429, 408, 5xx, timeouts and\n" +
			"connection errors are retried with backoff (Retry-After honoured). Replies are written unparsed; score\n" +
			"repairs or flags them. With --out the run resumes: ids this model already answered there are skipped and new\n" +
			"lines are appended, so rerunning after a failure or an interrupt asks only for what is missing.\n" +
			"The API key comes only from the environment (OPENAI_API_KEY or --api-key-env); a local --base-url needs none.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Usage: "items: the formats score --refs reads (JSON keyed by id, JSON array or JSON Lines), each with an \"image\": a path relative to the data file, a data URI or an http(s) URL"},
			&cli.BoolFlag{Name: "demo", Usage: "ask the embedded sample set (15 items, 11 images) instead of --data"},
			&cli.StringFlag{Name: "model", Usage: "model name, sent to the server and written in every line (required)"},
			&cli.StringFlag{Name: "base-url", Usage: "OpenAI-compatible API base URL, up to and including /v1 (vLLM, Ollama, llama.cpp); default OpenAI's"},
			&cli.StringFlag{Name: "api-key-env", Usage: "environment variable holding the API key (default OPENAI_API_KEY)"},
			maxResponseFlag(),
			&cli.StringFlag{Name: "out", Usage: "predictions file (JSON Lines), resumed and appended to; default stdout (no resume)"},
			&cli.IntFlag{Name: "concurrency", Value: 4, Usage: "items in flight at once"},
			&cli.Float64Flag{Name: "rps", Usage: "most requests started per second, retries of a too-large image included (0 = no limit)"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "limit for each try of a model call"},
			&cli.IntFlag{Name: "retries", Value: 3, Usage: "retries after a 429, 408, 5xx, timeout or connection error (0 = none)"},
			&cli.BoolFlag{Name: "no-progress", Usage: "no progress bar on stderr"},
		},
		Action: runCrystalRun,
	}
}

func runCrystalRun(ctx context.Context, cmd *cli.Command) error {
	items, images, source, err := crystalRunInputs(cmd)
	if err != nil {
		return err
	}
	model := cmd.String("model")
	if model == "" {
		return errors.New("--model NAME is required")
	}
	concurrency := int(cmd.Int("concurrency"))
	if concurrency < 1 {
		return fmt.Errorf("--concurrency %d: want at least 1", concurrency)
	}
	if rps := cmd.Float64("rps"); !(rps >= 0) || math.IsInf(rps, 0) {
		return fmt.Errorf("--rps %v: want a rate ≥ 0", rps)
	}
	client, err := llm.NewOpenAI(llm.Options{BaseURL: cmd.String("base-url"), Model: model,
		APIKeyEnv: cmd.String("api-key-env"), Format: llm.FormatNone, MaxResponseBytes: cmd.Int64("max-response-bytes")})
	if err != nil {
		return err
	}
	retries := int(cmd.Int("retries"))
	if retries == 0 {
		retries = -1 // llm.Policy: 0 means the default, negative none
	}
	robust := llm.Wrap(client, llm.Policy{Concurrency: concurrency, Timeout: cmd.Duration("timeout"), MaxRetries: retries})

	stderr := cmd.Root().ErrWriter
	var out io.Writer = cmd.Root().Writer
	var skip map[string]bool
	outPath := cmd.String("out")
	if outPath != "" {
		f, res, err := run.OpenPreds(outPath, model)
		if err != nil {
			return err
		}
		defer f.Close()
		out, skip = f, res.Answered
		if res.TornTail {
			fmt.Fprintf(stderr, "crystal run: %s ended in a partial line (an interrupted write); cut it off\n", outPath)
		}
		if n := countIn(items, skip); n > 0 {
			fmt.Fprintf(stderr, "crystal run: resuming %s: %d of %d items already answered by %s\n", outPath, n, len(items), model)
		}
	}

	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && !cmd.Bool("no-progress") && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(len(items)-countIn(items, skip),
			progressbar.OptionSetWriter(f),
			progressbar.OptionSetDescription("crystal run "+model),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("items"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	var mu sync.Mutex // orders the failure lines and the bar
	done := func(o run.Outcome) {
		mu.Lock()
		defer mu.Unlock()
		if o.Err != nil {
			if bar != nil {
				_ = bar.Clear()
			}
			fmt.Fprintf(stderr, "crystal run: failed: %v\n", o.Err)
		}
		if bar != nil {
			_ = bar.Add(1)
		}
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	tally, err := run.Run(ctx, items, run.Config{Client: robust, Model: model, Images: images, Out: out, Skip: skip,
		Concurrency: concurrency, RPS: cmd.Float64("rps"), Done: done})
	if bar != nil {
		_ = bar.Finish()
	}
	fmt.Fprintf(stderr, "crystal run: %s\ncrystal run: %s\n", tally, robust.Tally())
	again := "run again"
	if outPath != "" {
		again = "run again with the same --out"
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted (%w); %s to ask only for what is missing", err, again)
		}
		return err
	}
	if outPath != "" && tally.Answered > 0 {
		fmt.Fprintf(stderr, "crystal run: score with: evident crystal score %s --preds %s\n", source, outPath)
	}
	if tally.Failed > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d items failed; %s to retry them", tally.Failed, tally.Items, again), 1)
	}
	return nil
}

// crystalRunInputs resolves --demo or --data to the items, where their
// images are read from, and the score flag naming the same references.
func crystalRunInputs(cmd *cli.Command) ([]crystal.Item, run.ImageSource, string, error) {
	data := cmd.String("data")
	if cmd.Bool("demo") {
		if data != "" {
			return nil, nil, "", errors.New("--demo cannot be combined with --data")
		}
		items, err := demo.Items()
		return items, run.FSImages(demo.Images()), "--demo", err
	}
	if data == "" {
		return nil, nil, "", errors.New("give --data FILE (or --demo)")
	}
	items, err := report.ReadItemsFile(data)
	if err != nil {
		return nil, nil, "", err
	}
	return items, run.DirImages(filepath.Dir(data)), "--refs " + data, nil
}

// countIn counts the items whose id is in set.
func countIn(items []crystal.Item, set map[string]bool) int {
	n := 0
	for _, it := range items {
		if set[it.ID] {
			n++
		}
	}
	return n
}
