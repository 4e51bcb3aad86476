package crystal

import (
	"context"
	"errors"
	"fmt"
	"sort"

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
	// StepsDropped: paper profile, the item has no reference steps and is
	// left out of the step means (QuirkEmptyReferenceDropped); it still
	// counts for Accuracy and AvgSteps.
	StepsDropped bool `json:"steps_dropped,omitempty"`
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
	// AvgSteps is the mean number of predicted steps over all items.
	AvgSteps float64     `json:"avg_steps"`
	PerItem  []ItemScore `json:"per_item"`
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
	var sF1, sP, sR, sLIS, sOrd, sCPR float64
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
		steps += s.Steps
		if s.StepsDropped {
			continue
		}
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
		rep.AvgSteps = float64(steps) / n
	}
	if n := float64(rep.StepItems); n > 0 {
		rep.MatchF1, rep.Precision, rep.Recall = sF1/n, sP/n, sR/n
		rep.LIS, rep.OrderedF1, rep.CPR = sLIS/n, sOrd/n, sCPR/n
	}
	return rep, nil
}

func scoreItem(ctx context.Context, it Item, preds map[string]Reply, p Profile, sim embedder.Similarity,
	mc MatchConfig, order OrderMethod, alpha float64, w RewardWeights) (ItemScore, error) {
	s := ItemScore{ID: it.ID}
	dropped := p == ProfilePaper && len(it.ReferenceSteps) == 0
	r, ok := preds[it.ID]
	if !ok {
		s.Missing = true
		s.StepsDropped = dropped
		s.Verdict = Verdict{Profile: p, Rule: RuleMissing, Detail: "no prediction"}
		s.Match = Match{Profile: p, Threshold: mc.Threshold, Inclusive: p == ProfileSeed,
			NRef: len(it.ReferenceSteps), Pairs: []Pair{}, UnmatchedPred: []int{},
			UnmatchedRef: seq(len(it.ReferenceSteps)), EdgeCase: "missing prediction"}
		s.Order = Order{Method: order, Alpha: alpha}
		return s, nil
	}
	s.Unparseable, s.Repaired, s.Steps = r.Unparseable, r.Repaired, len(r.Steps)
	v, err := Judge(AnswerCase{Prediction: r.Answer, Gold: it.Answer, Question: it.Question, Options: it.Options}, p)
	if err != nil {
		return s, err
	}
	s.Verdict = v
	m, err := MatchSteps(ctx, sim, r.Steps, it.ReferenceSteps, mc)
	switch {
	case dropped && errors.Is(err, ErrEmptyReference):
		s.StepsDropped = true
		s.Match = m
		s.Order = Order{Method: order, Alpha: alpha}
		return s, nil
	case err != nil:
		return s, fmt.Errorf("item %q: %w", it.ID, err)
	}
	s.Match = m
	if s.Order, err = OrderedF1(m, order, alpha); err != nil {
		return s, err
	}
	s.CPR = CPR(v.Correct, m.F1, w)
	return s, nil
}
