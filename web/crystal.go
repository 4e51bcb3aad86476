package web

// The CRYSTAL view (spec crystal.md; issue 5 item 6): score runs of the
// reasoning-step scorer, the paper-style table per run, an item × model index
// and, per item, the reference and predicted steps side by side with the
// matched pairs linked. Scores come from evident/crystal through
// evident/crystal/report; this file only lays them out (package doc,
// "CRYSTAL").

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"evident/crystal"
	"evident/crystal/demo"
	"evident/crystal/embedder"
	"evident/crystal/report"
)

// crystalKeep is how many uploaded CRYSTAL runs the screen keeps in memory;
// the oldest upload is dropped when another arrives. The demo runs stay.
const crystalKeep = 10

// crystalIndexPage is how many items one page of a run's index lists.
const crystalIndexPage = 100

// crystalRun is one scored comparison: items, every model's replies and the
// table crystal/report made of them. It never changes after it is built.
type crystalRun struct {
	ID      string // "demo", "demo-paper", or the upload's number
	Name    string
	Source  string // where the references and predictions came from
	Created time.Time
	Demo    bool

	items   []crystal.Item
	index   map[string]int // item id → position in items (and in every PerItem)
	runs    []report.Run
	replies map[string]map[string]crystal.Reply // model → item id → reply
	rows    map[string]int                      // model → position in table.Rows
	table   report.Table
	sim     embedder.Similarity // the similarity the table was scored with
	images  func(ref string) ([]byte, error)
}

// crystalRuns holds the runs of this server's lifetime (see crystalKeep).
type crystalRuns struct {
	mu   sync.Mutex
	runs []*crystalRun // demo runs first, then uploads, oldest first
	next int
}

func (c *crystalRuns) get(id string) (*crystalRun, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.runs {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}

func (c *crystalRuns) list() []*crystalRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.runs)
}

// add numbers an uploaded run and keeps it, dropping the oldest upload when
// more than crystalKeep are held.
func (c *crystalRuns) add(r *crystalRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	r.ID = strconv.Itoa(c.next)
	c.runs = append(c.runs, r)
	uploads := 0
	for _, x := range c.runs {
		if !x.Demo {
			uploads++
		}
	}
	if uploads > crystalKeep {
		for i, x := range c.runs {
			if !x.Demo {
				c.runs = slices.Delete(c.runs, i, i+1)
				break
			}
		}
	}
}

// scoreCrystal scores runs against items with the model-free lexical
// similarity of profile p (the only similarity the screen offers: the
// embedding one needs a model directory and an onnx build).
func scoreCrystal(ctx context.Context, items []crystal.Item, runs []report.Run, p crystal.Profile) (*crystalRun, error) {
	sim := crystal.LexicalFor(p)
	t, err := report.Score(ctx, items, runs, crystal.Config{Profile: p, Similarity: sim})
	if err != nil {
		return nil, err
	}
	r := &crystalRun{Created: time.Now(), items: items, index: make(map[string]int, len(items)), runs: runs,
		replies: map[string]map[string]crystal.Reply{}, rows: map[string]int{}, table: t, sim: sim}
	for i, it := range items {
		r.index[it.ID] = i
	}
	for _, run := range runs {
		r.replies[run.Model] = run.Replies
	}
	for k, row := range t.Rows {
		r.rows[row.Model] = k
	}
	return r, nil
}

// demoCrystal scores the embedded sample (crystal/demo) under both profiles:
// "demo" (seed, the table of crystal/demo/testdata/table_seed.golden) and
// "demo-paper".
func demoCrystal(ctx context.Context) ([]*crystalRun, error) {
	items, err := demo.Items()
	if err != nil {
		return nil, err
	}
	runs, err := demo.Predictions()
	if err != nil {
		return nil, err
	}
	images := demo.Images()
	open := func(ref string) ([]byte, error) {
		if !fs.ValidPath(ref) {
			return nil, fs.ErrNotExist
		}
		return fs.ReadFile(images, ref)
	}
	var out []*crystalRun
	for _, d := range []struct {
		id string
		p  crystal.Profile
	}{{"demo", crystal.ProfileSeed}, {"demo-paper", crystal.ProfilePaper}} {
		r, err := scoreCrystal(ctx, items, runs, d.p)
		if err != nil {
			return nil, fmt.Errorf("crystal demo (%s): %w", d.p, err)
		}
		r.ID, r.Demo, r.images = d.id, true, open
		r.Name = "Demo sample · " + string(d.p) + " profile"
		r.Source = "embedded sample (crystal/demo): 15 items, three fictional models"
		out = append(out, r)
	}
	return out, nil
}

