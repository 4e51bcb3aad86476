package crystal

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"evident/crystal/embedder"
)

// Item is one benchmark item (spec crystal.md "Data"). JSON field names follow
// the dataset; Options may instead be laid out as "A) …" lines in Question.
type Item struct {
	ID             string   `json:"id"`
	Image          string   `json:"image,omitempty"`
	Question       string   `json:"question"`
	Options        []string `json:"options,omitempty"`
	Answer         string   `json:"answer"`
	ReferenceSteps []string `json:"reference_steps"`
}

// Config parameterises Evaluate. Zero values take the defaults named.
type Config struct {
	// Profile: "" means ProfileSeed.
	Profile Profile
	// Similarity compares steps. Required: there is no silent default, since
	// scores from different similarities are not comparable. Use
	// LexicalFor(Profile) for the model-free word overlap.
	Similarity embedder.Similarity
	// Threshold: 0 means the similarity's hint, else DefaultThreshold (see
	// MatchConfig).
	Threshold float64
	// Order: "" means OrderLIS.
	Order OrderMethod
	// Alpha in (0, 1]: 0 means DefaultAlpha (0.3). (α = 0 would make Ordered
	// F1 equal Match F1, which the report already has.)
	Alpha float64
	// Weights: the zero value means WeightsFor(Profile).
	Weights RewardWeights
}

// ItemScore is the per-item evidence of a Report.
type ItemScore struct {
	ID string `json:"id"`
	// Missing: no prediction for the item; every score is 0 and the answer
	// counts as wrong (spec crystal.md "Match F1": dataset level).
	Missing bool `json:"missing,omitempty"`
	// Unparseable and Repaired are copied from the Reply.
	Unparseable bool `json:"unparseable,omitempty"`
	Repaired    bool `json:"repaired,omitempty"`
	// Steps is the number of predicted steps (0 when missing).
	Steps   int     `json:"steps"`
	Verdict Verdict `json:"verdict"`
	Match   Match   `json:"match"`
	Order   Order   `json:"order"`
	CPR     float64 `json:"cpr"`
	// Train is the reference package's training reward (TrainReward),
	// reported beside CPR; zero for a missing prediction.
	Train TrainScore `json:"train"`
	// Skipped: paper profile, the item has no reference steps and is left
	// out of the step means and of AvgSteps (QuirkEmptyReferenceDropped, as
	// the package's evaluate_single refuses it); it still counts for
	// Accuracy. Its step scores are not scores but placeholders: read
	// Skipped, not the zeros.
	Skipped bool `json:"skipped,omitempty"`
	// StepsDropped is Skipped under its earlier name (kept for callers).
	StepsDropped bool `json:"steps_dropped,omitempty"`
	// Truncated lists the steps the similarity cut to its model's token
	// limit (embedder.Truncator), predicted steps first; nil when none.
	Truncated []StepTruncation `json:"truncated,omitempty"`
}

// StepTruncation is one step cut to the embedding model's token limit: the
// side ("pred" or "ref"), the 0-based step index, and how many tokens were
// kept of how many (special tokens included).
type StepTruncation struct {
	Side  string `json:"side"`
	Step  int    `json:"step"`
	Kept  int    `json:"kept"`
	Total int    `json:"total"`
}

