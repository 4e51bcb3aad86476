package evalrun

import (
	"slices"
	"strings"

	"evident/persona"
	"evident/persona/speech"
)

// Report is the agreement of the judge's records with a gold set (Evaluate).
// Fields that are undefined for the data (no gold turn found, a zero
// denominator) are null in JSON, never NaN.
type Report struct {
	// N is the number of gold turns that have a record with a valid verdict.
	N int `json:"n"`
	// Agreed is the number of those turns whose record has the gold verdict.
	Agreed int `json:"agreed"`
	// Agreement is Agreed/N; null when N = 0.
	Agreement *float64 `json:"agreement"`
	// Interval is the 95 % Wilson score interval of Agreement; null when N = 0.
	Interval *Interval `json:"interval"`
	// Kappa is Cohen's kappa of Confusion; null when undefined (N = 0, or
	// chance agreement 1).
	Kappa *float64 `json:"kappa"`
	// Labels are the rows and columns of Confusion: persona.Verdicts, in
	// priority order.
	Labels []persona.Verdict `json:"labels"`
	// Confusion[i][j] counts turns with gold verdict Labels[i] and predicted
	// verdict Labels[j].
	Confusion [][]int `json:"confusion"`
	// PerVerdict holds precision and recall for each of Labels, in order.
	PerVerdict []VerdictScore `json:"per_verdict"`
	// Missing lists, in gold order, gold turn_ids that no record carries.
	Missing []string `json:"missing"`
	// Invalid lists, in gold order, gold turn_ids left out of N because the
	// gold verdict or the record's verdict is not one of the five (or the
	// turn_id was labelled twice in the gold slice: later labels are ignored).
	Invalid []string `json:"invalid"`
	// Disagreements groups the turns whose record disagrees with the gold
	// label by reason (package doc, "Disagreement reasons").
	Disagreements []Group `json:"disagreements"`
}

// VerdictScore is precision and recall of one verdict. Precision is null when
// the judge never predicted the verdict (Predicted = 0), recall is null when
// the gold set never uses it (Gold = 0).
type VerdictScore struct {
	Verdict   persona.Verdict `json:"verdict"`
	Gold      int             `json:"gold"`      // row sum: gold turns with this verdict
	Predicted int             `json:"predicted"` // column sum: records with this verdict
	Correct   int             `json:"correct"`   // diagonal cell
	Precision *float64        `json:"precision"` // Correct/Predicted
	Recall    *float64        `json:"recall"`    // Correct/Gold
}

// Group is one reason for disagreement: the turns whose gold verdict is Gold,
// whose record's verdict is Predicted, and whose record shows the same rule
// detail. The detail fields that apply to Predicted are set, the others are
// omitted.
type Group struct {
	// Gold is the creator's verdict, Predicted the record's.
	Gold      persona.Verdict `json:"gold"`
	Predicted persona.Verdict `json:"predicted"`
	// Detail is the grouping key in words, e.g. "존댓말 ≠ 반말 · 나; endings
	// 「필요」"; "" when Predicted is 설정대로 말함.
	Detail string `json:"detail"`
	// RuleObserved, RuleExpected and Endings: for 말투 어긋남.
	RuleObserved *string  `json:"rule_observed,omitempty"`
	RuleExpected *string  `json:"rule_expected,omitempty"`
	Endings      []string `json:"endings,omitempty"`
	// TouchedTerm and TouchedTopic: for 금지 소재 접촉.
	TouchedTerm  *string `json:"touched_term,omitempty"`
	TouchedTopic *string `json:"touched_topic,omitempty"`
	// OffCanon: for 세계관 밖 고유명사.
	OffCanon []string `json:"off_canon_entities,omitempty"`
	// RecallTarget: for 앞 회차를 기억 못 함.
	RecallTarget *string `json:"recall_target,omitempty"`
	// Count is len(TurnIDs).
	Count int `json:"count"`
	// TurnIDs are the group's turns in gold order.
	TurnIDs []string `json:"turn_ids"`
}

