package crystal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
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
//
// Errors: ErrUnknownProfile, ErrBadParameter (nil similarity, threshold,
// α, order method), ErrItems, the similarity's error wrapped with the item
// ID, ctx's error. Bad replies are never errors (see ParseReply).
func Evaluate(ctx context.Context, items []Item, preds map[string]Reply, cfg Config) (Report, error) {
	p, err := cfg.Profile.resolve()
	if err != nil {
		return Report{}, err
	}
	if cfg.Similarity == nil {
		return Report{}, fmt.Errorf("%w: Config.Similarity is nil", ErrBadParameter)
	}
	alpha := cfg.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	order, err := checkOrder(cfg.Order, alpha)
	if err != nil {
		return Report{}, err
	}
	w := cfg.Weights
	if w == (RewardWeights{}) {
		w = WeightsFor(p)
	}
	th, err := resolveThreshold(cfg.Threshold, cfg.Similarity)
	if err != nil {
		return Report{}, err
	}
	mc := MatchConfig{Profile: p, Threshold: th}

	seen := make(map[string]bool, len(items))
	for k, it := range items {
		if it.ID == "" {
			return Report{}, fmt.Errorf("%w: item %d has no id", ErrItems, k)
		}
		if seen[it.ID] {
			return Report{}, fmt.Errorf("%w: duplicate id %q", ErrItems, it.ID)
		}
		seen[it.ID] = true
	}

	rep := Report{Profile: p, Similarity: cfg.Similarity.Name(), Threshold: mc.Threshold,
		Order: order, Alpha: alpha, Weights: w, Items: len(items), PerItem: make([]ItemScore, 0, len(items))}
	for id := range preds {
		if !seen[id] {
			rep.Unknown = append(rep.Unknown, id)
		}
	}
	sort.Strings(rep.Unknown)

	var correct, steps int
	var sF1, sP, sR, sLIS, sOrd, sCPR, sTrain float64
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		s, err := scoreItem(ctx, it, preds, p, cfg.Similarity, mc, order, alpha, w)
		if err != nil {
			return Report{}, err
		}
		rep.PerItem = append(rep.PerItem, s)
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
	return rep, nil
}

func scoreItem(ctx context.Context, it Item, preds map[string]Reply, p Profile, sim embedder.Similarity,
	mc MatchConfig, order OrderMethod, alpha float64, w RewardWeights) (ItemScore, error) {
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
	v, err := Judge(AnswerCase{Prediction: r.Answer, Gold: it.Answer, Question: it.Question, Options: it.Options}, p)
	if err != nil {
		return s, err
	}
	s.Verdict = v
	m, err := MatchSteps(ctx, sim, r.Steps, it.ReferenceSteps, mc)
	if err != nil {
		return s, fmt.Errorf("item %q: %w", it.ID, err)
	}
	s.Match = m
	if lex, ok := sim.(embedder.Lexical); ok && lex.EmptyStepsMatch && p == ProfilePaper && mc.Threshold == TrainThreshold && trimmed(it.ReferenceSteps) {
		// The match just made is the training reward's step F1 (same
		// similarity, threshold and comparison): reuse it.
		s.Train = TrainScore{Correct: PackageAnswerMatch(r.Answer, it.Answer), StepF1: m.F1}
		s.Train.Reward = CPR(s.Train.Correct, m.F1, TrainWeights)
	} else {
		s.Train = TrainReward(r.Steps, r.Answer, it.ReferenceSteps, it.Answer)
	}
	if tr, ok := sim.(embedder.Truncator); ok && len(r.Steps) > 0 && len(it.ReferenceSteps) > 0 {
		if s.Truncated, err = truncations(ctx, tr, r.Steps, it.ReferenceSteps); err != nil {
			return s, fmt.Errorf("item %q: %w", it.ID, err)
		}
	}
	if skipped {
		return s, nil
	}
	if s.Order, err = OrderedF1(m, order, alpha); err != nil {
		return s, err
	}
	s.CPR = CPR(v.Correct, m.F1, w)
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