// ---- shared page parts ------------------------------------------------------

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
		Demo: r.Demo, Items: len(r.items), Profile: string(t.Profile), Lexical: t.Lexical, Order: "LIS"}
	kind := "embedding cosine"
	if t.Lexical {
		kind = "word overlap, no model"
	}
	h.Similarity = fmt.Sprintf("%s (%s)", t.Similarity, kind)
	h.Match = fmt.Sprintf("similarity %s %.2f", cmpSign(t.Inclusive), t.Threshold)
	if t.Order == crystal.OrderKendall {
		h.Order = "Kendall (τ+1)/2"
	}
	h.OrdF1 = fmt.Sprintf("Ord.F1 = F1 × (%.2f + %.2f × %s)", 1-t.Alpha, t.Alpha, h.Order)
	w := t.Weights
	h.CPR = fmt.Sprintf("CPR = %.2f + %.2f × F1 if correct, %.2f × %.2f × F1 if wrong", w.Answer, w.Step, w.Step, w.Lambda)
	for _, row := range t.Rows {
		h.Models = append(h.Models, row.Model)
	}
	return h
}

func cmpSign(inclusive bool) string {
	if inclusive {
		return "≥"
	}
	return ">"
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

// ---- GET /crystal, POST /crystal/score -------------------------------------

type crystalRunsPage struct {
	Runs   []crystalHead
	Keep   int
	MaxMiB int64
	// The upload form, filled back after a refused upload.
	Name, Profile string
	Error, Detail string
}

func (s *Server) newCrystalRunsPage() *crystalRunsPage {
	p := &crystalRunsPage{Keep: crystalKeep, MaxMiB: s.opt.MaxUpload >> 20, Profile: string(crystal.ProfileSeed)}
	if p.MaxMiB == 0 {
		p.MaxMiB = 1
	}
	for _, r := range s.crystal.list() {
		p.Runs = append(p.Runs, r.head())
	}
	return p
}

func (s *Server) crystalRunsPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "crystal_runs", s.newCrystalRunsPage())
}

