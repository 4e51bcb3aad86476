package main

// The store-backed commands: serve (the screen), import, report and eval.
// Thin as the rest of the CLI: flags in, package calls out.
//
//	evident serve  [--db F] [--addr 127.0.0.1:8080] [--demo] [--token T] [--max-upload MiB] [--max-live-body MiB]
//	               [--live-max-names N] [--live-max-row-bytes B] [--live-max-state-bytes B] [--arc DIR]
//	evident import (--demo | --turns F --cards F --lexicon F) [--db F] [--name N] [--keep-going] [--no-judge] [--speech-profile …] [--endings F]
//	evident report [--run ID] --html FILE [--db F]
//	evident eval   --gold FILE [--run ID] [--db F] [--json]
//	evident review export [--db F] [--out FILE]

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"evident/persona"
	"evident/persona/evalrun"
	"evident/persona/live"
	"evident/runstore"
	"evident/store"
	"evident/web"
)

func webCommands() []*cli.Command {
	return []*cli.Command{serveCommand(), importCommand(), reportCommand(), evalCommand(), reviewCommand()}
}

// niceFlag is --nice of the commands that import (import, judge --db).
func niceFlag() cli.Flag {
	return &cli.IntFlag{Name: "nice", Value: 10, Usage: "run at this nice value (0..19; 0 keeps the current one), so that a screen served on the same machine keeps answering while the import runs"}
}

// applyNice checks --nice and lowers the process's priority to it.
func applyNice(cmd *cli.Command) error {
	n := cmd.Int("nice")
	if n < 0 || n > 19 {
		return fmt.Errorf("--nice %d: want 0..19 (a lower priority; raising it needs privileges)", n)
	}
	return lowerPriority(int(n))
}

// storedWording says what a judge --db or import that failed left in the
// store: when its dataset and run committed (datasetID, runstore.Result's,
// is set: a later step failed) err says so; when it was interrupted
// before, nothing (what, rolled back: the two commit in one transaction).
func storedWording(ctx context.Context, err error, datasetID int64, what string) error {
	if datasetID == 0 && ctx.Err() != nil {
		return fmt.Errorf("%w (nothing was stored: %s were rolled back)", err, what)
	}
	return err
}

// indexRun writes the search index of run id, just stored (a file store
// indexes a run after it commits: store.IndexRunText), saying so on w. An
// interrupt leaves the rest to evident serve, which indexes what is pending
// at start; the run itself is stored either way.
func indexRun(ctx context.Context, w io.Writer, db *store.DB, id int64) error {
	start := time.Now()
	err := db.IndexRunText(ctx, id)
	switch {
	case errors.Is(err, store.ErrIndexBusy):
		fmt.Fprintf(w, "search index of run %d: another evident is writing it\n", id)
		return nil
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(w, "search index of run %d: interrupted; evident serve finishes it at start (its searches read rows until then)\n", id)
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("run %d is stored; its search index: %w", id, err)
	}
	fmt.Fprintf(w, "search index of run %d written in %.1f s\n", id, time.Since(start).Seconds())
	return nil
}

func dbFlag() cli.Flag {
	return &cli.StringFlag{Name: "db", Usage: "SQLite store file (default: evident/evident.db under the user's data directory; :memory: for a throwaway one)"}
}

// openStore opens --db, or the default path.
func openStore(ctx context.Context, cmd *cli.Command) (*store.DB, error) {
	path := cmd.String("db")
	if path == "" {
		var err error
		if path, err = store.DefaultPath(); err != nil {
			return nil, err
		}
	}
	return store.Open(ctx, path)
}

// storePath is --db, or the default path.
func storePath(cmd *cli.Command) (string, error) {
	if path := cmd.String("db"); path != "" {
		return path, nil
	}
	return store.DefaultPath()
}

