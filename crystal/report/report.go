// Package report reads CRYSTAL references and model predictions from files,
// scores each model with evident/crystal, and renders the results: the paper's
// table (Acc, Match F1, P, R, LIS, Ord.F1, average steps, plus CPR) as text or
// JSON, and per-item evidence as JSON Lines (spec crystal.md "Data", "Match
// F1", "Answer correctness").
//
// It owns I/O and presentation only: every score comes from crystal.Evaluate,
// every similarity from the embedder.Similarity the caller passes in
// crystal.Config. Every rendering names the profile and the similarity used;
// when it is the model-free lexical word overlap the text table says so and
// that its numbers are not comparable with the paper's embedding scores.
//
// Decisions:
//   - A references file may be keyed by id (the dataset's layout), a JSON
//     array or JSON Lines; a predictions file is JSON Lines (or an array) of
//     either raw replies ({id, model, reply}, read by crystal.ParseReply) or
//     parsed fields ({id, model, reasoning_steps, answer}, read with the same
//     coercions). A prediction without a model is named after its file.
//   - Models are reported in the order they first appear in the predictions.
//   - A prediction set in which no id is in the references is refused
//     (ErrNoKnownID; ReadRuns, for the CLI and the screen alike): every item
//     would score as missing, which is almost surely the wrong references.
//   - Predictions for ids that are not in the references are ignored and
//     counted in the table's notes; items without a prediction score 0 and
//     count as wrong (crystal.Evaluate).
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"evident/crystal"
)

// Row is one model's line of the table: its name and crystal's report.
type Row struct {
	Model  string
	Report crystal.Report
}

// Table is the scored comparison of several models on one item set, with the
// settings every row shares.
type Table struct {
	Items      int
	Profile    crystal.Profile
	Similarity string
	// Lexical: Similarity is the model-free word overlap ("lexical").
	Lexical   bool
	Threshold float64
	// Inclusive: a pair exactly at Threshold matches (seed ≥, paper >).
	Inclusive bool
	Order     crystal.OrderMethod
	Alpha     float64
	Weights   crystal.RewardWeights
	Rows      []Row
}

// Score evaluates every run against items with cfg (crystal.EvaluateAll:
// each row equals crystal.Evaluate of that model) and returns the table.
// Errors are Evaluate's, wrapped with the model name.
func Score(ctx context.Context, items []crystal.Item, runs []Run, cfg crystal.Config) (Table, error) {
	// One crystal.EvaluateAll for every model: items in parallel, each
	// item's reference side prepared once for all models.
	preds := make([]map[string]crystal.Reply, len(runs))
	for k := range runs {
		preds[k] = runs[k].Replies
	}
	reps, err := crystal.EvaluateAll(ctx, items, preds, cfg)
	if err != nil && len(runs) > 0 {
		var me *crystal.ModelError
		if errors.As(err, &me) {
			return Table{}, fmt.Errorf("model %s: %w", runs[me.Model].Model, me.Err)
		}
		return Table{}, fmt.Errorf("model %s: %w", runs[0].Model, err)
	}
	var t Table
	for k, run := range runs {
		rep := reps[k]
		if k == 0 {
			t = Table{Items: rep.Items, Profile: rep.Profile, Similarity: rep.Similarity,
				Lexical: rep.Similarity == "lexical", Threshold: rep.Threshold,
				Inclusive: rep.Profile == crystal.ProfileSeed, Order: rep.Order, Alpha: rep.Alpha, Weights: rep.Weights}
		}
		t.Rows = append(t.Rows, Row{Model: run.Model, Report: rep})
	}
	if len(runs) == 0 {
		// Still describe the settings: evaluate nothing to resolve defaults.
		rep, err := crystal.Evaluate(ctx, nil, nil, cfg)
		if err != nil {
			return Table{}, err
		}
		t = Table{Items: len(items), Profile: rep.Profile, Similarity: rep.Similarity, Lexical: rep.Similarity == "lexical",
			Threshold: rep.Threshold, Inclusive: rep.Profile == crystal.ProfileSeed, Order: rep.Order, Alpha: rep.Alpha, Weights: rep.Weights}
	}
	return t, nil
}

// similarityLine describes the similarity for the table's header.
func (t Table) similarityLine() string {
	return fmt.Sprintf("similarity %s, match at %s", t.SimilarityLabel(), MatchRule(t.Inclusive, t.Threshold))
}