// crystalScore reads references, predictions and images from the form,
// scores them and keeps the run in memory. Nothing is kept when any file is
// refused.
func (s *Server) crystalScore(w http.ResponseWriter, r *http.Request) {
	page := s.newCrystalRunsPage()
	refuse := func(status int, msg, detail string) {
		page.Error, page.Detail = msg, detail
		s.render(w, r, status, "crystal_runs", page)
	}
	f, err := readForm(w, r, s.opt.MaxUpload)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			refuse(http.StatusRequestEntityTooLarge, "The upload is too large",
				fmt.Sprintf("One upload may hold %d MiB in all (references, predictions and images together). Nothing was scored or kept.", page.MaxMiB))
			return
		}
		refuse(http.StatusBadRequest, "The form could not be read", err.Error())
		return
	}
	if !s.csrfOK(r, f.fields["csrf"]) {
		s.csrfFail(w, r)
		return
	}
	page.Name = f.fields["name"]
	if v := f.fields["profile"]; v != "" {
		page.Profile = v
	}
	profile, err := crystal.ParseProfile(page.Profile)
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "Unknown profile", err.Error()+". Nothing was scored or kept.")
		return
	}
	refs, ok := f.files["refs"]
	if !ok || len(refs.data) == 0 {
		refuse(http.StatusUnprocessableEntity, "No references file",
			"Choose the references: JSON keyed by item id, a JSON array or JSON Lines of {id, question, options, answer, reference_steps, image}.")
		return
	}
	items, err := report.ReadItems(bytes.NewReader(refs.data), refs.name)
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The references could not be read; nothing was kept", err.Error())
		return
	}
	var preds []report.Prediction
	seen := map[[2]string]string{}
	for _, pf := range f.all["preds"] {
		base := strings.TrimSuffix(pf.name, path.Ext(pf.name))
		ps, err := report.ReadPredictions(bytes.NewReader(pf.data), pf.name, base)
		if err != nil {
			refuse(http.StatusUnprocessableEntity, "The predictions could not be read; nothing was kept", err.Error())
			return
		}
		for _, p := range ps {
			k := [2]string{p.Model, p.ID}
			if other, dup := seen[k]; dup {
				refuse(http.StatusUnprocessableEntity, "The predictions could not be read; nothing was kept",
					fmt.Sprintf("%s: model %q answered item %q in %s already", pf.name, p.Model, p.ID, other))
				return
			}
			seen[k] = pf.name
		}
		preds = append(preds, ps...)
	}
	if len(preds) == 0 {
		refuse(http.StatusUnprocessableEntity, "No predictions",
			"Choose one or more predictions files (JSON Lines of {id, model, reasoning_steps, answer} or {id, model, reply}) with at least one line.")
		return
	}
	known := 0
	ids := make(map[string]bool, len(items))
	for _, it := range items {
		ids[it.ID] = true
	}
	for _, p := range preds {
		if ids[p.ID] {
			known++
		}
	}
	if known == 0 {
		refuse(http.StatusUnprocessableEntity, "No prediction names an item of the references",
			fmt.Sprintf("None of the %d predictions has the id of one of the %d reference items (the first is %q). Nothing was kept.", len(preds), len(items), preds[0].ID))
		return
	}
	images := map[string][]byte{}
	for _, im := range f.all["images"] {
		if _, ok := imageType(im.data); !ok {
			refuse(http.StatusUnprocessableEntity, "An image file is not an image; nothing was kept",
				fmt.Sprintf("%s: the screen shows PNG, JPEG, GIF and WebP images (this file reads as %s).", im.name, http.DetectContentType(im.data)))
			return
		}
		images[im.name] = im.data
	}
	runs := report.Group(preds)
	s.jobs.Lock()
	run, err := scoreCrystal(r.Context(), items, runs, profile)
	s.jobs.Unlock()
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "The predictions could not be scored; nothing was kept", err.Error())
		return
	}
	var names []string
	for _, pf := range f.all["preds"] {
		names = append(names, pf.name)
	}
	run.Name = page.Name
	if run.Name == "" {
		run.Name = refs.name
	}
	run.Source = "upload: " + refs.name + " + " + strings.Join(names, ", ")
	if len(images) > 0 {
		run.Source += fmt.Sprintf(" + %d %s", len(images), plural(len(images), "image", "images"))
	}
	run.images = func(ref string) ([]byte, error) {
		if b, ok := images[path.Base(strings.ReplaceAll(ref, `\`, "/"))]; ok {
			return b, nil
		}
		return nil, fs.ErrNotExist
	}
	s.crystal.add(run)
	http.Redirect(w, r, run.url(), http.StatusSeeOther)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// imageType returns the sniffed type of an image the screen serves: PNG,
// JPEG, GIF or WebP (never SVG, which can carry script).
func imageType(b []byte) (string, bool) {
	ct := http.DetectContentType(b)
	switch ct {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return ct, true
	}
	return ct, false
}

// ---- GET /crystal/{run} -----------------------------------------------------

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

func (s *Server) crystalRun(w http.ResponseWriter, r *http.Request) (*crystalRun, bool) {
	run, ok := s.crystal.get(r.PathValue("run"))
	if !ok {
		s.crystalFail(w, r, http.StatusNotFound, "No such CRYSTAL run",
			"The runs of this server are listed on /crystal. Uploaded runs live in memory and are gone after a restart.")
	}
	return run, ok
}

func (s *Server) crystalFail(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	s.render(w, r, status, "error", &errorPage{Title: title, Detail: detail, Status: status, English: true})
}

func (s *Server) crystalRunPage(w http.ResponseWriter, r *http.Request) {
	run, ok := s.crystalRun(w, r)
	if !ok {
		return
	}
	p := &crystalRunPage{Run: run.head(), TextURL: run.url() + "/table.txt", JSONURL: run.url() + "/table.json",
		ItemsURL: run.url() + "/items.jsonl"}
	t := run.table
	if t.Lexical {
		p.Notes = append(p.Notes, "lexical is the reference package's word-overlap step similarity, not the paper's "+
			"all-distilroberta-v1 embedding: these step scores are not comparable with the paper's table.")
	}
	for _, row := range t.Rows {
		rep := row.Report
		m := crystalModelRow{Model: row.Model, URL: run.url() + "?model=" + queryEscape(row.Model) + "#items",
			Acc: pct(rep.Accuracy), F1: f3(rep.MatchF1), P: f3(rep.Precision), R: f3(rep.Recall), LIS: f3(rep.LIS),
			OrdF1: f3(rep.OrderedF1), Steps: fmt.Sprintf("%.2f", rep.AvgSteps), CPR: f3(rep.CPR),
			Missing: rep.Missing, Unparseable: rep.Unparseable, Unknown: len(rep.Unknown), StepsDropped: rep.Items - rep.StepItems}
		p.Models = append(p.Models, m)
		var parts []string
		if rep.Missing > 0 {
			parts = append(parts, fmt.Sprintf("%d %s without a prediction (scored 0, wrong)", rep.Missing, plural(rep.Missing, "item", "items")))
		}
		if rep.Unparseable > 0 {
			parts = append(parts, fmt.Sprintf("%d unparseable %s (no steps, answer %q)", rep.Unparseable, plural(rep.Unparseable, "reply", "replies"), crystal.InsufficientInformation))
		}
		if n := rep.Items - rep.StepItems; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s without reference steps left out of the step means", n, plural(n, "item", "items")))
		}
		if len(rep.Unknown) > 0 {
			q := make([]string, len(rep.Unknown))
			for k, id := range rep.Unknown {
				q[k] = strconv.Quote(id)
			}
			parts = append(parts, fmt.Sprintf("%d %s not in the references ignored (%s)", len(rep.Unknown), plural(len(rep.Unknown), "id", "ids"), strings.Join(q, ", ")))
		}
		if len(parts) > 0 {
			p.Notes = append(p.Notes, row.Model+": "+strings.Join(parts, "; "))
		}
	}
	p.Index = run.buildIndex(r.URL.Query())
	s.render(w, r, http.StatusOK, "crystal_run", p)
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
	for _, k := range []string{"model", "outcome", "q", "page"} {
		if v := vals[k]; v != "" {
			parts = append(parts, k+"="+queryEscape(v))
		}
	}
	if len(parts) == 0 {
		return x.base + "#items"
	}
	return x.base + "?" + strings.Join(parts, "&") + "#items"
}

// firstLine is s's first line, cut to n runes with an ellipsis.
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if rs := []rune(s); len(rs) > n {
		s = string(rs[:n]) + "…"
	}
	return s
}

// ---- downloads ---------------------------------------------------------------

func (s *Server) crystalDownload(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, ok := s.crystalRun(w, r)
		if !ok {
			return
		}
		var buf bytes.Buffer
		var err error
		ct, name := "text/plain; charset=utf-8", "table.txt"
		switch kind {
		case "text":
			err = run.table.WriteText(&buf)
		case "json":
			ct, name = "application/json", "table.json"
			err = run.table.WriteJSON(&buf)
		default:
			ct, name = "application/x-ndjson; charset=utf-8", "items.jsonl"
			err = run.table.WriteItems(&buf, run.items, run.runs)
		}
		if err != nil {
			s.crystalFail(w, r, http.StatusInternalServerError, "The file could not be written", err.Error())
			return
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="crystal-%s-%s"`, safeFileName(run.ID), name))
		w.Write(buf.Bytes())
	}
}

