package report

import (
	"fmt"
	"strings"

	"evident/crystal"
)

// The settings of a Table in words, shared by WriteText and the screen
// (evident/web) so that both describe a table the same way.

// MatchRule is the acceptance rule of a match in words: "similarity ≥ 0.30"
// (seed, inclusive) or "similarity > 0.35" (paper) — crystal.Match.Accepts.
func MatchRule(inclusive bool, threshold float64) string {
	cmp := ">"
	if inclusive {
		cmp = "≥"
	}
	return fmt.Sprintf("similarity %s %.2f", cmp, threshold)
}

// OrderLabel names an order score: "LIS" or "Kendall (τ+1)/2".
func OrderLabel(m crystal.OrderMethod) string {
	if m == crystal.OrderKendall {
		return "Kendall (τ+1)/2"
	}
	return "LIS"
}

// SimilarityLabel is the table's similarity with its kind: "lexical (word
// overlap, no model)" or "<name> (embedding cosine)".
func (t Table) SimilarityLabel() string {
	kind := "embedding cosine"
	if t.Lexical {
		kind = "word overlap, no model"
	}
	return fmt.Sprintf("%s (%s)", t.Similarity, kind)
}

// OrdF1Formula is the Ord.F1 formula with the table's α:
// "Ord.F1 = F1 × (0.50 + 0.50 × LIS)" (spec crystal.md "Ordered Match F1").
func (t Table) OrdF1Formula() string {
	return fmt.Sprintf("Ord.F1 = F1 × (%.2f + %.2f × %s)", 1-t.Alpha, t.Alpha, OrderLabel(t.Order))
}

// CPRFormula is the CPR formula with the table's weights:
// "CPR = 0.70 + 0.30 × F1 if correct, 0.30 × 0.30 × F1 if wrong" (spec
// crystal.md "Causal Process Reward").
func (t Table) CPRFormula() string {
	w := t.Weights
	return fmt.Sprintf("CPR = %.2f + %.2f × F1 if correct, %.2f × %.2f × F1 if wrong", w.Answer, w.Step, w.Step, w.Lambda)
}

// LexicalNote is the warning every rendering of a lexical table carries.
const LexicalNote = "lexical is the reference package's word-overlap step similarity, not the paper's " +
	"all-distilroberta-v1 embedding: these step scores are not comparable with the paper's table"

// Notes are the table's caveats, in order: LexicalNote for a lexical table,
// then per model (in table order) one line "<model>: …" joining, with "; ",
// its items without a prediction, its unparseable replies, its items left out
// of the step means and the prediction ids not in the references. A model
// with none of these has no line.
func (t Table) Notes() []string {
	var notes []string
	if t.Lexical {
		notes = append(notes, LexicalNote)
	}
	for _, r := range t.Rows {
		p := r.Report
		var parts []string
		if p.Missing > 0 {
			parts = append(parts, fmt.Sprintf("%d %s without a prediction (scored 0, wrong)", p.Missing, plural(p.Missing, "item", "items")))
		}
		if p.Unparseable > 0 {
			parts = append(parts, fmt.Sprintf("%d unparseable %s (no steps, answer %q)", p.Unparseable, plural(p.Unparseable, "reply", "replies"), crystal.InsufficientInformation))
		}
		if n := p.Items - p.StepItems; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s without reference steps skipped (left out of the step means and average steps)", n, plural(n, "item", "items")))
		}
		if p.TruncatedSteps > 0 {
			parts = append(parts, fmt.Sprintf("%d %s in %d %s cut to the model's token limit (per-item evidence: truncated)",
				p.TruncatedSteps, plural(p.TruncatedSteps, "step", "steps"), p.TruncatedItems, plural(p.TruncatedItems, "item", "items")))
		}
		if len(p.Unknown) > 0 {
			ids := make([]string, len(p.Unknown))
			for k, id := range p.Unknown {
				ids[k] = quote(id)
			}
			parts = append(parts, fmt.Sprintf("%d %s not in the references ignored (%s)", len(p.Unknown), plural(len(p.Unknown), "id", "ids"), strings.Join(ids, ", ")))
		}
		if len(parts) > 0 {
			notes = append(notes, r.Model+": "+strings.Join(parts, "; "))
		}
	}
	if len(t.Rows) > 0 {
		var train []string
		for _, r := range t.Rows {
			train = append(train, fmt.Sprintf("%s %.3f", r.Model, r.Report.TrainReward))
		}
		notes = append(notes, TrainNote+": "+strings.Join(train, ", "))
	}
	return notes
}

// TrainNote introduces the notes' line of training rewards: the reference
// package's own reward beside CPR (crystal.TrainReward).
const TrainNote = "training reward of crystal-metrics beside CPR (its own answer check, word-overlap step F1 > 0.30; 0.6 + 0.4 × F1 if correct, 0.4 × 0.3 × F1 if wrong; mean over all items)"
