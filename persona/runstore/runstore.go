package runstore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/ingest"
	"evident/persona/speech"
	"evident/store"
)

// Tables are the three input tables of one import.
type Tables struct {
	Turns, Cards, Lexicon batch.Input
}

// Options configure Import, JudgeDataset and Run.
type Options struct {
	// Name is the dataset's name; "" uses the turns table's Name.
	Name string
	// Profile is the speech profile to judge with; nil means speech.Seed().
	Profile *speech.Profile
	// Strict refuses the whole import when any row of any table is rejected
	// (the screen's upload); nothing is stored and the error is a
	// *RejectsError. Without it accepted rows are stored and the rejects are
	// kept on the run (evident judge --db).
	Strict bool
	// Workers for batch.Judge; 0 means GOMAXPROCS.
	Workers int
	// TempDir for batch.Judge's first-pass index (batch.Config.TempDir).
	TempDir string
	// Reject, when set, also receives each rejected row as Import finds it.
	Reject func(batch.Reject)
	// Configure, when set, may add to JudgeDataset's batch configuration
	// before judging (evident judge --db --summarizer adds a summarizer's
	// Summarize, Summarized and Counted). Each record is stored with the
	// Summary batch reports for it (store.WithSummary); a Summarized set
	// here is still called, after the record is stored.
	Configure func(*batch.Config)
	// PromptVersion is stored with the run (the summarizer's prompt version;
	// "" when no model wrote summaries).
	PromptVersion string
}

// RejectsError is returned by a strict Import that found rejected rows, and
// by any Import whose chat_turn table has rows but none that can be judged.
// Nothing was stored.
type RejectsError struct {
	Rejects []batch.Reject
}

func (e *RejectsError) Error() string {
	if len(e.Rejects) == 1 {
		r := e.Rejects[0]
		return fmt.Sprintf("1 row rejected (%s line %d: %s); nothing was imported", r.File, r.Line, r.Reason)
	}
	return fmt.Sprintf("%d rows rejected; nothing was imported", len(e.Rejects))
}

// ErrEmpty: the chat_turn table holds no row at all. Nothing was stored.
var ErrEmpty = errors.New("the chat_turn table has no rows; nothing was imported")

// ErrNoDataset: a run that was not judged from a stored dataset cannot be
// re-checked from the store.
var ErrNoDataset = errors.New("the run has no stored dataset")

// Imported describes a committed import.
type Imported struct {
	DatasetID             int64
	Turns, Cards, Lexicon int
	// Rejects are the rows left out (always empty after a strict import).
	Rejects []batch.Reject
}

// Import reads the three tables through batch (same readers and rejects
// policy as evident judge) and stores the accepted rows as one dataset in one
// transaction. See the package doc for what a failure leaves behind: nothing.
func Import(ctx context.Context, db *store.DB, t Tables, o Options) (Imported, error) {
	var out Imported
	reject := func(r batch.Reject) {
		out.Rejects = append(out.Rejects, r)
		if o.Reject != nil {
			o.Reject(r)
		}
	}
	cards, crej, err := batch.LoadCards(t.Cards)
	if err != nil {
		return Imported{}, err
	}
	lex, lrej, err := batch.LoadLexicon(t.Lexicon)
	if err != nil {
		return Imported{}, err
	}
	for _, r := range append(crej, lrej...) {
		reject(r)
	}
	// The rules run here only to learn which turns batch accepts; the
	// profile does not change that.
	j, err := persona.NewJudge(cards, lex, nil)
	if err != nil {
		return Imported{}, err
	}
	name := o.Name
	if name == "" {
		name = t.Turns.Name
	}
	im, err := db.BeginImport(ctx, name)
	if err != nil {
		return Imported{}, err
	}
	defer im.Rollback()
	for _, c := range cards {
		if err := im.AddCard(c); err != nil {
			return Imported{}, err
		}
	}
	for _, r := range lex {
		if err := im.AddLexicon(r); err != nil {
			return Imported{}, err
		}
	}
	tally, err := batch.Judge(ctx, t.Turns, batch.Config{
		Judge: j, Workers: o.Workers, TempDir: o.TempDir, Reject: reject,
		Record: func(_ *persona.Record, tu *persona.Turn) error { return im.AddTurn(tu) },
	})
	if err != nil {
		return Imported{}, err
	}
	if o.Strict && len(out.Rejects) > 0 {
		return Imported{}, &RejectsError{Rejects: out.Rejects}
	}
	if tally.Judged == 0 {
		if len(out.Rejects) > 0 {
			return Imported{}, &RejectsError{Rejects: out.Rejects}
		}
		return Imported{}, ErrEmpty
	}
	id, err := im.Commit()
	if err != nil {
		return Imported{}, err
	}
	out.DatasetID, out.Turns, out.Cards, out.Lexicon = id, tally.Judged, len(cards), len(lex)
	return out, nil
}

