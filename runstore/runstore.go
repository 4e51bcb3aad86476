package runstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/ingest"
	"evident/persona/review"
	"evident/persona/speech"
	"evident/store"
)

// Tables are the three input tables of one import.
type Tables struct {
	Turns, Cards, Lexicon ingest.Source
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
	// Workers for the judge (batch.Run.Workers); 0 means GOMAXPROCS.
	Workers int
	// TempDir for the first pass's index (batch.Run.TempDir).
	TempDir string
	// Reject, when set, also receives each rejected row as Import finds it.
	Reject func(persona.Reject)
	// Summarizer, when set, may rewrite summaries in JudgeDataset
	// (batch.Run.Summarizer; evident judge --db --summarizer), with
	// SummarizeConcurrency calls in flight per worker. Each record is stored
	// with the persona.Summary the run reports for it (store.WithSummary).
	Summarizer           batch.Summarizer
	SummarizeConcurrency int
	// Also, when set, receives JudgeDataset's records after each chunk is
	// stored (a summary sidecar log); it is told the turn count too when it
	// is a batch.Counter. Its Rejects and Tally are not called.
	Also batch.Sink
	// PromptVersion is stored with the run (the summarizer's prompt version;
	// "" when no model wrote summaries).
	PromptVersion string
}

// RejectsError is returned by a strict Import that found rejected rows, and
// by any Import whose chat_turn table has rows but none that can be judged.
// Nothing was stored.
type RejectsError struct {
	Rejects []persona.Reject
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
	Rejects []persona.Reject
}

// importSink stores each accepted turn and collects the rejects.
type importSink struct {
	im     *store.Importer
	reject func(persona.Reject)
}

func (s importSink) Wants() batch.Want { return batch.WantRecords }

func (s importSink) Records(_ []byte, recs []batch.Judged) error {
	for i := range recs {
		if err := s.im.AddTurn(&recs[i].Turn); err != nil {
			return err
		}
	}
	return nil
}

func (s importSink) Rejects(rs []persona.Reject) error {
	for _, r := range rs {
		s.reject(r)
	}
	return nil
}

func (importSink) Tally(persona.Tally) error { return nil }

// Import reads the three tables through batch (same readers and rejects
// policy as evident judge) and stores the accepted rows as one dataset in one
// transaction. See the package doc for what a failure leaves behind: nothing.
func Import(ctx context.Context, db *store.DB, t Tables, o Options) (Imported, error) {
	var out Imported
	reject := out.rejecter(o)
	// The rules run here only to learn which turns batch accepts; the
	// profile does not change that.
	st, err := startImport(ctx, db, t, o, nil, reject)
	if err != nil {
		return Imported{}, err
	}
	defer st.im.Rollback()
	run := batch.Run{Judge: st.j, Turns: t.Turns, Workers: o.Workers, TempDir: o.TempDir}
	tally, err := run.Do(ctx, importSink{im: st.im, reject: reject})
	if err != nil {
		return Imported{}, err
	}
	if err := out.accepted(o, tally); err != nil {
		return Imported{}, err
	}
	id, err := st.im.Commit()
	if err != nil {
		return Imported{}, err
	}
	out.DatasetID, out.Turns, out.Cards, out.Lexicon = id, tally.Judged, st.cards, st.lexicon
	return out, nil
}

// rejecter returns the reject callback of an import: it keeps each reject
// in out.Rejects and passes it to Options.Reject.
func (out *Imported) rejecter(o Options) func(persona.Reject) {
	return func(r persona.Reject) {
		out.Rejects = append(out.Rejects, r)
		if o.Reject != nil {
			o.Reject(r)
		}
	}
}

// accepted is the rejects policy once the turns were read: with
// Options.Strict any reject fails the import, and an import with no judged
// turn fails (RejectsError when there were rejects, else ErrEmpty).
func (out *Imported) accepted(o Options, tally persona.Tally) error {
	if o.Strict && len(out.Rejects) > 0 {
		return &RejectsError{Rejects: out.Rejects}
	}
	if tally.Judged == 0 {
		if len(out.Rejects) > 0 {
			return &RejectsError{Rejects: out.Rejects}
		}
		return ErrEmpty
	}
	return nil
}