// openStoreRead opens --db for reading only (report, review export; issue
// 13 item 3): store.OpenReadOnly never waits for an import or run of
// another process and works on a store file the user may only read. A
// store of an older schema is migrated first by store.Open, which needs
// write access; a missing store is an error that says how to make one.
func openStoreRead(ctx context.Context, cmd *cli.Command) (*store.DB, error) {
	path, err := storePath(cmd)
	if err != nil {
		return nil, err
	}
	if path == store.MemoryPath {
		return store.Open(ctx, path)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no store at %s yet (so no run yet): run `evident import` (or `evident serve`, which judges the demo) first", path)
	}
	db, err := store.OpenReadOnly(ctx, path)
	if errors.Is(err, store.ErrSchemaTooOld) {
		w, werr := store.Open(ctx, path) // migrates
		if werr != nil {
			return nil, fmt.Errorf("%w (migrating it failed: %v)", err, werr)
		}
		w.Close()
		return store.OpenReadOnly(ctx, path)
	}
	return db, err
}

// runOf is --run, or the latest run of the store.
func runOf(ctx context.Context, cmd *cli.Command, db *store.DB) (store.RunInfo, error) {
	if id := cmd.Int64("run"); id != 0 {
		return db.Run(ctx, id)
	}
	run, err := db.LatestRun(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return run, errors.New("the store has no run yet: run `evident import` (or `evident serve`, which judges the demo) first")
	}
	return run, err
}

// openRun opens the store with open (openStoreRead, openStore) and finds
// --run in it (runOf); the caller closes the store.
func openRun(ctx context.Context, cmd *cli.Command, open func(context.Context, *cli.Command) (*store.DB, error)) (*store.DB, store.RunInfo, error) {
	db, err := open(ctx, cmd)
	if err != nil {
		return nil, store.RunInfo{}, err
	}
	run, err := runOf(ctx, cmd, db)
	if err != nil {
		db.Close()
		return nil, store.RunInfo{}, err
	}
	return db, run, nil
}

// readWith opens the file at path and reads it with read; read's error is
// prefixed with the path.
func readWith[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the screen: verdicts grouped by verdict with evidence, checks, self-grading, models, uploads",
		Flags: []cli.Flag{
			dbFlag(),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "listen address; anything but loopback needs --token"},
			&cli.BoolFlag{Name: "demo", Usage: "serve the embedded demo from a throwaway in-memory store (nothing is written to disk)"},
			&cli.StringFlag{Name: "token", Sources: cli.EnvVars("EVIDENT_TOKEN"), Usage: "ask for this token (login form) before showing anything; required off loopback"},
			&cli.StringFlag{Name: "api-token", Sources: cli.EnvVars("EVIDENT_API_TOKEN"), Usage: "a second token the live API (/api/v1/turns) accepts as Authorization: Bearer"},
			&cli.Int64Flag{Name: "max-upload", Value: web.DefaultMaxUpload >> 20, Usage: "largest upload in MiB (all files of one form together)"},
			&cli.Int64Flag{Name: "max-live-body", Value: web.DefaultMaxLiveBody >> 20, Usage: "largest live API request body in MiB (POST /api/v1/turns; the server holds at most 4 of them at once)"},
			&cli.Int64Flag{Name: "live-cache", Value: web.DefaultLiveCacheMiB, Usage: "MiB of recently judged sessions' recall state the live API (/api/v1/turns) keeps in memory between requests; 0 keeps none (each request reads it from the store: same records, more CPU)"},
			&cli.IntFlag{Name: "live-max-names", Value: live.DefaultMaxNames, Usage: "most distinct named_entities of one live API row (more: 413)"},
			&cli.IntFlag{Name: "live-max-row-bytes", Value: live.DefaultMaxRowBytes, Usage: "most bytes of reply_text plus user_message of one live API row (more: 413)"},
			&cli.IntFlag{Name: "live-max-state-bytes", Value: live.DefaultMaxStateBytes, Usage: "most bytes of one session's recall state on the live API (a turn that would make it more: 422, nothing stored)"},
			&cli.DurationFlag{Name: "upload-grace", Value: web.DefaultUploadGrace, Usage: "an upload (/upload, /gold) is checked for --upload-min-rate over each period this long from when it takes its slot (at least 1s)"},
			&cli.Int64Flag{Name: "upload-min-rate", Value: web.DefaultUploadMinRate >> 10, Usage: "KiB/s an upload must bring, averaged over each --upload-grace period, or it is cut with 408 and frees its slot"},
			&cli.StringFlag{Name: "arc", Usage: "show ARC agent runs under /arc: an agent workspace, or a folder whose subfolders are workspaces"},
		},
		Action: runServe,
	}
}