// Report is a dataset-level result, one row of the paper's table (Acc, Match
// F1, P, R, LIS, Ord.F1, average steps) plus CPR and the evidence.
type Report struct {
	Profile    Profile       `json:"profile"`
	Similarity string        `json:"similarity"`
	Threshold  float64       `json:"threshold"`
	Order      OrderMethod   `json:"order"`
	Alpha      float64       `json:"alpha"`
	Weights    RewardWeights `json:"weights"`
	// Items is the number of items; Missing of those without a prediction;
	// Unparseable of those whose reply could not be read; StepItems of those
	// that enter the step means (all items, except dropped ones under paper).
	Items       int `json:"items"`
	Missing     int `json:"missing"`
	Unparseable int `json:"unparseable"`
	StepItems   int `json:"step_items"`
	// Unknown lists prediction IDs that match no item (ignored), sorted.
	Unknown []string `json:"unknown,omitempty"`
	// Accuracy is the fraction of items judged correct, over all items.
	Accuracy float64 `json:"accuracy"`
	// MatchF1, Precision, Recall, LIS (mean order score: LIS ratio, or
	// (τ+1)/2 under OrderKendall), OrderedF1 and CPR are macro means over
	// the StepItems items; 0 when there are none.
	MatchF1   float64 `json:"match_f1"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	LIS       float64 `json:"lis"`
	OrderedF1 float64 `json:"ordered_f1"`
	CPR       float64 `json:"cpr"`
	// AvgSteps is the mean number of predicted steps over the StepItems
	// items (all items under seed; paper leaves skipped items out, as the
	// package does). Missing and unparseable replies count 0 steps.
	AvgSteps float64 `json:"avg_steps"`
	// Skipped is the number of items left out of the step means (Items −
	// StepItems).
	Skipped int `json:"skipped"`
	// TrainReward is the mean of the package's training reward (ItemScore.Train)
	// over all items, missing ones counting 0; beside CPR.
	TrainReward float64 `json:"train_reward"`
	// TruncatedSteps counts the steps cut to the model's token limit, in
	// TruncatedItems items (0 for similarities that do not truncate).
	TruncatedSteps int         `json:"truncated_steps"`
	TruncatedItems int         `json:"truncated_items"`
	PerItem        []ItemScore `json:"per_item"`
}

// ErrItems reports an item list with an empty or duplicated ID.
var ErrItems = errors.New("crystal: bad item list")

// Evaluate scores predictions (keyed by item ID) against items and averages
// per item (macro means). An item without a prediction scores 0 everywhere and
// is wrong. Under ProfilePaper an item without reference steps is dropped
// from the step means (MatchF1 … CPR) but counts for Accuracy and AvgSteps;
// under ProfileSeed the empty-list rules of MatchMatrix apply instead.
// It is EvaluateAll with one model.
//
// Errors: ErrUnknownProfile, ErrBadParameter (nil similarity, threshold,
// α, order method), ErrItems, the similarity's error wrapped with the item
// ID, ctx's error. Bad replies are never errors (see ParseReply).
func Evaluate(ctx context.Context, items []Item, preds map[string]Reply, cfg Config) (Report, error) {
	reps, err := EvaluateAll(ctx, items, []map[string]Reply{preds}, cfg)
	if err != nil {
		var me *ModelError
		if errors.As(err, &me) {
			return Report{}, me.Err
		}
		return Report{}, err
	}
	return reps[0], nil
}

// ModelError is an EvaluateAll failure of one model's predictions: Model is
// the index into the predictions given, Err the error (the similarity's,
// wrapped with the item ID, or ctx's). Error and Unwrap are Err's.
type ModelError struct {
	Model int
	Err   error
}

func (e *ModelError) Error() string { return e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// evalChunk is how many consecutive items a worker of EvaluateAll takes at
// a time.
const evalChunk = 16

// EvaluateAll is Evaluate for several models' predictions against the same
// items, one Report per element of preds, in order; each report equals, bit
// for bit, what Evaluate gives for that model alone. The work is shared:
// items are scored in parallel (GOMAXPROCS workers, evalChunk consecutive
// items at a time), and each item's reference side is prepared once for
// every model when the similarity is an embedder.Preparer (Lexical
// tokenises the reference steps once, Cosine fetches their vectors and
// norms once), as is the reference side of the training reward's word
// overlap (issue 16 item 4).
//
// Errors: those of Evaluate. A failure of one model's scoring is a
// *ModelError naming the model; when several items fail, the one reported
// is that of the first failing item (in items order), for the first model
// that fails on it.
func EvaluateAll(ctx context.Context, items []Item, preds []map[string]Reply, cfg Config) ([]Report, error) {
	p, err := cfg.Profile.resolve()
	if err != nil {
		return nil, err
	}
	if cfg.Similarity == nil {
		return nil, fmt.Errorf("%w: Config.Similarity is nil", ErrBadParameter)
	}
	alpha := cfg.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	order, err := checkOrder(cfg.Order, alpha)
	if err != nil {
		return nil, err
	}
	w := cfg.Weights
	if w == (RewardWeights{}) {
		w = WeightsFor(p)
	}
	th, err := resolveThreshold(cfg.Threshold, cfg.Similarity)
	if err != nil {
		return nil, err
	}
	mc := MatchConfig{Profile: p, Threshold: th}

	seen := make(map[string]bool, len(items))
	for k, it := range items {
		if it.ID == "" {
			return nil, fmt.Errorf("%w: item %d has no id", ErrItems, k)
		}
		if seen[it.ID] {
			return nil, fmt.Errorf("%w: duplicate id %q", ErrItems, it.ID)
		}
		seen[it.ID] = true
	}
	if err := ctx.Err(); err != nil && len(items) > 0 {
		return nil, &ModelError{Model: 0, Err: err}
	}

	sc := scorer{p: p, sim: cfg.Similarity, mc: mc, order: order, alpha: alpha, w: w}
	scores := make([][]ItemScore, len(preds))
	for k := range scores {
		scores[k] = make([]ItemScore, len(items))
	}
	// failAt is the first failing item (len(items) while none has failed);
	// workers take no chunk past it, so every item before it is scored and
	// the error reported does not depend on scheduling.
	var mu sync.Mutex
	failAt, failErr := len(items), error(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), (len(items)+evalChunk-1)/evalChunk)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(evalChunk)) - evalChunk
				mu.Lock()
				stop := lo >= failAt
				mu.Unlock()
				if stop || lo >= len(items) {
					return
				}
				for i := lo; i < min(lo+evalChunk, len(items)); i++ {
					ref := newPreparedItem(sc.sim, items[i].ReferenceSteps)
					for k := range preds {
						err := ctx.Err()
						if err == nil {
							scores[k][i], err = sc.item(ctx, items[i], preds[k], ref)
						}
						if err != nil {
							mu.Lock()
							if i < failAt {
								failAt, failErr = i, &ModelError{Model: k, Err: err}
							}
							mu.Unlock()
							break
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if failErr != nil {
		return nil, failErr
	}

	reps := make([]Report, len(preds))
	for k := range preds {
		reps[k] = sc.report(items, seen, preds[k], scores[k])
	}
	return reps, nil
}

// scorer holds the resolved settings of one EvaluateAll.
type scorer struct {
	p     Profile
	sim   embedder.Similarity
	mc    MatchConfig
	order OrderMethod
	alpha float64
	w     RewardWeights
}

// report sums one model's item scores in items order (the macro means).
func (sc scorer) report(items []Item, seen map[string]bool, preds map[string]Reply, per []ItemScore) Report {
	rep := Report{Profile: sc.p, Similarity: sc.sim.Name(), Threshold: sc.mc.Threshold,
		Order: sc.order, Alpha: sc.alpha, Weights: sc.w, Items: len(items), PerItem: per}
	for id := range preds {
		if !seen[id] {
			rep.Unknown = append(rep.Unknown, id)
		}
	}
	sort.Strings(rep.Unknown)

	var correct, steps int
	var sF1, sP, sR, sLIS, sOrd, sCPR, sTrain float64
	for _, s := range per {
		if s.Missing {
			rep.Missing++
		}
		if s.Unparseable {
			rep.Unparseable++
		}
		if s.Verdict.Correct {
			correct++
		}
		sTrain += s.Train.Reward
		if len(s.Truncated) > 0 {
			rep.TruncatedItems++
			rep.TruncatedSteps += len(s.Truncated)
		}
		if s.Skipped {
			rep.Skipped++
			continue
		}
		steps += s.Steps
		rep.StepItems++
		sF1 += s.Match.F1
		sP += s.Match.Precision
		sR += s.Match.Recall
		sLIS += s.Order.Score
		sOrd += s.Order.OrderedF1
		sCPR += s.CPR
	}
	if n := float64(rep.Items); n > 0 {
		rep.Accuracy = float64(correct) / n
		rep.TrainReward = sTrain / n
	}
	if n := float64(rep.StepItems); n > 0 {
		rep.AvgSteps = float64(steps) / n
		rep.MatchF1, rep.Precision, rep.Recall = sF1/n, sP/n, sR/n
		rep.LIS, rep.OrderedF1, rep.CPR = sLIS/n, sOrd/n, sCPR/n
	}
	return rep
}

// preparedItem is one item's reference side, prepared at first use and then
// shared by every model's prediction (one worker scores all models of an
// item, so it needs no lock).
type preparedItem struct {
	sim embedder.Similarity
	ref []string

	done bool
	prep embedder.PreparedRef // nil when sim is not an embedder.Preparer
	err  error

	optsDone bool
	opts     []Option // the item's options (AnswerCase.options)

	cutsDone bool
	cuts     []StepTruncation // the reference steps' truncations
	cutsErr  error

	trainDone bool
	trainRefs []string // ref trimmed, empty steps dropped (TrainReward)
	train     embedder.PreparedRef
}

func newPreparedItem(sim embedder.Similarity, ref []string) *preparedItem {
	return &preparedItem{sim: sim, ref: ref}
}

// similarities is sim.Similarities(ctx, pred, ref), through the prepared
// reference side when sim can prepare one.
func (p *preparedItem) similarities(ctx context.Context, pred []string) ([][]float64, error) {
	if !p.done {
		p.done = true
		if pr, ok := p.sim.(embedder.Preparer); ok {
			p.prep, p.err = pr.Prepare(ctx, p.ref)
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	if p.prep != nil {
		return p.prep.Similarities(ctx, pred)
	}
	return p.sim.Similarities(ctx, pred, p.ref)
}

// truncations is truncations(ctx, tr, pred, p.ref) with the reference
// side's cuts asked for once per item (an ONNX embedder tokenises each
// reference step once, not once per model).
func (p *preparedItem) truncations(ctx context.Context, tr embedder.Truncator, pred []string) ([]StepTruncation, error) {
	out, err := truncations(ctx, tr, pred, nil)
	if err != nil {
		return nil, err
	}
	if !p.cutsDone {
		p.cutsDone = true
		p.cuts, p.cutsErr = truncations(ctx, tr, nil, p.ref)
	}
	if p.cutsErr != nil {
		return nil, p.cutsErr
	}
	return append(out, p.cuts...), nil
}

// trainReward is TrainReward(steps, answer, p.ref, gold) with the reference
// steps' tokens prepared once.
func (p *preparedItem) trainReward(steps []string, answer, gold string) TrainScore {
	if !p.trainDone {
		p.trainDone = true
		for _, r := range p.ref {
			if t := strings.TrimFunc(r, unicode.IsSpace); t != "" {
				p.trainRefs = append(p.trainRefs, t)
			}
		}
		p.train, _ = trainLexical.Prepare(context.Background(), p.trainRefs)
	}
	return trainScore(steps, answer, p.trainRefs, gold, p.train)
}

func (sc scorer) item(ctx context.Context, it Item, preds map[string]Reply, ref *preparedItem) (ItemScore, error) {
	p, mc, order, alpha := sc.p, sc.mc, sc.order, sc.alpha
	s := ItemScore{ID: it.ID}
	skipped := p == ProfilePaper && len(it.ReferenceSteps) == 0
	s.Skipped, s.StepsDropped = skipped, skipped
	r, ok := preds[it.ID]
	if !ok {
		s.Missing = true
		s.Verdict = Verdict{Profile: p, Rule: RuleMissing, Detail: "no prediction"}
		s.Match = Match{Profile: p, Threshold: mc.Threshold, Inclusive: p == ProfileSeed,
			NRef: len(it.ReferenceSteps), Pairs: []Pair{}, UnmatchedPred: []int{},
			UnmatchedRef: seq(len(it.ReferenceSteps)), EdgeCase: "missing prediction"}
		// No pairs: fewer than 2 matches, so the order score is 1 (spec
		// "Ordered Match F1"); Ordered F1 is 0 through F1 = 0.
		s.Order = Order{Method: order, Alpha: alpha, Score: 1}
		if order == OrderKendall {
			s.Order.Tau = 1
		}
		return s, nil
	}
	s.Unparseable, s.Repaired, s.Steps = r.Unparseable, r.Repaired, len(r.Steps)
	c := AnswerCase{Prediction: r.Answer, Gold: it.Answer, Question: it.Question, Options: it.Options}
	if !ref.optsDone {
		ref.optsDone, ref.opts = true, c.options()
	}
	v := judgeOptions(c, p, ref.opts) // Judge, with the item's options read once
	s.Verdict = v
	// MatchSteps, with the matrix from the prepared reference side.
	var m Match
	th, err := resolveThreshold(mc.Threshold, sc.sim)
	if err == nil {
		var mat [][]float64
		if len(r.Steps) > 0 && len(it.ReferenceSteps) > 0 {
			if mat, err = ref.similarities(ctx, r.Steps); err != nil {
				err = fmt.Errorf("crystal: similarity %s: %w", sc.sim.Name(), err)
			}
		}
		if err == nil {
			m, err = MatchMatrix(mat, len(r.Steps), len(it.ReferenceSteps), MatchConfig{Profile: mc.Profile, Threshold: th})
		}
	}
	if err != nil {
		return s, fmt.Errorf("item %q: %w", it.ID, err)
	}
	s.Match = m
	if lex, ok := sc.sim.(embedder.Lexical); ok && lex.EmptyStepsMatch && p == ProfilePaper && mc.Threshold == TrainThreshold && trimmed(it.ReferenceSteps) {
		// The match just made is the training reward's step F1 (same
		// similarity, threshold and comparison): reuse it.
		s.Train = TrainScore{Correct: PackageAnswerMatch(r.Answer, it.Answer), StepF1: m.F1}
		s.Train.Reward = CPR(s.Train.Correct, m.F1, TrainWeights)
	} else {
		s.Train = ref.trainReward(r.Steps, r.Answer, it.Answer)
	}
	if tr, ok := sc.sim.(embedder.Truncator); ok && len(r.Steps) > 0 && len(it.ReferenceSteps) > 0 {
		if s.Truncated, err = ref.truncations(ctx, tr, r.Steps); err != nil {
			return s, fmt.Errorf("item %q: %w", it.ID, err)
		}
	}
	if skipped {
		return s, nil
	}
	if s.Order, err = OrderedF1(m, order, alpha); err != nil {
		return s, err
	}
	s.CPR = CPR(v.Correct, m.F1, sc.w)
	return s, nil
}

// trimmed reports whether no reference step has surrounding space or is
// empty, so TrainReward's clean-up would leave them as they are.
func trimmed(ref []string) bool {
	for _, r := range ref {
		if r == "" || strings.TrimFunc(r, unicode.IsSpace) != r {
			return false
		}
	}
	return true
}

// truncations asks tr which of the item's steps it cut.
func truncations(ctx context.Context, tr embedder.Truncator, pred, ref []string) ([]StepTruncation, error) {
	var out []StepTruncation
	for _, side := range []struct {
		name  string
		steps []string
	}{{"pred", pred}, {"ref", ref}} {
		if len(side.steps) == 0 {
			continue
		}
		cuts, err := tr.Truncations(ctx, side.steps)
		if err != nil {
			return nil, fmt.Errorf("truncation: %w", err)
		}
		for _, c := range cuts {
			out = append(out, StepTruncation{Side: side.name, Step: c.Index, Kept: c.Kept, Total: c.Total})
		}
	}
	return out, nil
}