// Evaluate compares records with gold labels. A gold turn is matched with the
// first record carrying its turn_id; records without a gold label are
// ignored. Gold turns without a record go to Missing, those whose gold or
// record verdict is not valid to Invalid; neither counts in N.
func Evaluate(gold []Gold, recs []persona.Record) Report {
	byID := make(map[string]*persona.Record, len(recs))
	for i := range recs {
		if _, seen := byID[recs[i].TurnID]; !seen {
			byID[recs[i].TurnID] = &recs[i]
		}
	}
	idx := map[persona.Verdict]int{}
	for i, v := range persona.Verdicts {
		idx[v] = i
	}
	k := len(persona.Verdicts)
	rep := Report{
		Labels:        slices.Clone(persona.Verdicts),
		Confusion:     make([][]int, k),
		Missing:       []string{},
		Invalid:       []string{},
		Disagreements: []Group{},
	}
	for i := range rep.Confusion {
		rep.Confusion[i] = make([]int, k)
	}
	groups := map[string]*Group{}
	labelled := map[string]bool{}
	for _, g := range gold {
		if labelled[g.TurnID] {
			rep.Invalid = append(rep.Invalid, g.TurnID)
			continue
		}
		labelled[g.TurnID] = true
		r, ok := byID[g.TurnID]
		if !ok {
			rep.Missing = append(rep.Missing, g.TurnID)
			continue
		}
		if !g.Verdict.Valid() || !r.Verdict.Valid() {
			rep.Invalid = append(rep.Invalid, g.TurnID)
			continue
		}
		rep.N++
		rep.Confusion[idx[g.Verdict]][idx[r.Verdict]]++
		if g.Verdict == r.Verdict {
			rep.Agreed++
			continue
		}
		grp := reason(g.Verdict, r)
		key := string(grp.Gold) + "\x00" + string(grp.Predicted) + "\x00" + grp.Detail
		if have, ok := groups[key]; ok {
			grp = have
		} else {
			groups[key] = grp
		}
		grp.TurnIDs = append(grp.TurnIDs, g.TurnID)
		grp.Count++
	}
	for _, g := range groups { // (gold, predicted, detail) is unique, so the sort is total
		rep.Disagreements = append(rep.Disagreements, *g)
	}
	slices.SortFunc(rep.Disagreements, func(a, b Group) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		if d := idx[a.Gold] - idx[b.Gold]; d != 0 {
			return d
		}
		if d := idx[a.Predicted] - idx[b.Predicted]; d != 0 {
			return d
		}
		return strings.Compare(a.Detail, b.Detail)
	})

	if rep.N > 0 {
		rep.Agreement = ptr(float64(rep.Agreed) / float64(rep.N))
		if iv, ok := Wilson(rep.Agreed, rep.N); ok {
			rep.Interval = &iv
		}
	}
	if kappa, ok := Kappa(rep.Confusion); ok {
		rep.Kappa = ptr(kappa)
	}
	for i, v := range persona.Verdicts {
		s := VerdictScore{Verdict: v, Correct: rep.Confusion[i][i]}
		for j := range k {
			s.Gold += rep.Confusion[i][j]
			s.Predicted += rep.Confusion[j][i]
		}
		if s.Predicted > 0 {
			s.Precision = ptr(float64(s.Correct) / float64(s.Predicted))
		}
		if s.Gold > 0 {
			s.Recall = ptr(float64(s.Correct) / float64(s.Gold))
		}
		rep.PerVerdict = append(rep.PerVerdict, s)
	}
	return rep
}

func ptr[T any](v T) *T { return &v }

// reason returns the (empty) group of a disagreement: the gold verdict, the
// record's verdict and the record's rule detail for that verdict.
func reason(gold persona.Verdict, r *persona.Record) *Group {
	g := &Group{Gold: gold, Predicted: r.Verdict, TurnIDs: []string{}}
	switch r.Verdict {
	case persona.SpeechOff:
		g.RuleObserved, g.RuleExpected = r.RuleObserved, r.RuleExpected
		g.Endings = quotedEndings(r)
		g.Detail = orDash(r.RuleObserved) + " ≠ " + orDash(r.RuleExpected)
		if len(g.Endings) > 0 {
			g.Detail += "; endings " + quoteAll(g.Endings, "·")
		}
	case persona.ForbiddenTopic:
		g.TouchedTerm, g.TouchedTopic = r.TouchedTerm, r.TouchedTopic
		g.Detail = "touched 「" + orDash(r.TouchedTerm) + "」"
		if r.TouchedTopic != nil {
			g.Detail += " · " + *r.TouchedTopic
		}
	case persona.OffCanon:
		g.OffCanon = slices.Clone(r.OffCanonEntities)
		g.Detail = "off-canon " + quoteAll(r.OffCanonEntities, ", ")
	case persona.RecallFailed:
		g.RecallTarget = r.RecallTarget
		g.Detail = "recall 「" + orDash(r.RecallTarget) + "」"
	}
	return g
}

func orDash(p *string) string {
	if p == nil {
		return "—"
	}
	return *p
}

func quoteAll(words []string, sep string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "「" + w + "」"
	}
	return strings.Join(q, sep)
}

// quotedEndings returns the words the record's summary quotes in 「」 that are
// the last 어절 of a sentence of the reply_text its evidence cites, in summary
// order without repeats. Quoting is the judge's (or a checked model's) choice;
// requiring a real sentence end keeps first-person words, terms and invented
// quotes out.
func quotedEndings(r *persona.Record) []string {
	reply, _ := r.JudgedReply()
	if reply == "" {
		return nil
	}
	last := map[string]bool{}
	for _, s := range speech.Split(reply) {
		if w := speech.LastWord(s); w != "" {
			last[w] = true
		}
	}
	var out []string
	rest := r.Summary
	for {
		i := strings.Index(rest, "「")
		if i < 0 {
			break
		}
		rest = rest[i+len("「"):]
		j := strings.Index(rest, "」")
		if j < 0 {
			break
		}
		w := rest[:j]
		rest = rest[j+len("」"):]
		if last[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