// JudgeDataset judges a stored dataset with o.Profile into a new run and
// returns it. rejects (an import's) are stored on the run and counted in its
// tally. Only o.Profile, o.Workers and o.TempDir are read.
func JudgeDataset(ctx context.Context, db *store.DB, datasetID int64, o Options, rejects []batch.Reject) (store.RunInfo, error) {
	p := o.Profile
	if p == nil {
		p = speech.Seed()
	}
	tabs, fps, cleanup, err := Spool(ctx, db, datasetID)
	if err != nil {
		return store.RunInfo{}, err
	}
	defer cleanup()
	j, trej, err := batch.NewJudge(tabs.Cards, tabs.Lexicon, p)
	if err != nil {
		return store.RunInfo{}, err
	}
	w, err := db.BeginRun(ctx, store.RunMeta{DatasetID: datasetID, Profile: p.Name, Endings: Endings(p), Fingerprints: fps, PromptVersion: o.PromptVersion})
	if err != nil {
		return store.RunInfo{}, err
	}
	defer w.Rollback()
	all := append(append([]batch.Reject(nil), rejects...), trej...)
	for _, r := range all {
		if err := w.Reject(r); err != nil {
			return store.RunInfo{}, err
		}
	}
	var rejErr error
	cfg := batch.Config{
		Judge: j, Workers: o.Workers, TempDir: o.TempDir,
		Reject: func(r batch.Reject) {
			if err := w.Reject(r); err != nil && rejErr == nil {
				rejErr = err
			}
		},
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	then := cfg.Summarized
	cfg.Summarized = func(rec *persona.Record, t *persona.Turn, s batch.Summary) error {
		src := store.SummaryRule
		if s.Source == batch.SummaryModel {
			src = store.SummaryModel
		}
		if err := w.Add(*rec, t, store.WithSummary(src, s.RejectedBy)); err != nil {
			return err
		}
		if then != nil {
			return then(rec, t, s)
		}
		return nil
	}
	tally, err := batch.Judge(ctx, tabs.Turns, cfg)
	if err == nil {
		err = rejErr
	}
	if err != nil {
		return store.RunInfo{}, err
	}
	tally.Rejected += len(all)
	return w.Commit(tally)
}

// Result is what Run did: the import and the run judged from it.
type Result struct {
	Imported
	Run store.RunInfo
}

// Run imports the tables (Import) and judges the dataset (JudgeDataset),
// keeping the import's rejects on the run.
func Run(ctx context.Context, db *store.DB, t Tables, o Options) (Result, error) {
	imp, err := Import(ctx, db, t, o)
	if err != nil {
		return Result{}, err
	}
	run, err := JudgeDataset(ctx, db, imp.DatasetID, o, imp.Rejects)
	if err != nil {
		return Result{Imported: imp}, fmt.Errorf("dataset %d was imported but not judged: %w", imp.DatasetID, err)
	}
	return Result{Imported: imp, Run: run}, nil
}

// JudgeToStore is evident judge --db: it imports the three tables (rejected
// rows left out and kept on the run) and judges them into a new run with
// profile (nil: seed), returning the run's id and tally.
func JudgeToStore(ctx context.Context, db *store.DB, turns, cards, lexicon batch.Input, profile *speech.Profile) (int64, batch.Tally, error) {
	return JudgeToStoreWith(ctx, db, Tables{Turns: turns, Cards: cards, Lexicon: lexicon}, Options{Profile: profile})
}

// JudgeToStoreWith is JudgeToStore with all Options (a summarizer through
// Options.Configure and Options.PromptVersion).
func JudgeToStoreWith(ctx context.Context, db *store.DB, t Tables, o Options) (int64, batch.Tally, error) {
	res, err := Run(ctx, db, t, o)
	if err != nil {
		return 0, batch.Tally{}, err
	}
	return res.Run.ID, res.Run.Tally, nil
}

// Endings is the RunMeta.Endings of profile p: its endings, then its noun
// exceptions prefixed with '!' (the --endings file syntax).
func Endings(p *speech.Profile) []string {
	out := append([]string{}, p.Endings...)
	for _, x := range p.Exceptions {
		out = append(out, "!"+x)
	}
	return out
}

// ProfileOf rebuilds the speech profile a run judged with from its stored
// name and endings (see Endings). A run stored without endings gets the
// built-in profile of its name.
func ProfileOf(run store.RunInfo) (*speech.Profile, error) {
	if len(run.Endings) == 0 {
		return speech.ByName(run.Profile)
	}
	var endings, exceptions []string
	for _, e := range run.Endings {
		if x, ok := strings.CutPrefix(e, "!"); ok {
			exceptions = append(exceptions, x)
		} else {
			endings = append(endings, e)
		}
	}
	return (&speech.Profile{Name: run.Profile}).With(endings, exceptions), nil
}

// Check runs the seed's ten automatic checks (batch.Check, with the output
// schema) over every record of a committed run, against the run's stored
// dataset read with the run's profile. Cards updated after the run
// (store.UpdateCard) are read as they are now, so checks that depend on them
// can fail: the run no longer matches the card. ErrNoDataset when the run
// has no dataset.
func Check(ctx context.Context, db *store.DB, run store.RunInfo) (*batch.CheckReport, error) {
	if run.DatasetID == 0 {
		return nil, ErrNoDataset
	}
	p, err := ProfileOf(run)
	if err != nil {
		return nil, err
	}
	recs, err := db.Records(ctx, run.ID, store.Filter{})
	if err != nil {
		return nil, err
	}
	tabs, _, cleanup, err := Spool(ctx, db, run.DatasetID)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	j, _, err := batch.NewJudge(tabs.Cards, tabs.Lexicon, p)
	if err != nil {
		return nil, err
	}
	verdicts, _, err := spool(fmt.Sprintf("run %d records", run.ID), func(enc *json.Encoder) error {
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer verdicts.remove()
	return batch.Check(ctx, verdicts.in, tabs.Turns, j)
}

// Spool writes a stored dataset's three tables to anonymous temporary JSON
// Lines files (unlinked at creation: nothing named stays in the temporary
// folder, even after a kill) and returns them as inputs with their sha256
// fingerprints (keyed by table name). cleanup closes the files, which frees
// their space; call it when the inputs are no longer read.
func Spool(ctx context.Context, db *store.DB, datasetID int64) (Tables, map[string]string, func(), error) {
	var files []spooled
	cleanup := func() {
		for _, f := range files {
			f.remove()
		}
	}
	fps := map[string]string{}
	cards, err := db.Cards(ctx, datasetID)
	if err != nil {
		return Tables{}, nil, cleanup, err
	}
	lex, err := db.Lexicon(ctx, datasetID)
	if err != nil {
		return Tables{}, nil, cleanup, err
	}
	var t Tables
	for _, s := range []struct {
		table string
		dst   *batch.Input
		write func(*json.Encoder) error
	}{
		{"chat_turn", &t.Turns, func(enc *json.Encoder) error {
			return db.EachTurn(ctx, datasetID, func(tu *persona.Turn) error { return enc.Encode(tu) })
		}},
		{"character_card", &t.Cards, func(enc *json.Encoder) error {
			for i := range cards {
				if err := enc.Encode(&cards[i]); err != nil {
					return err
				}
			}
			return nil
		}},
		{"topic_lexicon", &t.Lexicon, func(enc *json.Encoder) error {
			for i := range lex {
				if err := enc.Encode(&lex[i]); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		f, sum, err := spool(fmt.Sprintf("dataset %d %s", datasetID, s.table), s.write)
		if err != nil {
			cleanup()
			return Tables{}, nil, func() {}, err
		}
		files = append(files, f)
		*s.dst = f.in
		fps[s.table] = sum
	}
	return t, fps, cleanup, nil
}

type spooled struct {
	in batch.Input
	f  *os.File
}

func (s spooled) remove() { s.f.Close() }

// spool writes JSON Lines with write into an anonymous temporary file and
// returns it as an input named name, with the sha256 of its bytes. The file
// is unlinked as soon as it is created, so no copy of a dataset (a full
// plaintext chat log) stays in the temporary folder even when the process
// is killed (issue 15 item 6); the input reads it through the open
// descriptor, any number of times, and remove closes it.
func spool(name string, write func(*json.Encoder) error) (spooled, string, error) {
	f, err := os.CreateTemp("", "evident-*.jsonl")
	if err != nil {
		return spooled{}, "", err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return spooled{}, "", err
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err = write(enc)
	if err == nil {
		err = bw.Flush()
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if err != nil {
		f.Close()
		return spooled{}, "", err
	}
	in := batch.Input{Name: name, Format: ingest.JSONL, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(f, 0, size)), nil
	}}
	return spooled{in: in, f: f}, hex.EncodeToString(h.Sum(nil)), nil
}