// started is an import begun by startImport: the Importer holding the
// cards and lexicon, the judge built from them, their row counts and the
// count of their rejected rows.
type started struct {
	im             *store.Importer
	j              *persona.Judge
	cards, lexicon int
	tableRejects   int // rejected card and lexicon rows
}

// startImport reads the card and lexicon tables (their rejects go to
// reject), builds the judge with profile p (nil: the seed's), begins the
// import named Options.Name (default the turn table's name) and adds the
// cards and lexicon to it. The caller rolls the Importer back on failure.
func startImport(ctx context.Context, db *store.DB, t Tables, o Options, p *speech.Profile, reject func(persona.Reject)) (started, error) {
	cards, crej, err := batch.LoadCards(t.Cards)
	if err != nil {
		return started{}, err
	}
	lex, lrej, err := batch.LoadLexicon(t.Lexicon)
	if err != nil {
		return started{}, err
	}
	for _, r := range append(crej, lrej...) {
		reject(r)
	}
	j, err := persona.NewJudge(cards, lex, p)
	if err != nil {
		return started{}, err
	}
	name := o.Name
	if name == "" {
		name = t.Turns.Name()
	}
	im, err := db.BeginImport(ctx, name)
	if err != nil {
		return started{}, err
	}
	st := started{im: im, j: j, cards: len(cards), lexicon: len(lex), tableRejects: len(crej) + len(lrej)}
	for _, c := range cards {
		if err := im.AddCard(c); err != nil {
			im.Rollback()
			return started{}, err
		}
	}
	for _, r := range lex {
		if err := im.AddLexicon(r); err != nil {
			im.Rollback()
			return started{}, err
		}
	}
	return st, nil
}

// runSink stores a run's records and rejects in a RunWriter (and, for a
// run judged as it is imported, each record's turn in the Importer), tallies
// the ten checks the checker found for each record, then hands the records
// to also.
type runSink struct {
	w      *store.RunWriter
	im     *store.Importer // nil: the dataset is already stored
	checks *checker
	tally  *checkTally
	also   batch.Sink
	n      int // records stored so far
	// queues builds the run's review queues from the records as they are
	// stored (the reply as the verdict row keeps it: Record.JudgedReply),
	// so that even the first review view reads no run (kept by keepQueues).
	queues *review.Builder
	stored int // records stored into the run (the queues' row count)
	// reject, when set, receives each rejected turn row (Run's import);
	// stop then ends the storing of rows after the first (a strict import
	// that will roll back: the rows are still judged, to list every reject).
	reject func(persona.Reject)
	stop   bool
}

func (s *runSink) Wants() batch.Want { return batch.WantRecords }

func (s *runSink) Records(_ []byte, recs []batch.Judged) error {
	for i := range recs {
		jd := &recs[i]
		o, ok := s.checks.take(jd)
		s.n++
		s.tally.add(s.n, jd.Turn.TurnID, o, ok)
		if s.stop {
			continue
		}
		if s.im != nil {
			if err := s.im.AddTurn(&jd.Turn); err != nil {
				return err
			}
		}
		if err := s.w.Add(jd.Record, &jd.Turn, store.WithSummary(jd.Summary.Source, jd.Summary.RejectedBy)); err != nil {
			return fmt.Errorf("record %s: %w", jd.Turn.TurnID, err)
		}
		if s.queues != nil {
			reply, ok := jd.Record.JudgedReply()
			s.queues.Add(&jd.Record, reply, ok)
		}
		s.stored++
	}
	if s.also != nil && !s.stop {
		return s.also.Records(nil, recs)
	}
	return nil
}

func (s *runSink) Rejects(rs []persona.Reject) error {
	for _, r := range rs {
		if s.reject != nil {
			s.reject(r)
		}
		if err := s.w.Reject(r); err != nil {
			return err
		}
	}
	return nil
}

func (*runSink) Tally(persona.Tally) error { return nil }

func (s *runSink) Counted(n int) {
	if c, ok := s.also.(batch.Counter); ok {
		c.Counted(n)
	}
}

// datasetTables returns a stored dataset's three tables as sources.
func datasetTables(ctx context.Context, db *store.DB, datasetID int64) (turns, cards, lexicon *store.Source, err error) {
	if turns, err = db.DatasetTable(ctx, datasetID, store.TableTurns); err != nil {
		return
	}
	if cards, err = db.DatasetTable(ctx, datasetID, store.TableCards); err != nil {
		return
	}
	lexicon, err = db.DatasetTable(ctx, datasetID, store.TableLexicon)
	return
}

