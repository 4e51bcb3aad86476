package runstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/evalrun"
	"evident/store"
)

// MaxStoredFailures caps the failed checks a summary keeps (in file order);
// StoredChecks.Failures still counts them all.
const MaxStoredFailures = 100

// StoredChecks is the ten checks' report as a run's summary keeps it
// (store.RunSummary.Checks): the report with at most MaxStoredFailures
// failures, and the number of failures there were.
type StoredChecks struct {
	Report   batch.CheckReport `json:"report"`
	Failures int               `json:"failures"`
	// SchemaChecked is how many records were validated against the output
	// schema: all of them when the checks ran over the stored run (Check),
	// the first 10,000 and every 100th after when they ran as the run was
	// judged (checks.go). Absent (0) in summaries stored before it.
	SchemaChecked int `json:"schema_checked,omitempty"`
}

// Summarize computes what the screen shows for the whole committed run and
// stores it (store.PutRunSummary), refreshes the planner's statistics,
// then makes sure the run's search index is complete (store.IndexRunText:
// a no-op for an indexed run). Run and JudgeDataset store the same summary
// with the checks they ran as they judged, and leave the index to their
// caller (it is written after the run commits: see Run); Summarize is for a
// run without a summary (an older store: the screen calls it). The counts are SQL GROUP BYs; the ten checks run once
// here with Check, which holds the dataset's turns in memory as batch.Check
// does (ChecksErr says why not for a run without a dataset); the per-model
// report and the models-disagree lists are computed from each model's first
// answer per prompt as the store streams them (store.EachFirstAnswer),
// holding one prompt's answers, the model pairs and the disagreeing prompt
// ids — the same figures as evalrun.CompareModels and
// evalrun.FindDisagreements over all records.
func Summarize(ctx context.Context, db *store.DB, run store.RunInfo) (store.RunSummary, error) {
	rep, err := Check(ctx, db, run)
	switch {
	case ctx.Err() != nil:
		return store.RunSummary{}, ctx.Err()
	case err != nil:
		return summarizeIndexed(ctx, db, run, nil, err.Error())
	}
	sc := StoredChecks{Report: *rep, Failures: len(rep.Failures), SchemaChecked: rep.Records}
	if len(sc.Report.Failures) > MaxStoredFailures {
		sc.Report.Failures = sc.Report.Failures[:MaxStoredFailures]
	}
	return summarizeIndexed(ctx, db, run, &sc, "")
}

// summarize is Summarize with the checks already run (as the run was
// judged: checks.go), so nothing holds the run's turns.
func summarize(ctx context.Context, db *store.DB, run store.RunInfo, sc *StoredChecks) (store.RunSummary, error) {
	return summarizeChecks(ctx, db, run, sc, "")
}

// summarizeIndexed is summarizeChecks, then the run's search index made
// complete (store.IndexRunText; one another indexer is writing is left to
// it), as Summarize promises.
func summarizeIndexed(ctx context.Context, db *store.DB, run store.RunInfo, sc *StoredChecks, checksErr string) (store.RunSummary, error) {
	s, err := summarizeChecks(ctx, db, run, sc, checksErr)
	if err != nil {
		return s, err
	}
	if err := db.IndexRunText(ctx, run.ID); err != nil && !errors.Is(err, store.ErrIndexBusy) {
		return store.RunSummary{}, err
	}
	return s, nil
}

// summarizeChecks stores the run's summary with the checks sc, or with
// checksErr saying why there are none.
func summarizeChecks(ctx context.Context, db *store.DB, run store.RunInfo, sc *StoredChecks, checksErr string) (store.RunSummary, error) {
	// Three reads of the committed run, each over an index of its own (the
	// counts, the prompts, the prompts by character), run side by side:
	// at a million turns each is seconds of one core.
	var s store.RunSummary
	models := evalrun.ModelReport{Models: []evalrun.ModelRate{}, Pairs: []evalrun.ModelPair{}}
	var all disagreeScope
	scopes := map[string]*disagreeScope{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		s, err = db.CountRun(gctx, run.ID, true)
		return err
	})
	if run.DatasetID != 0 { // as the screen did: prompts come from the stored dataset
		g.Go(func() error {
			acc := newModelAcc()
			err := eachPrompt(gctx, db, run.ID, false, func(_ string, answers []store.FirstAnswer) {
				acc.add(answers)
				all.add(answers)
			})
			models = acc.report()
			return err
		})
		g.Go(func() error {
			return eachPrompt(gctx, db, run.ID, true, func(character string, answers []store.FirstAnswer) {
				sc := scopes[character]
				if sc == nil {
					sc = &disagreeScope{}
					scopes[character] = sc
				}
				sc.add(answers)
			})
		})
	}
	if err := g.Wait(); err != nil {
		return store.RunSummary{}, err
	}
	var err error
	s.ChecksErr = checksErr
	if sc != nil {
		if s.Checks, err = json.Marshal(sc); err != nil {
			return store.RunSummary{}, err
		}
	}
	lists := map[string][]string{}
	s.Disagree = map[string]store.DisagreeStat{}
	if run.DatasetID != 0 {
		s.Disagree[""], lists[""] = all.result()
		for c, sc := range scopes {
			s.Disagree[c], lists[c] = sc.result()
		}
	}
	if s.ModelReport, err = json.Marshal(models); err != nil {
		return store.RunSummary{}, err
	}
	if err := db.PutRunSummary(ctx, s, lists); err != nil {
		return store.RunSummary{}, err
	}
	if err := db.Analyze(ctx); err != nil {
		return store.RunSummary{}, err
	}
	return db.StoredSummary(ctx, run.ID)
}

