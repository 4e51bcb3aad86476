package web

// The page values of the CRYSTAL view, built from a crystalRun (see
// crystal.go): formatting only, every number and rule from evident/crystal
// and evident/crystal/report.

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"evident/crystal"
	"evident/crystal/report"
	"evident/internal/clip"
)

// crystalHead describes a run and the settings its table was scored with.
type crystalHead struct {
	ID, Name, Source, Created, URL string
	Demo                           bool
	Items                          int
	Models                         []string
	Profile                        string
	Similarity                     string // "lexical (word overlap, no model)"
	Lexical                        bool
	Match                          string // "similarity ≥ 0.30"
	Order                          string // "LIS" or "Kendall (τ+1)/2"
	OrdF1                          string // the Ord.F1 formula
	CPR                            string // the CPR formula
}

func (r *crystalRun) head() crystalHead {
	t := r.table
	h := crystalHead{ID: r.ID, Name: r.Name, Source: r.Source, Created: localTime(r.Created), URL: r.url(),
		Demo: r.Demo, Items: len(r.items), Profile: string(t.Profile), Lexical: t.Lexical,
		Similarity: t.SimilarityLabel(), Match: report.MatchRule(t.Inclusive, t.Threshold),
		Order: report.OrderLabel(t.Order), OrdF1: t.OrdF1Formula(), CPR: t.CPRFormula()}
	for _, row := range t.Rows {
		h.Models = append(h.Models, row.Model)
	}
	return h
}

func (r *crystalRun) url() string { return "/crystal/" + url.PathEscape(r.ID) }

// itemURL is the item page for one model.
func (r *crystalRun) itemURL(id, model string) string {
	u := r.url() + "/items/" + url.PathEscape(id)
	if model != "" {
		u += "?model=" + queryEscape(model)
	}
	return u
}

func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

func pct(x float64) string { return fmt.Sprintf("%.2f %%", 100*x) }

// ---- GET /crystal -------------------------------------------------------------

type crystalRunsPage struct {
	Runs   []crystalHead
	Keep   int
	MaxMiB int64
	// The upload form, filled back after a refused upload.
	Name, Profile string
	Error, Detail string
}

func (s *Server) newCrystalRunsPage(ctx context.Context) *crystalRunsPage {
	p := &crystalRunsPage{Keep: crystalKeep, MaxMiB: s.opt.MaxUpload >> 20, Profile: string(crystal.ProfileSeed)}
	if p.MaxMiB == 0 {
		p.MaxMiB = 1
	}
	for _, r := range s.crystal.list() {
		p.Runs = append(p.Runs, r.head())
	}
	p.Runs = append(p.Runs, s.storedCrystalHeads(ctx)...)
	return p
}

// ---- GET /crystal/{run} -------------------------------------------------------

type crystalRunPage struct {
	Run      crystalHead
	Models   []crystalModelRow
	Notes    []string
	Index    crystalIndex
	TextURL  string
	JSONURL  string
	ItemsURL string
}

// crystalModelRow is one model's line of the table, formatted as in the
// text table of crystal/report.
type crystalModelRow struct {
	Model, URL                                  string
	Acc, F1, P, R, LIS, OrdF1, Steps, CPR       string
	Missing, Unparseable, Unknown, StepsDropped int
	// Truncated is the report's count of steps cut to the model's token
	// limit (crystal.Report.TruncatedSteps).
	Truncated int
}

// crystalIndex is the item × model index with its filters (query string:
// model, outcome, q, page).
type crystalIndex struct {
	Model, Outcome, Q string
	Page              int
	Models, Outcomes  []option
	Columns           []string
	Rows              []crystalIndexRow
	Total, Matching   int
	Pager             pager
	Active            bool
	base              string
}

type crystalIndexRow struct {
	ID, URL, Question, Gold string
	Cells                   []crystalCell
}

type crystalCell struct {
	Model, URL, Class, Mark, F1, Title string
}