// JudgeDataset judges a stored dataset with o.Profile into a new run and
// returns it. rejects (an import's) are stored on the run and counted in its
// tally. The judge reads the dataset straight from the store (store.Source),
// twice, as it reads a file: nothing is copied. The ten checks are run on
// each record as it is judged (checks.go) and stored with the run's summary
// (Summarize's figures). Options.Name, Strict and Reject are not read.
func JudgeDataset(ctx context.Context, db *store.DB, datasetID int64, o Options, rejects []persona.Reject) (store.RunInfo, error) {
	p := o.Profile
	if p == nil {
		p = speech.Seed()
	}
	_, cards, lexicon, err := datasetTables(ctx, db, datasetID)
	if err != nil {
		return store.RunInfo{}, err
	}
	j, trej, err := batch.NewJudge(cards, lexicon, p)
	if err != nil {
		return store.RunInfo{}, err
	}
	fps := map[string]string{}
	for table, s := range map[string]*store.Source{store.TableCards: cards, store.TableLexicon: lexicon} {
		if sum, ok := s.Fingerprint(); ok {
			fps[table] = sum
		}
	}
	w, err := db.BeginRun(ctx, store.RunMeta{DatasetID: datasetID, Profile: p.Name, Endings: Endings(p), Fingerprints: fps, PromptVersion: o.PromptVersion})
	if err != nil {
		return store.RunInfo{}, err
	}
	defer w.Rollback()
	turns, err := w.Turns() // read inside the run's transaction (store.RunWriter.Turns)
	if err != nil {
		return store.RunInfo{}, err
	}
	all := append(append([]persona.Reject(nil), rejects...), trej...)
	for _, r := range all {
		if err := w.Reject(r); err != nil {
			return store.RunInfo{}, err
		}
	}
	sink := &runSink{w: w, checks: newChecker(j, o.Summarizer), tally: newCheckTally(), also: o.Also,
		queues: review.NewBuilder(w.ID(), p)}
	run := batch.Run{Judge: j, Turns: turns, Workers: o.Workers, TempDir: o.TempDir,
		Summarizer: sink.checks, SummarizeConcurrency: o.SummarizeConcurrency}
	tally, err := run.Do(ctx, sink)
	if err != nil {
		return store.RunInfo{}, err
	}
	if sum, ok := turns.Fingerprint(); ok {
		w.SetFingerprint(store.TableTurns, sum)
	}
	tally.Rejected += len(all)
	info, err := w.Commit(tally)
	if err != nil {
		return info, err
	}
	if _, err := summarize(ctx, db, info, &sink.tally.sc); err != nil {
		return info, errSummary(info.ID, err)
	}
	if err := sink.keepQueues(ctx, db, info.ID); err != nil {
		return info, err
	}
	return info, nil
}

// keepQueues stores the review queues the sink built while the run was
// stored (StoreQueues; the builder is keyed by the run's id, known from
// BeginRun), so the first review view reads them instead of the run.
func (s *runSink) keepQueues(ctx context.Context, db *store.DB, runID int64) error {
	if s.queues == nil {
		return nil
	}
	q := s.queues.Result()
	if err := StoreQueues(ctx, db, runID, s.stored, q); err != nil {
		return fmt.Errorf("run %d: review queues: %w", runID, err)
	}
	return nil
}

// Result is what Run did: the import and the run judged from it.
type Result struct {
	Imported
	Run store.RunInfo
}