func runServe(ctx context.Context, cmd *cli.Command) error {
	addr, token := cmd.String("addr"), cmd.String("token")
	if err := web.CheckAddr(addr, token); err != nil {
		return err
	}
	if err := web.CheckAPIToken(addr, cmd.String("api-token")); err != nil {
		return err
	}
	if g := cmd.Duration("upload-grace"); g < time.Second {
		return fmt.Errorf("--upload-grace is %v; it must be at least 1s", g)
	}
	if cmd.Int64("upload-min-rate") <= 0 {
		return errors.New("--upload-min-rate must be positive (KiB/s)")
	}
	if cmd.Int64("max-live-body") <= 0 {
		return errors.New("--max-live-body must be positive")
	}
	limits := live.Limits{MaxNames: cmd.Int("live-max-names"), MaxRowBytes: cmd.Int("live-max-row-bytes"), MaxStateBytes: cmd.Int("live-max-state-bytes")}
	for _, f := range []struct {
		name string
		v    int
	}{{"live-max-names", limits.MaxNames}, {"live-max-row-bytes", limits.MaxRowBytes}, {"live-max-state-bytes", limits.MaxStateBytes}} {
		if f.v <= 0 {
			return fmt.Errorf("--%s is %d: it must be positive", f.name, f.v)
		}
	}
	if cmd.Int64("max-upload") <= 0 {
		return errors.New("--max-upload must be positive")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var db *store.DB
	var err error
	if cmd.Bool("demo") {
		if cmd.String("db") != "" {
			return errors.New("--demo serves a throwaway in-memory store; drop --db (a store file gets the demo on its first start anyway)")
		}
		db, err = store.Open(ctx, store.MemoryPath)
	} else {
		db, err = openStore(ctx, cmd)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	if err := web.SetLiveCache(db, cmd.Int64("live-cache")); err != nil {
		return err
	}
	errw := io.Writer(&syncWriter{w: cmd.Root().ErrWriter}) // the server's background work writes to it too
	if run, created, err := web.EnsureDemo(ctx, db); err != nil {
		return fmt.Errorf("import the demo: %w", err)
	} else if created {
		fmt.Fprintf(errw, "empty store: imported and judged the demo as run #%d: %s\n", run.ID, run.Tally)
	}
	srv, err := web.New(db, web.Options{Token: token, APIToken: cmd.String("api-token"), MaxUpload: cmd.Int64("max-upload") << 20, MaxLiveBody: cmd.Int64("max-live-body") << 20, ARC: cmd.String("arc"),
		UploadGrace: cmd.Duration("upload-grace"), UploadMinRate: cmd.Int64("upload-min-rate") << 10,
		Log: log.New(errw, "", log.LstdFlags)})
	if err != nil {
		return err
	}
	if err := srv.SetLiveLimits(limits); err != nil {
		return err
	}
	// Runs whose search index is missing (a run stored by judge --db that
	// was stopped before its index, a lost sidecar, an interrupted index)
	// are indexed in the background; their searches read rows meanwhile.
	// Uploads and re-judges ask for it again. ListenAndServe ends it
	// (srv.Close) before the store closes.
	srv.IndexInBackground()
	return web.ListenAndServe(ctx, addr, token, srv, func(a net.Addr) {
		fmt.Fprintf(errw, "serving http://%s/ (store %s); Ctrl-C stops\n", a, db.Path())
	})
}

func importCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "load the three tables into the store as a dataset and judge it (a new run); nothing is stored when a row is rejected unless --keep-going",
		Flags: append(tableFlags(),
			dbFlag(), niceFlag(),
			&cli.StringFlag{Name: "name", Usage: "dataset name (default: the turns file)"},
			&cli.BoolFlag{Name: "keep-going", Usage: "store the rows that can be judged and keep the rejected ones on the run"},
			&cli.BoolFlag{Name: "no-judge", Usage: "only import; judge later from the screen's run list"},
		),
		Action: runImport,
	}
}