// crystalOutcomes are the values of the index's outcome filter.
var crystalOutcomes = []struct{ Value, Label string }{
	{"correct", "answer correct"},
	{"wrong", "answer wrong"},
	{"missing", "no prediction"},
	{"unparseable", "unparseable reply"},
	{"unmatched", "some step unmatched"},
}

// runPage lays out the run's table, its notes (report.Table.Notes) and the
// index filtered by q.
func (r *crystalRun) runPage(q url.Values) *crystalRunPage {
	p := &crystalRunPage{Run: r.head(), TextURL: r.url() + "/table.txt", JSONURL: r.url() + "/table.json",
		ItemsURL: r.url() + "/items.jsonl", Notes: r.table.Notes()}
	for _, row := range r.table.Rows {
		rep := row.Report
		p.Models = append(p.Models, crystalModelRow{Model: row.Model, URL: r.url() + "?model=" + queryEscape(row.Model) + "#items",
			Acc: pct(rep.Accuracy), F1: f3(rep.MatchF1), P: f3(rep.Precision), R: f3(rep.Recall), LIS: f3(rep.LIS),
			OrdF1: f3(rep.OrderedF1), Steps: fmt.Sprintf("%.2f", rep.AvgSteps), CPR: f3(rep.CPR),
			Missing: rep.Missing, Unparseable: rep.Unparseable, Unknown: len(rep.Unknown), StepsDropped: rep.Items - rep.StepItems,
			Truncated: rep.TruncatedSteps})
	}
	p.Index = r.buildIndex(q)
	return p
}

func (r *crystalRun) buildIndex(q url.Values) crystalIndex {
	x := crystalIndex{Model: strings.TrimSpace(q.Get("model")), Outcome: q.Get("outcome"), Q: strings.TrimSpace(q.Get("q")),
		Total: len(r.items), base: r.url()}
	if _, ok := r.rows[x.Model]; !ok {
		x.Model = ""
	}
	if !slices.ContainsFunc(crystalOutcomes, func(o struct{ Value, Label string }) bool { return o.Value == x.Outcome }) {
		x.Outcome = ""
	}
	x.Page, _ = strconv.Atoi(q.Get("page"))
	x.Page = max(x.Page, 1)
	x.Active = x.Model != "" || x.Outcome != "" || x.Q != ""
	for _, row := range r.table.Rows {
		x.Models = append(x.Models, option{Value: row.Model, Label: row.Model, Selected: row.Model == x.Model})
		if x.Model == "" || x.Model == row.Model {
			x.Columns = append(x.Columns, row.Model)
		}
	}
	for _, o := range crystalOutcomes {
		x.Outcomes = append(x.Outcomes, option{Value: o.Value, Label: o.Label, Selected: o.Value == x.Outcome})
	}
	needle := strings.ToLower(x.Q)
	var matching []crystalIndexRow
	for i, it := range r.items {
		if needle != "" && !strings.Contains(strings.ToLower(it.ID+"\n"+it.Question+"\n"+it.Answer), needle) {
			continue
		}
		row := crystalIndexRow{ID: it.ID, URL: r.itemURL(it.ID, x.Model), Question: firstLine(it.Question, 110), Gold: it.Answer}
		hit := x.Outcome == ""
		for _, m := range x.Columns {
			s := r.table.Rows[r.rows[m]].Report.PerItem[i]
			c := crystalCell{Model: m, URL: r.itemURL(it.ID, m), F1: f3(s.Match.F1)}
			switch {
			case s.Missing:
				c.Class, c.Mark, c.F1, c.Title = "missing", "–", "", "no prediction"
			case s.Verdict.Correct:
				c.Class, c.Mark, c.Title = "right", "✓", "answer correct ("+string(s.Verdict.Rule)+")"
			default:
				c.Class, c.Mark, c.Title = "wrong", "✗", "answer wrong ("+string(s.Verdict.Rule)+")"
			}
			if s.Unparseable {
				c.Title += ", unparseable reply"
			}
			if !s.Missing {
				c.Title += ", Match F1 " + f3(s.Match.F1)
			}
			switch x.Outcome {
			case "correct":
				hit = hit || s.Verdict.Correct
			case "wrong":
				hit = hit || (!s.Verdict.Correct && !s.Missing)
			case "missing":
				hit = hit || s.Missing
			case "unparseable":
				hit = hit || s.Unparseable
			case "unmatched":
				hit = hit || (!s.Missing && (len(s.Match.UnmatchedPred) > 0 || len(s.Match.UnmatchedRef) > 0))
			}
			row.Cells = append(row.Cells, c)
		}
		if hit {
			matching = append(matching, row)
		}
	}
	x.Matching = len(matching)
	pages := max(1, (len(matching)+crystalIndexPage-1)/crystalIndexPage)
	x.Page = min(x.Page, pages)
	lo := (x.Page - 1) * crystalIndexPage
	x.Rows = matching[lo:min(lo+crystalIndexPage, len(matching))]
	x.Pager = pager{Page: x.Page, Pages: pages}
	if x.Page > 1 {
		x.Pager.Prev = x.URL("page", strconv.Itoa(x.Page-1))
	}
	if x.Page < pages {
		x.Pager.Next = x.URL("page", strconv.Itoa(x.Page+1))
	}
	return x
}