// SummaryChecks decodes the checks of a stored summary; nil when the
// summary has none (then s.ChecksErr says why).
func SummaryChecks(s store.RunSummary) (*StoredChecks, error) {
	if len(s.Checks) == 0 {
		return nil, nil
	}
	var sc StoredChecks
	if err := json.Unmarshal(s.Checks, &sc); err != nil {
		return nil, fmt.Errorf("run %d: stored checks: %w", s.RunID, err)
	}
	return &sc, nil
}

// SummaryModels decodes the per-model report of a stored summary (an empty
// report when it has none).
func SummaryModels(s store.RunSummary) (evalrun.ModelReport, error) {
	rep := evalrun.ModelReport{Models: []evalrun.ModelRate{}, Pairs: []evalrun.ModelPair{}}
	if len(s.ModelReport) == 0 {
		return rep, nil
	}
	if err := json.Unmarshal(s.ModelReport, &rep); err != nil {
		return rep, fmt.Errorf("run %d: stored model report: %w", s.RunID, err)
	}
	return rep, nil
}

// eachPrompt groups the run's first answers (store.EachFirstAnswer) by
// prompt (and character when byCharacter) and calls fn with each group of
// at least two models, the answers sorted by seq.
func eachPrompt(ctx context.Context, db *store.DB, runID int64, byCharacter bool, fn func(character string, answers []store.FirstAnswer)) error {
	var cur []store.FirstAnswer
	flush := func() {
		if len(cur) >= 2 {
			sort.Slice(cur, func(i, j int) bool { return cur[i].Seq < cur[j].Seq })
			c := ""
			if byCharacter {
				c = cur[0].CharacterID
			}
			fn(c, cur)
		}
		cur = cur[:0]
	}
	err := db.EachFirstAnswer(ctx, runID, "", byCharacter, func(a store.FirstAnswer) error {
		if len(cur) > 0 && (cur[0].PromptID != a.PromptID || (byCharacter && cur[0].CharacterID != a.CharacterID)) {
			flush()
		}
		if a.Verdict.Valid() {
			cur = append(cur, a)
		}
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	return nil
}

// disagreeScope accumulates one scope's shared and disagreeing prompts.
type disagreeScope struct {
	shared int
	models map[string]bool
	found  []firstPrompt
}

type firstPrompt struct {
	seq    int
	prompt string
}

func (d *disagreeScope) add(answers []store.FirstAnswer) {
	d.shared++
	first := answers[0].Verdict
	if !slices.ContainsFunc(answers[1:], func(a store.FirstAnswer) bool { return a.Verdict != first }) {
		return
	}
	if d.models == nil {
		d.models = map[string]bool{}
	}
	for _, a := range answers {
		d.models[a.ModelID] = true
	}
	d.found = append(d.found, firstPrompt{answers[0].Seq, answers[0].PromptID})
}

func (d *disagreeScope) result() (store.DisagreeStat, []string) {
	sort.Slice(d.found, func(i, j int) bool { return d.found[i].seq < d.found[j].seq })
	st := store.DisagreeStat{Shared: d.shared, Prompts: len(d.found), Models: []string{}}
	for m := range d.models {
		st.Models = append(st.Models, m)
	}
	slices.Sort(st.Models)
	ids := make([]string, len(d.found))
	for i, f := range d.found {
		ids[i] = f.prompt
	}
	return st, ids
}

// modelAcc accumulates evalrun.CompareModels' figures prompt by prompt.
type modelAcc struct {
	prompts int
	rates   map[string]*evalrun.ModelRate
	pairs   map[[2]string]*evalrun.ModelPair
}

func newModelAcc() *modelAcc {
	return &modelAcc{rates: map[string]*evalrun.ModelRate{}, pairs: map[[2]string]*evalrun.ModelPair{}}
}

func (m *modelAcc) add(answers []store.FirstAnswer) {
	m.prompts++
	for _, a := range answers {
		r := m.rates[a.ModelID]
		if r == nil {
			r = &evalrun.ModelRate{Model: a.ModelID}
			m.rates[a.ModelID] = r
		}
		r.N++
		if a.Verdict != persona.Kept {
			r.Mismatches++
		}
	}
	for i, a := range answers {
		for _, b := range answers[i+1:] {
			x, y := a, b
			if y.ModelID < x.ModelID {
				x, y = y, x
			}
			key := [2]string{x.ModelID, y.ModelID}
			p := m.pairs[key]
			if p == nil {
				p = &evalrun.ModelPair{ModelA: x.ModelID, ModelB: y.ModelID}
				m.pairs[key] = p
			}
			offA, offB := x.Verdict != persona.Kept, y.Verdict != persona.Kept
			p.N++
			switch {
			case offA && offB:
				p.Both++
			case offA:
				p.B++
			case offB:
				p.C++
			default:
				p.Neither++
			}
		}
	}
}

func (m *modelAcc) report() evalrun.ModelReport {
	rep := evalrun.ModelReport{Prompts: m.prompts, Models: []evalrun.ModelRate{}, Pairs: []evalrun.ModelPair{}}
	var names []string
	for n := range m.rates {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		r := m.rates[n]
		r.Rate = float64(r.Mismatches) / float64(r.N)
		r.Interval, _ = evalrun.Wilson(r.Mismatches, r.N)
		rep.Models = append(rep.Models, *r)
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			p := m.pairs[[2]string{a, b}]
			if p == nil {
				p = &evalrun.ModelPair{ModelA: a, ModelB: b}
			}
			p.P = evalrun.McNemarExact(p.B, p.C)
			rep.Pairs = append(rep.Pairs, *p)
		}
	}
	return rep
}

// errSummary wraps a failure to summarise a run that was committed.
func errSummary(id int64, err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("run %d was stored but its summary was not (the screen counts it on view): %w", id, err)
}