func runImport(ctx context.Context, cmd *cli.Command) (err error) {
	// SIGINT/SIGTERM end the import through its context: the
	// store's transaction rolls back and the spooled copies are
	// closed (they are unlinked from the start); exit 130.
	ctx, stop := interruptible(ctx)
	defer stop()
	defer func() { err = interrupted(ctx, err) }()
	turns, cards, lexicon, p, err := tablesAndProfile(cmd)
	if err != nil {
		return err
	}
	if err := applyNice(cmd); err != nil {
		return err
	}
	db, err := openStore(ctx, cmd)
	if err != nil {
		return err
	}
	defer db.Close()
	errw := cmd.Root().ErrWriter
	// Endings accepted in the endings queue are read as the screen's
	// re-judge reads them (runstore.ReviewedProfile).
	if p, err = runstore.ReviewedProfile(ctx, db, p); err != nil {
		return err
	}
	o := runstore.Options{Name: cmd.String("name"), Profile: p, Strict: !cmd.Bool("keep-going"),
		Reject: func(r persona.Reject) { fmt.Fprintf(errw, "reject %s:%d: %s\n", r.File, r.Line, r.Reason) }}
	t := runstore.Tables{Turns: turns, Cards: cards, Lexicon: lexicon}
	var res runstore.Result
	if cmd.Bool("no-judge") {
		res.Imported, err = runstore.Import(ctx, db, t, o)
	} else {
		res, err = runstore.Run(ctx, db, t, o)
	}
	var rej *runstore.RejectsError
	if errors.As(err, &rej) {
		return cli.Exit(fmt.Sprintf("%d rows rejected; nothing was imported (fix them, or --keep-going to store the rest)", len(rej.Rejects)), 1)
	}
	if err != nil {
		err = storedWording(ctx, err, res.DatasetID, "the dataset and its run")
	}
	if err != nil {
		return err
	}
	w := cmd.Root().Writer
	fmt.Fprintf(w, "dataset #%d: %d turns, %d cards, %d lexicon rows (%d rows rejected) in %s\n",
		res.DatasetID, res.Turns, res.Cards, res.Lexicon, len(res.Rejects), db.Path())
	if !cmd.Bool("no-judge") {
		fmt.Fprintf(w, "run #%d: %s\n", res.Run.ID, res.Run.Tally)
		return indexRun(ctx, errw, db, res.Run.ID)
	}
	return nil
}

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write one self-contained HTML file of a run's screen (CSS inlined, no external references)",
		Flags: []cli.Flag{
			dbFlag(),
			&cli.Int64Flag{Name: "run", Usage: "run id (default: the latest run)"},
			&cli.StringFlag{Name: "html", Usage: "output file", Required: true},
			&cli.StringFlag{Name: "filter", Usage: "only turns matching the screen's query string, e.g. 'verdict=말투 어긋남&character=CHR-0100' (keys character, model, session, verdict, q)"},
			&cli.IntFlag{Name: "cap", Value: web.ReportCap, Usage: "write at most this many turns (the first of the filter, in run order); the file says how many matched"},
		},
		Action: runReport,
	}
}

func runReport(ctx context.Context, cmd *cli.Command) error {
	if cmd.Int("cap") < 1 {
		return fmt.Errorf("--cap %d: a report holds at least 1 turn (default %d)", cmd.Int("cap"), web.ReportCap)
	}
	db, run, err := openRun(ctx, cmd, openStoreRead)
	if err != nil {
		return err
	}
	defer db.Close()
	// Replaced atomically when written; a link is followed, a
	// device written in place (outputs).
	path := cmd.String("html")
	if err := writeOutput("--html", path, func(w *bufio.Writer) error {
		f, err := web.ReportFilter(cmd.String("filter"))
		if err != nil {
			return err
		}
		return web.WriteReportWith(ctx, db, run.ID, w, web.ReportOptions{Filter: f, Cap: int(cmd.Int("cap"))})
	}); err != nil {
		return err
	}
	if limit := int(cmd.Int("cap")); cmd.String("filter") != "" || run.Tally.Judged > limit {
		// The file says how many turns matched and how to get the rest.
		fmt.Fprintf(cmd.Root().ErrWriter, "wrote %s (run #%d of %d turns: at most the first %d of the filter)\n", path, run.ID, run.Tally.Judged, limit)
	} else {
		fmt.Fprintf(cmd.Root().ErrWriter, "wrote %s (run #%d, %d turns)\n", path, run.ID, run.Tally.Judged)
	}
	return nil
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "compare a run with hand-labelled gold (agreement, Wilson interval, kappa, confusion, disagreements) and models (McNemar); stores the gold labels",
		Flags: []cli.Flag{
			dbFlag(),
			&cli.StringFlag{Name: "gold", Usage: "gold labels, JSON Lines {turn_id, verdict, note}", Required: true},
			&cli.Int64Flag{Name: "run", Usage: "run id (default: the latest run)"},
			&cli.BoolFlag{Name: "json", Usage: "print the reports as JSON"},
		},
		Action: runEval,
	}
}