// WriteText renders the paper-style table: a header naming items, profile,
// similarity, order score and CPR weights; one row per model; then notes
// (missing and unparseable predictions, ignored ids, and for lexical that the
// scores are not the paper's).
func (t Table) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "CRYSTAL scores: %d items, profile %s, %s\n", t.Items, t.Profile, t.similarityLine())
	fmt.Fprintf(&b, "%s; %s\n\n", t.OrdF1Formula(), t.CPRFormula())

	head := []string{"Model", "Acc", "Match F1", "P", "R", "LIS", "Ord.F1", "Steps", "CPR"}
	if t.Order == crystal.OrderKendall {
		head[5] = "Kendall"
	}
	rows := [][]string{head}
	for _, r := range t.Rows {
		p := r.Report
		rows = append(rows, []string{r.Model, fmt.Sprintf("%.2f %%", 100*p.Accuracy),
			f3(p.MatchF1), f3(p.Precision), f3(p.Recall), f3(p.LIS), f3(p.OrderedF1),
			fmt.Sprintf("%.2f", p.AvgSteps), f3(p.CPR)})
	}
	widths := make([]int, len(head))
	for _, row := range rows {
		for c, cell := range row {
			widths[c] = max(widths[c], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		for c, cell := range row {
			pad := strings.Repeat(" ", widths[c]-len([]rune(cell)))
			switch {
			case c == 0:
				b.WriteString(cell + pad)
			default:
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteString("\n")
	}

	notes := t.Notes()
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Summary is the JSON form of a Table: the shared settings and one entry per
// model, without per-item evidence (see WriteItems).
type Summary struct {
	Items      int                   `json:"items"`
	Profile    crystal.Profile       `json:"profile"`
	Similarity string                `json:"similarity"`
	Lexical    bool                  `json:"lexical"`
	Threshold  float64               `json:"threshold"`
	Inclusive  bool                  `json:"inclusive"`
	Order      crystal.OrderMethod   `json:"order"`
	Alpha      float64               `json:"alpha"`
	Weights    crystal.RewardWeights `json:"weights"`
	Models     []ModelSummary        `json:"models"`
}

// ModelSummary is one model's row in Summary (fractions in [0, 1]; LIS is
// the mean order score, LIS ratio or (τ+1)/2).
type ModelSummary struct {
	Model       string   `json:"model"`
	Accuracy    float64  `json:"accuracy"`
	MatchF1     float64  `json:"match_f1"`
	Precision   float64  `json:"precision"`
	Recall      float64  `json:"recall"`
	LIS         float64  `json:"lis"`
	OrderedF1   float64  `json:"ordered_f1"`
	AvgSteps    float64  `json:"avg_steps"`
	CPR         float64  `json:"cpr"`
	Missing     int      `json:"missing"`
	Unparseable int      `json:"unparseable"`
	StepItems   int      `json:"step_items"`
	Unknown     []string `json:"unknown_ids,omitempty"`
	// TrainReward: crystal.Report.TrainReward (the package's reward);
	// Skipped: items left out of the step means; TruncatedSteps and
	// TruncatedItems: steps cut to the model's token limit, and in how
	// many items.
	TrainReward    float64 `json:"train_reward"`
	Skipped        int     `json:"skipped"`
	TruncatedSteps int     `json:"truncated_steps"`
	TruncatedItems int     `json:"truncated_items"`
}

// Summary returns the JSON form of t.
func (t Table) Summary() Summary {
	s := Summary{Items: t.Items, Profile: t.Profile, Similarity: t.Similarity, Lexical: t.Lexical,
		Threshold: t.Threshold, Inclusive: t.Inclusive, Order: t.Order, Alpha: t.Alpha, Weights: t.Weights,
		Models: []ModelSummary{}}
	for _, r := range t.Rows {
		p := r.Report
		s.Models = append(s.Models, ModelSummary{Model: r.Model, Accuracy: p.Accuracy, MatchF1: p.MatchF1,
			Precision: p.Precision, Recall: p.Recall, LIS: p.LIS, OrderedF1: p.OrderedF1, AvgSteps: p.AvgSteps,
			CPR: p.CPR, Missing: p.Missing, Unparseable: p.Unparseable, StepItems: p.StepItems, Unknown: p.Unknown,
			TrainReward: p.TrainReward, Skipped: p.Skipped, TruncatedSteps: p.TruncatedSteps, TruncatedItems: p.TruncatedItems})
	}
	return s
}

// WriteJSON writes t.Summary() as indented JSON.
func (t Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(t.Summary())
}

// Evidence is the per-item record of WriteItems: how one model's reply to one
// item was judged and matched, with the step texts.
type Evidence struct {
	Model string `json:"model"`
	ID    string `json:"id"`
	// Missing: no prediction; Unparseable/Repaired/Notes: how the reply was
	// read (crystal.ParseReply).
	Missing     bool     `json:"missing,omitempty"`
	Unparseable bool     `json:"unparseable,omitempty"`
	Repaired    bool     `json:"repaired,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// Answer, Gold and the judge's verdict: the rule that decided (and, in
	// the paper profile, the reference-package quirk), with its detail.
	Answer  string        `json:"answer"`
	Gold    string        `json:"gold"`
	Correct bool          `json:"correct"`
	Rule    crystal.Rule  `json:"rule"`
	Quirk   crystal.Quirk `json:"quirk,omitempty"`
	Detail  string        `json:"detail"`
	// Step scores and the empty-list rule that decided, if any.
	Similarity   string  `json:"similarity"`
	Threshold    float64 `json:"threshold"`
	Steps        int     `json:"steps"`
	RefSteps     int     `json:"ref_steps"`
	Precision    float64 `json:"precision"`
	Recall       float64 `json:"recall"`
	F1           float64 `json:"f1"`
	OrderScore   float64 `json:"order_score"`
	OrderedF1    float64 `json:"ordered_f1"`
	CPR          float64 `json:"cpr"`
	EdgeCase     string  `json:"edge_case,omitempty"`
	StepsDropped bool    `json:"steps_dropped,omitempty"`
	// Skipped: paper profile, no reference steps; the step scores above are
	// then null, not zeros (MarshalJSON), and the item is out of the means.
	Skipped bool `json:"skipped,omitempty"`
	// Train: the package's training reward (crystal.TrainScore).
	Train crystal.TrainScore `json:"train"`
	// Truncated: the steps cut to the model's token limit (side, step,
	// tokens kept of total).
	Truncated []crystal.StepTruncation `json:"truncated,omitempty"`
	// Pairs in acceptance order; the steps left unmatched on each side.
	Pairs         []EvidencePair `json:"pairs"`
	UnmatchedPred []EvidenceStep `json:"unmatched_pred"`
	UnmatchedRef  []EvidenceStep `json:"unmatched_ref"`
}

// MarshalJSON writes e, with precision, recall, f1, order_score,
// ordered_f1 and cpr as null when e.Skipped (issue 16: a skipped item shows
// a flag, not zeros).
func (e Evidence) MarshalJSON() ([]byte, error) {
	type plain Evidence
	var v any = plain(e)
	if e.Skipped {
		v = struct {
			plain
			Precision  *float64 `json:"precision"`
			Recall     *float64 `json:"recall"`
			F1         *float64 `json:"f1"`
			OrderScore *float64 `json:"order_score"`
			OrderedF1  *float64 `json:"ordered_f1"`
			CPR        *float64 `json:"cpr"`
		}{plain: plain(e)}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as WriteItems: step texts stay readable
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// EvidencePair is one matched (predicted, reference) step pair.
type EvidencePair struct {
	Pred       int     `json:"pred"`
	Ref        int     `json:"ref"`
	Similarity float64 `json:"similarity"`
	PredText   string  `json:"pred_text"`
	RefText    string  `json:"ref_text"`
}

// EvidenceStep is one unmatched step: its 0-based index and text.
type EvidenceStep struct {
	Index int    `json:"index"`
	Text  string `json:"text"`
}

// Evidence returns the per-item records of every row, models in table order,
// items in input order. items and runs must be the ones t was scored from.
func (t Table) Evidence(items []crystal.Item, runs []Run) []Evidence {
	byID := make(map[string]crystal.Item, len(items))
	for _, it := range items {
		byID[it.ID] = it
	}
	replies := make(map[string]map[string]crystal.Reply, len(runs))
	for _, r := range runs {
		replies[r.Model] = r.Replies
	}
	var out []Evidence
	for _, row := range t.Rows {
		for _, s := range row.Report.PerItem {
			it := byID[s.ID]
			rep := replies[row.Model][s.ID]
			e := Evidence{Model: row.Model, ID: s.ID, Missing: s.Missing, Unparseable: s.Unparseable,
				Repaired: s.Repaired, Notes: rep.Notes, Answer: rep.Answer, Gold: it.Answer,
				Correct: s.Verdict.Correct, Rule: s.Verdict.Rule, Quirk: s.Verdict.Quirk, Detail: s.Verdict.Detail,
				Similarity: row.Report.Similarity, Threshold: s.Match.Threshold, Steps: s.Steps,
				RefSteps: len(it.ReferenceSteps), Precision: s.Match.Precision, Recall: s.Match.Recall,
				F1: s.Match.F1, OrderScore: s.Order.Score, OrderedF1: s.Order.OrderedF1, CPR: s.CPR,
				EdgeCase: s.Match.EdgeCase, StepsDropped: s.StepsDropped, Skipped: s.Skipped, Train: s.Train,
				Truncated: s.Truncated,
				Pairs:     []EvidencePair{}, UnmatchedPred: []EvidenceStep{}, UnmatchedRef: []EvidenceStep{}}
			for _, p := range s.Match.Pairs {
				e.Pairs = append(e.Pairs, EvidencePair{Pred: p.Pred, Ref: p.Ref, Similarity: p.Similarity,
					PredText: at(rep.Steps, p.Pred), RefText: at(it.ReferenceSteps, p.Ref)})
			}
			for _, i := range s.Match.UnmatchedPred {
				e.UnmatchedPred = append(e.UnmatchedPred, EvidenceStep{Index: i, Text: at(rep.Steps, i)})
			}
			for _, j := range s.Match.UnmatchedRef {
				e.UnmatchedRef = append(e.UnmatchedRef, EvidenceStep{Index: j, Text: at(it.ReferenceSteps, j)})
			}
			out = append(out, e)
		}
	}
	return out
}

func at(s []string, i int) string {
	if i < 0 || i >= len(s) {
		return ""
	}
	return s[i]
}

// WriteItems writes t.Evidence(items, runs) as JSON Lines, one record per
// model and item.
func (t Table) WriteItems(w io.Writer, items []crystal.Item, runs []Run) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range t.Evidence(items, runs) {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}