// URL is the run page with this index filter changed by key/value pairs.
func (x crystalIndex) URL(kv ...string) string {
	vals := map[string]string{"model": x.Model, "outcome": x.Outcome, "q": x.Q}
	for i := 0; i+1 < len(kv); i += 2 {
		vals[kv[i]] = kv[i+1]
	}
	var parts []string
	// page numbers the pages of an in-memory run; after and before are the
	// keyset cursors of a run read from the store (item positions).
	for _, k := range []string{"model", "outcome", "q", "page", "after", "before"} {
		if v := vals[k]; v != "" {
			parts = append(parts, k+"="+queryEscape(v))
		}
	}
	if len(parts) == 0 {
		return x.base + "#items"
	}
	return x.base + "?" + strings.Join(parts, "&") + "#items"
}

// firstLine is s's first line, cut to at most n runes between two grapheme
// clusters (internal/clip) with an ellipsis.
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if c := clip.Runes(s, n); c < len(s) {
		s = s[:c] + "…"
	}
	return s
}

// ---- GET /crystal/{run}/items/{id} --------------------------------------------

type crystalItemPage struct {
	Run                  crystalHead
	ID                   string
	Question             string
	Options              []crystalOption
	Gold                 string
	ImageURL             string // same-origin URL of the image; "" when there is none to show
	ImageRef             string // the item's image field, as written
	ImageOff             string // why the image is not shown, when it is not
	Model                string
	Models               []crystalModelTab
	IndexURL, Prev, Next string

	Missing, Unparseable, Repaired bool
	ReplyNotes                     []string
	Answer                         string
	Correct                        bool
	Rule, RuleLabel, Quirk, Detail string

	P, R, F1, OrderScore, OrderLabel, OrdF1, CPR string
	EdgeCase                                     string
	StepsDropped                                 bool
	Match                                        string // "similarity ≥ 0.30"

	Ref, Pred []crystalStep
	Pairs     []crystalPair
	Unmatched int
	SimError  string
}

type crystalOption struct {
	Letter, Text string
	Gold         bool
}

type crystalModelTab struct {
	Name, URL, Mark, Class string
	Current                bool
}

// crystalStep is one step in its column. Matched steps carry the pair's
// number (1 = the pair with the first reference step), colour class, the
// partner's anchor and the similarity; unmatched ones the nearest step on
// the other side and why it did not match.
type crystalStep struct {
	N            int
	Anchor, Text string
	Other        string // the other column: "predicted" or "reference"
	Pair         int
	Class        string
	Partner      string
	PartnerN     int
	Sim, SimFull string
	Nearest      string
}

type crystalPair struct {
	N, RefN, PredN        int
	RefText, PredText     string
	RefAnchor, PredAnchor string
	Class, Sim, SimFull   string
	Order                 int // acceptance order of the greedy matcher (1 = first)
}