func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
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

func (s *Server) crystalItem(w http.ResponseWriter, r *http.Request) {
	run, ok := s.crystalRun(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	i, ok := run.index[id]
	if !ok {
		s.crystalFail(w, r, http.StatusNotFound, "No such item in this run",
			fmt.Sprintf("Run %s has no item %q; its index lists every item.", run.ID, id))
		return
	}
	if len(run.table.Rows) == 0 {
		s.crystalFail(w, r, http.StatusNotFound, "This run has no model", "There is nothing to show per item.")
		return
	}
	model := r.URL.Query().Get("model")
	if model == "" {
		model = run.table.Rows[0].Model
	}
	k, ok := run.rows[model]
	if !ok {
		s.crystalFail(w, r, http.StatusNotFound, "No such model in this run",
			fmt.Sprintf("Run %s has no model %q; the models are %s.", run.ID, model, strings.Join(run.head().Models, ", ")))
		return
	}
	p := run.itemPage(r.Context(), i, k)
	s.render(w, r, http.StatusOK, "crystal_item", p)
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
		Match:        fmt.Sprintf("similarity %s %.2f", cmpSign(sc.Match.Inclusive), sc.Match.Threshold)}
	if p.RuleLabel == "" {
		p.RuleLabel = p.Rule
	}
	if sc.Order.Method == crystal.OrderKendall {
		p.OrderLabel = "Kendall (τ+1)/2"
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
		if _, err := r.image(ref); err != nil {
			p.ImageOff = "The image is not available here: " + err.Error()
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
	// other side, below the threshold or already taken.
	if len(pred) > 0 && len(ref) > 0 && p.Unmatched > 0 {
		m, err := r.sim.Similarities(ctx, pred, ref)
		if err != nil || len(m) != len(pred) {
			p.SimError = fmt.Sprintf("the similarities for the unmatched steps could not be recomputed (%v)", err)
		} else {
			passes := func(v float64) bool {
				return v > sc.Match.Threshold || (sc.Match.Inclusive && v == sc.Match.Threshold)
			}
			why := func(v float64, other *crystalStep, side string) string {
				if passes(v) && other.Pair > 0 {
					return fmt.Sprintf("nearest: %s step %d at %s, already matched at %s (pair %d)", side, other.N, f3(v), other.Sim, other.Pair)
				}
				return fmt.Sprintf("nearest: %s step %d at %s, below the threshold (%s)", side, other.N, f3(v), p.Match)
			}
			for a := range p.Pred {
				if p.Pred[a].Pair > 0 || len(m[a]) != len(ref) {
					continue
				}
				b := argmax(m[a])
				p.Pred[a].Nearest = why(m[a][b], &p.Ref[b], "reference")
			}
			for b := range p.Ref {
				if p.Ref[b].Pair > 0 {
					continue
				}
				col := make([]float64, len(pred))
				for a := range pred {
					if len(m[a]) == len(ref) {
						col[a] = m[a][b]
					}
				}
				a := argmax(col)
				p.Ref[b].Nearest = why(col[a], &p.Pred[a], "predicted")
			}
		}
	}
	return p
}

// argmax is the first index of the largest value (NaN never wins).
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] || (v[best] != v[best] && x == x) {
			best = i
		}
	}
	return best
}