// Run imports the tables and judges them into a run in one pass (issue 13:
// judge once): one batch.Run over the input files, with the judge built
// from the cards and lexicon as they are stored, whose sink stores each
// accepted turn in the dataset (store.Importer) and its record in the run
// (Importer.BeginRun), with the rejects policy of Import and evident judge.
// The dataset and the run commit in one transaction
// (store.Importer.CommitWithRun); the run's fingerprints are those of the
// stored tables (store.Importer.TurnsFingerprint and the stored card and
// lexicon Sources). The result is the same dataset and the same run as
// Import followed by JudgeDataset (tested): the run is the judgement of
// what the store holds. Errors before that commit leave nothing stored;
// after it (the summary), Result names the stored dataset and run.
func Run(ctx context.Context, db *store.DB, t Tables, o Options) (Result, error) {
	p := o.Profile
	if p == nil {
		p = speech.Seed()
	}
	var out Result
	reject := out.rejecter(o)
	st, err := startImport(ctx, db, t, o, p, reject)
	if err != nil {
		return Result{}, err
	}
	im, j := st.im, st.j
	defer im.Rollback()
	w, err := im.BeginRun(store.RunMeta{Profile: p.Name, Endings: Endings(p), PromptVersion: o.PromptVersion})
	if err != nil {
		return Result{}, err
	}
	defer w.Rollback() // before the import's: a run goes before its dataset
	for _, r := range out.Rejects {
		if err := w.Reject(r); err != nil {
			return Result{}, err
		}
	}
	sink := &runSink{w: w, im: im, checks: newChecker(j, o.Summarizer), tally: newCheckTally(), also: o.Also,
		queues: review.NewBuilder(w.ID(), p)}
	// A strict import with a reject rolls back: its rows are still judged,
	// to list every reject, but no longer stored.
	sink.stop = o.Strict && len(out.Rejects) > 0
	sink.reject = func(r persona.Reject) {
		reject(r)
		sink.stop = sink.stop || o.Strict
	}
	run := batch.Run{Judge: j, Turns: t.Turns, Workers: o.Workers, TempDir: o.TempDir,
		Summarizer: sink.checks, SummarizeConcurrency: o.SummarizeConcurrency}
	tally, err := run.Do(ctx, sink)
	if err != nil {
		return Result{}, err
	}
	if err := out.accepted(o, tally); err != nil {
		return Result{}, err
	}
	tally.Rejected += st.tableRejects
	id, info, err := im.CommitWithRun(w, tally)
	if err != nil {
		return Result{}, err
	}
	out.DatasetID, out.Turns, out.Cards, out.Lexicon = id, tally.Judged, st.cards, st.lexicon
	out.Run = info
	if _, err := summarize(ctx, db, info, &sink.tally.sc); err != nil {
		return out, fmt.Errorf("dataset %d: %w", id, errSummary(info.ID, err))
	}
	if err := sink.keepQueues(ctx, db, info.ID); err != nil {
		return out, fmt.Errorf("dataset %d: %w", id, err)
	}
	return out, nil
}

// storedFingerprint is the fingerprint of a stored dataset's (small) table,
// read to its end; ok is false when the source has none.
func storedFingerprint(ctx context.Context, db *store.DB, datasetID int64, table string) (sum string, ok bool, err error) {
	src, err := db.DatasetTable(ctx, datasetID, table)
	if err != nil {
		return "", false, err
	}
	if err := src.ReadThrough(); err != nil {
		return "", false, err
	}
	sum, ok = src.Fingerprint()
	return sum, ok, nil
}

// JudgeToStore is evident judge --db: it imports the three tables (rejected
// rows left out and kept on the run) and judges them into a new run with
// profile (nil: seed), returning the run's id and tally.
func JudgeToStore(ctx context.Context, db *store.DB, turns, cards, lexicon ingest.Source, profile *speech.Profile) (int64, persona.Tally, error) {
	return JudgeToStoreWith(ctx, db, Tables{Turns: turns, Cards: cards, Lexicon: lexicon}, Options{Profile: profile})
}

// JudgeToStoreWith is JudgeToStore with all Options (a summarizer through
// Options.Configure and Options.PromptVersion).
func JudgeToStoreWith(ctx context.Context, db *store.DB, t Tables, o Options) (int64, persona.Tally, error) {
	res, err := Run(ctx, db, t, o)
	if err != nil {
		return 0, persona.Tally{}, err
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
	_, cards, lexicon, err := datasetTables(ctx, db, run.DatasetID)
	if err != nil {
		return nil, err
	}
	j, _, err := batch.NewJudge(cards, lexicon, p)
	if err != nil {
		return nil, err
	}
	turns, err := db.DatasetTable(ctx, run.DatasetID, store.TableTurns)
	if err != nil {
		return nil, err
	}
	verdicts, err := db.RunRecords(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	return batch.Check(ctx, verdicts, turns, j)
}