// crystalPairColours is how many colours the pairs cycle through (CSS
// classes pc-0 … pc-7).
const crystalPairColours = 8

var ruleLabels = map[crystal.Rule]string{
	crystal.RuleMissing:   "no prediction",
	crystal.RuleEmpty:     "empty answer (seed: always wrong)",
	crystal.RuleNumeric:   "rule 1 · numeric",
	crystal.RuleYesNo:     "rule 2 · yes/no",
	crystal.RuleChoice:    "rule 3 · multiple choice",
	crystal.RuleExact:     "rule 4 · exact match",
	crystal.RuleContains:  "seed · gold as whole words in the answer",
	crystal.RuleSubstring: "paper · last-resort substring",
}

func (r *crystalRun) itemPage(ctx context.Context, i, k int) *crystalItemPage {
	it := r.items[i]
	row := r.table.Rows[k]
	sc := row.Report.PerItem[i]
	rep := r.replies[row.Model][it.ID]
	p := &crystalItemPage{Run: r.head(), ID: it.ID, Question: it.Question, Gold: it.Answer, Model: row.Model,
		IndexURL: r.url() + "?model=" + queryEscape(row.Model) + "#items", ImageRef: it.Image,
		Missing: sc.Missing, Unparseable: sc.Unparseable, Repaired: sc.Repaired, ReplyNotes: rep.Notes,
		Answer: rep.Answer, Correct: sc.Verdict.Correct, Rule: string(sc.Verdict.Rule),
		RuleLabel: ruleLabels[sc.Verdict.Rule], Quirk: string(sc.Verdict.Quirk), Detail: sc.Verdict.Detail,
		P: f3(sc.Match.Precision), R: f3(sc.Match.Recall), F1: f3(sc.Match.F1), OrderScore: f3(sc.Order.Score),
		OrderLabel: "LIS ratio", OrdF1: f3(sc.Order.OrderedF1), CPR: f3(sc.CPR), EdgeCase: sc.Match.EdgeCase,
		StepsDropped: sc.StepsDropped,
		Match:        report.MatchRule(sc.Match.Inclusive, sc.Match.Threshold)}
	if p.RuleLabel == "" {
		p.RuleLabel = p.Rule
	}
	if sc.Order.Method == crystal.OrderKendall {
		p.OrderLabel = report.OrderLabel(sc.Order.Method)
	}
	if i > 0 {
		p.Prev = r.itemURL(r.items[i-1].ID, row.Model)
	}
	if i+1 < len(r.items) {
		p.Next = r.itemURL(r.items[i+1].ID, row.Model)
	}
	for _, other := range r.table.Rows {
		o := other.Report.PerItem[i]
		tab := crystalModelTab{Name: other.Model, URL: r.itemURL(it.ID, other.Model), Current: other.Model == row.Model}
		switch {
		case o.Missing:
			tab.Mark, tab.Class = "–", "missing"
		case o.Verdict.Correct:
			tab.Mark, tab.Class = "✓", "right"
		default:
			tab.Mark, tab.Class = "✗", "wrong"
		}
		p.Models = append(p.Models, tab)
	}
	// Options: the item's own list, else none (the question's "A) …" lines
	// are shown with the question).
	gold := strings.ToUpper(strings.TrimSpace(it.Answer))
	for n, o := range it.Options {
		l := string(rune('A' + n))
		if n >= 26 {
			l = strconv.Itoa(n + 1)
		}
		p.Options = append(p.Options, crystalOption{Letter: l, Text: o, Gold: l == gold})
	}
	// Image.
	switch ref := strings.TrimSpace(it.Image); {
	case ref == "":
	case strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://"):
		p.ImageOff = "The image is an address on another site; the screen loads nothing from other sites."
	default:
		if _, _, err := r.image(ref); err != nil {
			p.ImageOff = "The image is not available here: " + strings.TrimPrefix(err.Error(), report.ErrImage.Error()+": ")
		} else {
			p.ImageURL = r.url() + "/items/" + url.PathEscape(it.ID) + "/image"
		}
	}

	// Steps side by side.
	ref := it.ReferenceSteps
	pred := rep.Steps
	if sc.Missing {
		pred = nil
	}
	pairs := slices.Clone(sc.Match.Pairs)
	order := map[[2]int]int{}
	for n, pr := range pairs {
		order[[2]int{pr.Pred, pr.Ref}] = n + 1
	}
	slices.SortFunc(pairs, func(a, b crystal.Pair) int { return a.Ref - b.Ref })
	p.Ref = make([]crystalStep, len(ref))
	for j, t := range ref {
		p.Ref[j] = crystalStep{N: j + 1, Anchor: fmt.Sprintf("ref-%d", j+1), Text: t, Other: "predicted"}
	}
	p.Pred = make([]crystalStep, len(pred))
	for j, t := range pred {
		p.Pred[j] = crystalStep{N: j + 1, Anchor: fmt.Sprintf("pred-%d", j+1), Text: t, Other: "reference"}
	}
	for n, pr := range pairs {
		if pr.Ref >= len(ref) || pr.Pred >= len(pred) {
			continue
		}
		cls := fmt.Sprintf("pc-%d", n%crystalPairColours)
		sim, full := f3(pr.Similarity), strconv.FormatFloat(pr.Similarity, 'g', -1, 64)
		rs, ps := &p.Ref[pr.Ref], &p.Pred[pr.Pred]
		rs.Pair, rs.Class, rs.Partner, rs.PartnerN, rs.Sim, rs.SimFull = n+1, cls, ps.Anchor, ps.N, sim, full
		ps.Pair, ps.Class, ps.Partner, ps.PartnerN, ps.Sim, ps.SimFull = n+1, cls, rs.Anchor, rs.N, sim, full
		p.Pairs = append(p.Pairs, crystalPair{N: n + 1, RefN: rs.N, PredN: ps.N, RefText: rs.Text, PredText: ps.Text,
			RefAnchor: rs.Anchor, PredAnchor: ps.Anchor, Class: cls, Sim: sim, SimFull: full,
			Order: order[[2]int{pr.Pred, pr.Ref}]})
	}
	p.Unmatched = len(sc.Match.UnmatchedPred) + len(sc.Match.UnmatchedRef)
	if sc.Missing {
		p.Unmatched = len(ref)
	}
	// Why each unmatched step stayed unmatched: its nearest step on the
	// other side, below the threshold or already taken (crystal.ExplainSteps).
	if len(pred) > 0 && len(ref) > 0 && p.Unmatched > 0 {
		u, err := crystal.ExplainSteps(ctx, r.sim, pred, ref, sc.Match)
		if err != nil {
			p.SimError = fmt.Sprintf("the similarities for the unmatched steps could not be recomputed (%v)", err)
		}
		why := func(n crystal.Nearest, other *crystalStep, side string) string {
			if n.Taken && other.Pair > 0 {
				return fmt.Sprintf("nearest: %s step %d at %s, already matched at %s (pair %d)", side, other.N, f3(n.Similarity), other.Sim, other.Pair)
			}
			return fmt.Sprintf("nearest: %s step %d at %s, below the threshold (%s)", side, other.N, f3(n.Similarity), p.Match)
		}
		for _, n := range u.Pred {
			p.Pred[n.Step].Nearest = why(n, &p.Ref[n.Other], "reference")
		}
		for _, n := range u.Ref {
			p.Ref[n.Step].Nearest = why(n, &p.Pred[n.Other], "predicted")
		}
	}
	return p
}

// image returns the bytes and type of an item's image reference
// (report.ResolveImage): a data URI is decoded; anything else is looked up in
// the run's images (the embedded demo files, or the images uploaded with the
// run, by base name).
func (r *crystalRun) image(ref string) ([]byte, string, error) {
	return report.ResolveImage(ref, r.images)
}