// image returns the bytes of an item's image reference: a data URI is
// decoded; anything else is looked up in the run's images (the embedded demo
// files, or the images uploaded with the run, by base name).
func (r *crystalRun) image(ref string) ([]byte, error) {
	var b []byte
	if strings.HasPrefix(ref, "data:") {
		meta, data, ok := strings.Cut(strings.TrimPrefix(ref, "data:"), ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, errors.New("a data URI that is not base64")
		}
		var err error
		if b, err = base64.StdEncoding.DecodeString(strings.TrimSpace(data)); err != nil {
			return nil, fmt.Errorf("a malformed data URI (%v)", err)
		}
	} else {
		if r.images == nil {
			return nil, fmt.Errorf("%q was not uploaded with the run", ref)
		}
		var err error
		if b, err = r.images(ref); err != nil {
			return nil, fmt.Errorf("%q was not uploaded with the run", ref)
		}
	}
	if ct, ok := imageType(b); !ok {
		return nil, fmt.Errorf("%q is not a PNG, JPEG, GIF or WebP image (%s)", firstLine(ref, 60), ct)
	}
	return b, nil
}

// crystalImage serves an item's image from this origin (the site's CSP
// allows no other).
func (s *Server) crystalImage(w http.ResponseWriter, r *http.Request) {
	run, ok := s.crystalRun(w, r)
	if !ok {
		return
	}
	i, ok := run.index[r.PathValue("id")]
	if !ok || strings.TrimSpace(run.items[i].Image) == "" {
		http.NotFound(w, r)
		return
	}
	b, err := run.image(strings.TrimSpace(run.items[i].Image))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	ct, _ := imageType(b)
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Write(b)
}