func runEval(ctx context.Context, cmd *cli.Command) error {
	path := cmd.String("gold")
	gold, err := readWith(path, evalrun.ReadGold)
	if err != nil {
		return err
	}
	// eval stores the gold labels, so it opens the store for writing; a
	// store the user may only read is evaluated all the same, read-only,
	// without storing them (issue 13 item 3).
	var writeErr error
	db, run, err := openRun(ctx, cmd, func(ctx context.Context, cmd *cli.Command) (*store.DB, error) {
		db, err := openStore(ctx, cmd)
		if err == nil || !errors.Is(err, store.ErrNotWritable) {
			return db, err
		}
		ro, rerr := openStoreRead(ctx, cmd)
		if rerr != nil {
			return nil, err
		}
		writeErr = err
		return ro, nil
	})
	if err != nil {
		return err
	}
	defer db.Close()
	labels := make([]store.Gold, len(gold))
	for i, g := range gold {
		labels[i] = store.Gold{TurnID: g.TurnID, Verdict: g.Verdict, Note: g.Note}
	}
	notStored := ""
	if writeErr != nil {
		notStored = "the store can only be read here"
		fmt.Fprintf(cmd.Root().ErrWriter, "gold labels not stored: the store can only be read here (%v)\n", writeErr)
	} else if err := db.PutGold(ctx, labels, filepath.Base(path)); err != nil {
		return err
	}
	recs, err := db.Records(ctx, run.ID, store.Filter{})
	if err != nil {
		return err
	}
	var turns []persona.Turn
	if run.DatasetID != 0 {
		if turns, err = db.Turns(ctx, run.DatasetID); err != nil {
			return err
		}
	}
	out := evalrun.Summary{Run: run.ID, GoldFile: path, Gold: len(gold), NotStored: notStored,
		Report: evalrun.Evaluate(gold, recs), Models: evalrun.CompareModels(recs, evalrun.PromptsOf(turns))}
	if cmd.Bool("json") {
		return out.WriteJSON(cmd.Root().Writer)
	}
	return out.WriteText(cmd.Root().Writer)
}

func reviewCommand() *cli.Command {
	return &cli.Command{
		Name:  "review",
		Usage: "the review queues' decisions (made on the screen under /runs/{id}/review)",
		Commands: []*cli.Command{{
			Name:  "export",
			Usage: "write every review decision, undone ones included, as JSON Lines (who, when, undone_at, undone_by)",
			Flags: []cli.Flag{
				dbFlag(),
				&cli.StringFlag{Name: "out", Usage: "write here instead of stdout"},
			},
			Action: runReviewExport,
		}},
	}
}

func runReviewExport(ctx context.Context, cmd *cli.Command) error {
	db, err := openStoreRead(ctx, cmd)
	if err != nil {
		return err
	}
	defer db.Close()
	if path := cmd.String("out"); path != "" {
		// Replaced only when the export succeeds (outputs).
		return writeOutput("--out", path, func(w *bufio.Writer) error { return db.ExportDecisions(ctx, w) })
	}
	return db.ExportDecisions(ctx, cmd.Root().Writer)
}

// syncWriter serialises the Writes of goroutines sharing one writer (serve's
// messages and its background indexer's).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
