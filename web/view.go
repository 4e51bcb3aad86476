package web

import (
	"context"
	"fmt"
	"html/template"
	"iter"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"evident/persona"
	"evident/persona/batch"
	"evident/persona/evalrun"
	"evident/runstore"
	"evident/store"
)

// view is what every page template receives: the layout's fields and the
// page's own data in Page.
type view struct {
	Title     string
	Static    bool         // the self-contained report: no forms, no server links
	CSS       template.CSS // inlined stylesheet (Static only)
	CSRF      string
	Nav       string // "run", "disagree", "runs", "upload", "crystal"
	Lang      string // the page's language; "" is Korean (the CRYSTAL pages are English)
	RunID     int64  // run the navigation points at; 0 for none
	LoggedIn  bool   // a token is set and this browser used it
	Generated string // Static only: when the report was written
	Page      any
}

var funcs = template.FuncMap{
	"inc": func(i int) int { return i + 1 },
	// undoForm is the data of the review pages' undo button.
	"undoForm": func(p *reviewPage, csrf string, id int64) undoView {
		return undoView{URL: p.UndoURL, CSRF: csrf, Who: p.Who, ID: id}
	},
}

type undoView struct {
	URL, CSRF, Who string
	ID             int64
}

// Rows per group without a filter, and per page of one group; above
// maxSessionOptions sessions the session filter is a text field.
const (
	groupPreview      = 50
	pageSize          = 200
	maxSessionOptions = 300
)

// verdictClass is the CSS class of each verdict (colour of its chip).
var verdictClass = map[persona.Verdict]string{
	persona.ForbiddenTopic: "v-forbidden",
	persona.OffCanon:       "v-offcanon",
	persona.SpeechOff:      "v-speech",
	persona.RecallFailed:   "v-recall",
	persona.Kept:           "v-kept",
}

// shortVerdict names the verdicts in narrow table headers.
var shortVerdict = map[persona.Verdict]string{
	persona.ForbiddenTopic: "금지",
	persona.OffCanon:       "세계관",
	persona.SpeechOff:      "말투",
	persona.RecallFailed:   "기억",
	persona.Kept:           "설정",
}

// ---- filters -------------------------------------------------------------

// filterView is the query string of the run screen, parsed, with the choices
// its form offers.
type filterView struct {
	Character, Model, Session, Verdict, Q, Turn string
	Page                                        int
	// From is the keyset cursor of a page: its first row has seq ≥ From
	// (the "next page" link sets it; a bare page N is found by offset).
	From                                   int
	Characters, Models, Sessions, Verdicts []option
	// SessionText: too many sessions for a dropdown; the form asks for the id.
	SessionText bool
	base        string
}

type option struct {
	Value, Label string
	Selected     bool
}

func parseFilter(base string, q url.Values) filterView {
	f := filterView{base: base,
		Character: strings.TrimSpace(q.Get("character")), Model: strings.TrimSpace(q.Get("model")),
		Session: strings.TrimSpace(q.Get("session")), Q: strings.TrimSpace(q.Get("q")),
		Turn: strings.TrimSpace(q.Get("turn")),
	}
	if v := persona.Verdict(q.Get("verdict")); v.Valid() {
		f.Verdict = string(v)
	}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	if f.Page < 1 {
		f.Page = 1
	}
	if f.From, _ = strconv.Atoi(q.Get("from")); f.From < 0 || f.Page == 1 {
		f.From = 0
	}
	return f
}

func (f filterView) store() store.Filter {
	return store.Filter{Character: f.Character, Model: f.Model, Session: f.Session,
		Verdict: persona.Verdict(f.Verdict), Text: f.Q, TurnID: f.Turn}
}

// Active reports whether any filter is set.
func (f filterView) Active() bool {
	return f.Character != "" || f.Model != "" || f.Session != "" || f.Verdict != "" || f.Q != "" || f.Turn != ""
}

// URL is the screen with this filter, changed by key/value pairs ("" drops a
// key). Keys come out in a fixed order, so equal views have equal URLs.
func (f filterView) URL(kv ...string) string {
	vals := map[string]string{"character": f.Character, "model": f.Model, "session": f.Session,
		"verdict": f.Verdict, "q": f.Q, "turn": f.Turn}
	if f.Page > 1 {
		vals["page"] = strconv.Itoa(f.Page)
		if f.From > 0 {
			vals["from"] = strconv.Itoa(f.From)
		}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		vals[kv[i]] = kv[i+1]
		if kv[i] == "page" && !slices.Contains(kv, "from") { // a cursor belongs to its page
			vals["from"] = ""
		}
	}
	var parts []string
	for _, k := range []string{"character", "model", "session", "verdict", "q", "turn", "page", "from"} {
		if v := vals[k]; v != "" {
			parts = append(parts, k+"="+queryEscape(v))
		}
	}
	if len(parts) == 0 {
		return f.base
	}
	return f.base + "?" + strings.Join(parts, "&")
}

// queryEscape escapes a query value with %20 for spaces (a '+' would reach
// the page as &#43;).
func queryEscape(v string) string { return strings.ReplaceAll(url.QueryEscape(v), "+", "%20") }

func options(values []string, selected string, label func(string) string) []option {
	out := make([]option, 0, len(values))
	for _, v := range values {
		out = append(out, option{Value: v, Label: label(v), Selected: v == selected})
	}
	return out
}

// ---- the run screen ----------------------------------------------------------

type runHead struct {
	ID               int64
	DatasetID        int64
	Dataset          string
	Started          string
	Profile          string
	Endings          string // the run's polite endings, "요 · 죠 · …"
	Exceptions       string // its noun exceptions, "" when none
	Judged, Rejected int
	ByVerdict        []verdictCount
	Review           string // the review queues' base URL; "" in the static report
}

type verdictCount struct {
	Verdict, Class string
	Count          int
}

type runPage struct {
	Run    runHead
	Filter filterView
	Total  int // turns matching the filter
	// Capped: a text search matched more than store.SearchCountCap turns;
	// Total and every count under the filter cover the first CapN matching
	// turns in run order (store.SearchCapped).
	Capped      bool
	CapN        string // the cap, written with thousands separators
	TotalText   string // a capped Total, written with thousands separators
	RunTotal    int    // turns of the run
	Groups      []*groupView
	Single      bool // one verdict or one turn: rows are paged, not previewed
	Pager       pager
	Checks      checksView
	Gold        goldView
	Models      modelsView
	Rejects     rejectsView
	Breakdown   breakdownView
	Stored      bool          // the whole-run figures come from the stored summary
	Report      reportCap     // the static report only: its cap
	Disagree    *disagreePage // the static report only
	DisagreeURL string
	ReportURL   string
	ExportURL   string // the records matching the filter as JSON Lines
	CSVURL      string // the same records as CSV (web/export.go)
}

type pager struct {
	Page, Pages int
	Prev, Next  string
	// Open: the number of pages is unknown (a capped search); only Prev and
	// Next (a keyset link) are shown.
	Open bool
}

type groupView struct {
	Verdict, Class, Anchor string
	Count                  int
	Share                  string
	Total                  int
	Rows                   []rowView
	Stream                 iter.Seq[rowView] // the report: rows read while the template writes
	More                   int
	MoreURL                string
}

type rowView struct {
	TurnID, SessionID, CharacterID, Character, ModelID string
	Verdict, Class, Anchor, Link                       string
	Summary, SummarySource                             string
	Open                                               bool
	Skipped                                            []string
	Expected, Observed                                 string
	ObservedNull                                       bool
	OffCanon                                           []string
	OffCanonNull                                       bool
	TouchedTerm, TouchedTopic                          string
	Touched, TouchedAllowed                            bool
	RecallTarget, RecallSource, RecallLink             string
	UserMessage                                        string
	HasUserMessage, AskedRecall                        bool
	Reply                                              []Segment
	ReplyNull                                          bool
	SourceReply                                        []Segment
	Evidence                                           []evidenceRow
	Hedge                                              string
	Gold, GoldNote, GoldClass                          string
}

type evidenceRow struct {
	Source, Field, Agg, Value string
	Null                      bool
}

// buildRun assembles the run screen for filter f from the store, a page at a
// time: whole-run figures from the run's summary (precomputed at judge time,
// else counted with indexed SQL), counts under a filter with GROUP BY on the
// filter indexes, and only the rows shown (each group's first groupPreview
// rows, or one keyset page of pageSize rows of one verdict or one turn).
// static (the report) shows no server links and gets its rows streamed by
// writeReport instead (Groups' Rows are left empty).
func (s *Server) buildRun(ctx context.Context, d *runData, f filterView, static bool) (*runPage, error) {
	id := d.info.ID
	f.base = fmt.Sprintf("/runs/%d", id)
	sum, stored, err := s.summaryFor(ctx, d)
	if err != nil {
		return nil, err
	}
	p := &runPage{Filter: f, RunTotal: sum.Records, Run: head(d), Stored: stored,
		DisagreeURL: fmt.Sprintf("/runs/%d/disagree", id), ReportURL: fmt.Sprintf("/runs/%d/report.html", id)}
	if !static {
		p.Run.Review = fmt.Sprintf("/runs/%d/review", id)
	}
	p.ExportURL = fmt.Sprintf("/runs/%d/records.jsonl", id)
	p.CSVURL = fmt.Sprintf("/runs/%d/records.csv", id)
	if q := strings.TrimPrefix(f.URL("page", ""), f.base); q != "" {
		p.ExportURL += q
		p.CSVURL += q
	}
	if q := strings.TrimPrefix(f.URL("page", "", "turn", ""), f.base); q != "" {
		p.ReportURL += q
	}

	p.Filter.Characters = options(groupValues(sum.Characters), f.Character, func(v string) string { return d.characterLabel(v) })
	p.Filter.Models = options(groupValues(sum.Models), f.Model, func(v string) string { return v })
	if sum.SessionCount > maxSessionOptions || len(sum.Sessions) < sum.SessionCount {
		p.Filter.SessionText = true
	} else {
		p.Filter.Sessions = options(sum.Sessions, f.Session, func(v string) string { return v })
	}
	var vs []string
	for _, v := range persona.Verdicts {
		vs = append(vs, string(v))
	}
	p.Filter.Verdicts = options(vs, f.Verdict, func(v string) string { return v })

	sf := f.store()
	counts := sum.ByVerdict
	if f.Active() {
		if counts, err = s.db.CountByVerdict(ctx, id, sf); err != nil {
			return nil, err
		}
	}
	for _, n := range counts {
		p.Total += n
	}
	if f.Q != "" {
		if p.Capped, err = s.db.SearchCapped(ctx, id, sf); err != nil {
			return nil, err
		}
		p.CapN, p.TotalText = thousands(s.db.SearchCap()), thousands(p.Total)
	}
	p.Single = f.Verdict != "" || f.Turn != ""
	if last := max(1, (p.Total+pageSize-1)/pageSize); p.Single && f.Page > last && !p.Capped {
		// A page past the end (an old link, a hand-typed number) shows the
		// last page rather than an empty one.
		f.Page, f.From = last, 0
		p.Filter.Page, p.Filter.From = f.Page, f.From
	}
	type shown struct {
		g       *groupView
		entries []store.Entry
	}
	var groups []shown
	more := false // a capped search's single verdict has rows after this page
	for _, v := range persona.Verdicts {
		g := &groupView{Verdict: string(v), Class: verdictClass[v], Anchor: "g-" + strings.TrimPrefix(verdictClass[v], "v-"),
			Count: counts[v], Total: p.Total, Share: share(counts[v], p.Total)}
		if f.Active() && g.Count == 0 {
			continue // issue 13: empty groups are hidden under a filter
		}
		p.Groups = append(p.Groups, g)
		if g.Count == 0 || static {
			continue
		}
		gf := sf
		gf.Verdict = v
		if p.Single {
			gf.Limit, gf.From = pageSize, f.From
			if p.Capped {
				gf.Limit = pageSize + 1 // the extra row says whether a next page exists
			}
			if f.From == 0 && f.Page > 1 {
				seq, ok, err := s.db.SeqAt(ctx, id, gf, (f.Page-1)*pageSize)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
				gf.From = seq
			}
		} else {
			gf.Limit = groupPreview
		}
		entries, err := s.db.Entries(ctx, id, gf)
		if err != nil {
			return nil, err
		}
		if p.Single && p.Capped && len(entries) > pageSize {
			entries, more = entries[:pageSize], true
		}
		groups = append(groups, shown{g, entries})
		if !p.Single && g.Count > len(entries) {
			g.More = g.Count - len(entries)
			g.MoreURL = f.URL("verdict", string(v), "page", "")
		}
	}
	var all []store.Entry
	for _, sg := range groups {
		all = append(all, sg.entries...)
	}
	lk, err := s.lookups(ctx, d, all)
	if err != nil {
		return nil, err
	}
	lastSeq := -1
	for _, sg := range groups {
		for _, e := range sg.entries {
			sg.g.Rows = append(sg.g.Rows, s.row(d, lk, e, f, static))
			lastSeq = max(lastSeq, e.Seq)
		}
	}
	if p.Single && !static && p.Capped {
		// The count is a lower bound: no last page, a keyset Next link.
		p.Pager = pager{Page: f.Page, Open: true}
		if f.Page > 1 {
			p.Pager.Prev = f.URL("page", strconv.Itoa(f.Page-1))
		}
		if more && lastSeq >= 0 {
			p.Pager.Next = f.URL("page", strconv.Itoa(f.Page+1), "from", strconv.Itoa(lastSeq+1))
		}
	} else if p.Single && !static {
		pages := max(1, (p.Total+pageSize-1)/pageSize)
		p.Pager = pager{Page: f.Page, Pages: pages}
		if f.Page > 1 {
			p.Pager.Prev = f.URL("page", strconv.Itoa(f.Page-1))
		}
		if f.Page < pages && lastSeq >= 0 {
			p.Pager.Next = f.URL("page", strconv.Itoa(f.Page+1), "from", strconv.Itoa(lastSeq+1))
		}
	}
	if p.Checks, err = checks(sum, stored); err != nil {
		return nil, err
	}
	if p.Gold, err = s.goldPanel(ctx, id, f, static); err != nil {
		return nil, err
	}
	if p.Models, err = models(sum, stored); err != nil {
		return nil, err
	}
	p.Models.URL = p.DisagreeURL
	if static {
		p.Models.URL = "#disagree"
	}
	if p.Breakdown, err = s.breakdown(ctx, d, sum, f, static); err != nil {
		return nil, err
	}
	p.Breakdown.Capped, p.Breakdown.CapN = p.Capped, p.CapN
	if d.info.Tally.Rejected > 0 {
		rej, err := s.db.Rejects(ctx, id)
		if err != nil {
			return nil, err
		}
		p.Rejects = rejectsView{Count: d.info.Tally.Rejected, Rows: rej}
		if len(rej) > 100 && !static {
			p.Rejects.Rows, p.Rejects.More = rej[:100], len(rej)-100
		}
	}
	return p, nil
}

// summaryFor is s.summary, computing and storing the summary first for a
// committed run that has none and is small (at most summarizeOnView records:
// a run judged before migration 0005), so its panels fill in; a larger one is
// counted with SQL and its panels say the summary is missing.
func (s *Server) summaryFor(ctx context.Context, d *runData) (store.RunSummary, bool, error) {
	sum, stored, err := s.summary(ctx, d)
	if err != nil || stored || d.live || sum.Records > summarizeOnView || sum.Records != d.info.Tally.Judged {
		// A live run's summary is never stored (it grows): computing it
		// on each view ran the checks over its dataset's whole turn table.
		return sum, stored, err
	}
	if fresh, err := summarizeRun(ctx, s.db, d.info); err == nil {
		return fresh, true, nil
	}
	return sum, false, nil
}

// summarizeOnView is the largest run whose missing summary the screen
// computes on first view.
//
// summarizeRun is runstore.Summarize (tests count its calls).
const summarizeOnView = 20000

var summarizeRun = runstore.Summarize

func groupValues(gs []store.GroupCount) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Value
	}
	return out
}

// characterLabel is "name · id" when the card names the character.
func (d *runData) characterLabel(v string) string {
	if c, ok := d.cards[v]; ok && c.Name != "" {
		return c.Name + " · " + v
	}
	return v
}

// pageLookups is what the rows of one page need besides their records.
type pageLookups struct {
	turns map[string]persona.Turn
	gold  map[string]store.Gold
}

func (s *Server) lookups(ctx context.Context, d *runData, entries []store.Entry) (pageLookups, error) {
	recs := make([]*persona.Record, len(entries))
	for i := range entries {
		recs[i] = &entries[i].Record
	}
	turns, err := s.pageTurns(ctx, d, recs)
	if err != nil {
		return pageLookups{}, err
	}
	gold, err := s.pageGold(ctx, recs)
	if err != nil {
		return pageLookups{}, err
	}
	return pageLookups{turns: turns, gold: gold}, nil
}

func head(d *runData) runHead {
	h := runHead{ID: d.info.ID, DatasetID: d.info.DatasetID, Started: localTime(d.info.StartedAt),
		Profile: d.info.Profile, Judged: d.info.Tally.Judged, Rejected: d.info.Tally.Rejected}
	var endings, exceptions []string
	for _, e := range d.info.Endings { // runstore.Endings: exceptions carry a '!'
		if x, ok := strings.CutPrefix(e, "!"); ok {
			exceptions = append(exceptions, x)
		} else {
			endings = append(endings, e)
		}
	}
	h.Endings, h.Exceptions = strings.Join(endings, " · "), strings.Join(exceptions, " · ")
	if d.dataset != nil {
		h.Dataset = d.dataset.Name
	}
	for _, v := range persona.Verdicts {
		h.ByVerdict = append(h.ByVerdict, verdictCount{string(v), verdictClass[v], d.info.Tally.ByVerdict[v]})
	}
	return h
}

func localTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04")
}

// share is k of n as a percentage with one decimal, "–" when n is 0.
func share(k, n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(k)/float64(n))
}

// summarySource says whose summary a row shows and, when a model's rewrite
// was thrown away, what threw it away (issue 4: the sidecar on screen).
func summarySource(e store.Entry) string {
	switch {
	case e.SummarySource == persona.SummaryModel:
		return "모델이 고쳐 쓰고 검사를 통과한 문장"
	case e.SummarySource == persona.SummaryRule && e.SummaryRejectedBy != "":
		return "규칙이 쓴 기본 문장 (모델 요약은 「" + e.SummaryRejectedBy + "」에서 걸려 되돌림)"
	case e.SummarySource == persona.SummaryRule:
		return "규칙이 쓴 기본 문장"
	}
	return ""
}

func (s *Server) row(d *runData, lk pageLookups, e store.Entry, f filterView, static bool) rowView {
	r := &e.Record
	v := rowView{TurnID: r.TurnID, SessionID: r.SessionID, CharacterID: r.CharacterID, ModelID: r.ModelID,
		Verdict: string(r.Verdict), Class: verdictClass[r.Verdict], Anchor: "t-" + r.TurnID,
		Summary: r.Summary, Open: f.Turn != "" && f.Turn == r.TurnID}
	if !static {
		v.Link = f.URL("turn", r.TurnID, "verdict", "", "q", "", "page", "")
	}
	if c, ok := d.cards[r.CharacterID]; ok {
		v.Character = c.Name
	}
	v.SummarySource = summarySource(e)
	if r.RuleExpected != nil {
		v.Expected = *r.RuleExpected
	}
	if r.RuleObserved == nil {
		v.ObservedNull = true
		v.Skipped = append(v.Skipped, "말투 대조 건너뜀")
	} else {
		v.Observed = *r.RuleObserved
	}
	if r.OffCanonEntities == nil {
		v.OffCanonNull = true
		v.Skipped = append(v.Skipped, "세계관 대조 건너뜀")
	} else {
		v.OffCanon = r.OffCanonEntities
	}
	if r.TouchedTerm != nil {
		v.Touched, v.TouchedTerm = true, *r.TouchedTerm
		if r.TouchedTopic != nil {
			v.TouchedTopic = *r.TouchedTopic
		} else {
			v.TouchedAllowed = true
		}
	}
	if r.RecallTarget != nil {
		v.RecallTarget = *r.RecallTarget
	}
	if r.RecallSourceTurn != nil {
		v.RecallSource = *r.RecallSourceTurn
		if !static {
			v.RecallLink = f.URL("turn", v.RecallSource, "verdict", "", "q", "", "page", "")
		} else {
			v.RecallLink = "#t-" + v.RecallSource
		}
	}
	if r.Hedge != nil {
		v.Hedge = *r.Hedge
	}
	t, hasTurn := lk.turns[r.TurnID]
	reply, ok := r.JudgedReply()
	if hasTurn {
		ok = t.ReplyText != nil
		reply = deref(t.ReplyText)
	}
	if ok {
		v.Reply = shownSegments(reply, replySpans(r, reply))
	} else {
		v.ReplyNull = true
	}
	if hasTurn {
		v.AskedRecall = t.UserAskedRecall
		if t.UserMessage != nil {
			v.HasUserMessage, v.UserMessage = true, shownText(*t.UserMessage)
		}
	}
	if v.RecallSource != "" && v.RecallTarget != "" {
		if src, ok := lk.turns[v.RecallSource]; ok && src.ReplyText != nil {
			v.SourceReply = shownSegments(*src.ReplyText, occurrences(*src.ReplyText, v.RecallTarget, markRecall, "앞 회차에 나온 이름"))
		}
	}
	for _, ev := range r.Evidence {
		row := evidenceRow{Source: string(ev.Source), Field: ev.Field, Agg: string(ev.Agg)}
		row.Value, row.Null = cell(ev.Value)
		row.Value = shownText(row.Value)
		v.Evidence = append(v.Evidence, row)
	}
	if g, ok := lk.gold[r.TurnID]; ok {
		v.Gold, v.GoldNote, v.GoldClass = string(g.Verdict), g.Note, verdictClass[g.Verdict]
	}
	return v
}

// cell renders an evidence value as written; null is flagged.
func cell(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case string:
		return x, false
	case bool:
		return strconv.FormatBool(x), false
	case int:
		return strconv.Itoa(x), false
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), false
	}
	return fmt.Sprint(v), false
}

// ---- panels --------------------------------------------------------------------

type checksView struct {
	Err        string
	Records    int
	Items      []checkItem
	SchemaFail int
	Unreadable int
	AllPass    bool
	Failures   []batch.Failure
	More       int
}

type checkItem struct {
	N          int
	Name       string
	Pass, Fail int
}

// noSummary is what the whole-run panels say for a run without a stored
// summary (a run still growing, or a large run judged before migration 0005).
const noSummary = "이 실행의 요약이 아직 저장되지 않아(판정이 이어지는 중이거나 예전 저장소의 큰 실행) 이 칸을 채우지 못했습니다. 같은 데이터셋을 다시 판정하면 채워집니다. 라이브 실행은 턴이 올 때마다 자라므로 채워지지 않습니다."

func checks(sum store.RunSummary, stored bool) (checksView, error) {
	if !stored {
		return checksView{Err: noSummary}, nil
	}
	sc, err := storedChecks(sum)
	if err != nil {
		return checksView{}, err
	}
	if sc == nil {
		return checksView{Err: "이 실행은 저장된 입력 표와 이어져 있지 않아 자동 검사를 다시 돌릴 수 없습니다 (" + sum.ChecksErr + ")."}, nil
	}
	rep := &sc.Report
	v := checksView{Records: rep.Records, SchemaFail: rep.SchemaFail, Unreadable: rep.Unreadable, AllPass: sc.Failures == 0}
	for i, name := range persona.CheckNames {
		v.Items = append(v.Items, checkItem{N: i + 1, Name: name, Pass: rep.Pass[i], Fail: rep.Fail[i]})
	}
	v.Failures = rep.Failures
	if len(v.Failures) > 10 {
		v.Failures = v.Failures[:10]
	}
	v.More = sc.Failures - len(v.Failures)
	return v, nil
}

type goldView struct {
	Empty         bool
	Why           string
	Stored        int // labels in the store
	N, Agreed     int
	Agreement     string
	Interval      string
	Kappa         string
	Labels        []string
	LabelTitles   []string
	Matrix        []matrixRow
	Disagreements []goldGroup
	Missing       int
}

type matrixRow struct {
	Label string
	Cells []matrixCell
	Total int
}

type matrixCell struct {
	N    int
	Diag bool
}

type goldGroup struct {
	Gold, Predicted, GoldClass, PredClass, Detail string
	Count                                         int
	Turns                                         []turnLink
}

type turnLink struct{ ID, URL string }

// goldPanel is self-grading against the stored gold labels, computed at view
// time (gold can change any time): the labels are joined to the run by the
// UNIQUE (run_id, turn_id) index (store.GoldRecords), so the work grows with
// the number of labels, not with the run.
func (s *Server) goldPanel(ctx context.Context, runID int64, f filterView, static bool) (goldView, error) {
	stored, err := s.db.GoldCount(ctx)
	if err != nil {
		return goldView{}, err
	}
	var labels []evalrun.Gold
	var recs []persona.Record
	if stored > 0 {
		err := s.db.GoldRecords(ctx, runID, func(r persona.Record, g store.Gold) error {
			labels = append(labels, evalrun.Gold{TurnID: g.TurnID, Verdict: g.Verdict, Note: g.Note})
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			return goldView{}, err
		}
	}
	v := goldView{Stored: stored}
	if len(labels) == 0 {
		v.Empty = true
		if stored == 0 {
			v.Why = "사람이 붙인 정답 라벨이 아직 없어 자가채점 칸을 비워 둡니다. 출처를 댈 수 없는 숫자를 예측 화면에 두지 않기 위해서입니다."
		} else {
			v.Why = fmt.Sprintf("저장된 정답 라벨 %d건 가운데 이 실행의 회차에 붙은 것이 없어 자가채점 칸을 비워 둡니다. 출처를 댈 수 없는 숫자를 예측 화면에 두지 않기 위해서입니다.", stored)
		}
		return v, nil
	}
	rep := evalrun.Evaluate(labels, recs)
	v.N, v.Agreed, v.Missing = rep.N, rep.Agreed, len(rep.Missing)
	if rep.Agreement != nil {
		v.Agreement = fmt.Sprintf("%.1f %%", 100**rep.Agreement)
	}
	if rep.Interval != nil {
		v.Interval = fmt.Sprintf("%.1f – %.1f %%", 100*rep.Interval.Lo, 100*rep.Interval.Hi)
	}
	if rep.Kappa != nil {
		v.Kappa = fmt.Sprintf("%.3f", *rep.Kappa)
	} else {
		v.Kappa = "정의되지 않음"
	}
	for i, l := range rep.Labels {
		v.Labels = append(v.Labels, shortVerdict[l])
		v.LabelTitles = append(v.LabelTitles, string(l))
		row := matrixRow{Label: shortVerdict[l]}
		for j, n := range rep.Confusion[i] {
			row.Cells = append(row.Cells, matrixCell{N: n, Diag: i == j})
			row.Total += n
		}
		v.Matrix = append(v.Matrix, row)
	}
	for _, g := range rep.Disagreements {
		gg := goldGroup{Gold: string(g.Gold), Predicted: string(g.Predicted), GoldClass: verdictClass[g.Gold],
			PredClass: verdictClass[g.Predicted], Detail: g.Detail, Count: g.Count}
		for _, id := range g.TurnIDs {
			u := "#t-" + id
			if !static {
				u = f.URL("turn", id, "verdict", "", "q", "", "page", "", "character", "", "model", "", "session", "")
			}
			gg.Turns = append(gg.Turns, turnLink{ID: id, URL: u})
		}
		v.Disagreements = append(v.Disagreements, gg)
	}
	return v, nil
}

type modelsView struct {
	Missing string // no stored summary: why the panel is empty
	URL     string // the models-disagree view
	Prompts int
	Rows    []modelRow
	Pairs   []pairRow
	Differ  int
}

type modelRow struct {
	Model          string
	N, Mismatches  int
	Rate, Interval string
}

type pairRow struct {
	A, B             string
	N, Both, Neither int
	OnlyA, OnlyB     int
	P                string
	Significant      bool
}

func models(sum store.RunSummary, stored bool) (modelsView, error) {
	if !stored {
		return modelsView{Missing: noSummary}, nil
	}
	rep, err := storedModels(sum)
	if err != nil {
		return modelsView{}, err
	}
	v := modelsView{Prompts: rep.Prompts}
	for _, m := range rep.Models {
		v.Rows = append(v.Rows, modelRow{Model: m.Model, N: m.N, Mismatches: m.Mismatches,
			Rate:     fmt.Sprintf("%.1f %%", 100*m.Rate),
			Interval: fmt.Sprintf("%.1f – %.1f %%", 100*m.Interval.Lo, 100*m.Interval.Hi)})
	}
	for _, p := range rep.Pairs {
		v.Pairs = append(v.Pairs, pairRow{A: p.ModelA, B: p.ModelB, N: p.N, Both: p.Both, Neither: p.Neither,
			OnlyA: p.B, OnlyB: p.C, P: formatP(p.P), Significant: p.P < 0.05})
	}
	v.Differ = sum.Disagree[""].Prompts
	return v, nil
}

// breakdownView is the side panel of counts per character and per model. It
// follows the filter (counted with GROUP BY on the filter indexes); without
// one it is the summary's. Values with no matching turn are left out.
type breakdownView struct {
	Filtered          bool
	Capped            bool // the counts cover the first CapN matching turns (runPage.Capped)
	CapN              string
	Characters, Model []breakRow
	MoreCharacters    int
	MoreModels        int
}

type breakRow struct {
	Value, Label, URL string
	Total             int
	Counts            []verdictCount
}

// breakdownRows caps the rows of each breakdown table.
const breakdownRows = 30

func (s *Server) breakdown(ctx context.Context, d *runData, sum store.RunSummary, f filterView, static bool) (breakdownView, error) {
	v := breakdownView{Filtered: f.Active()}
	chars, mods := sum.Characters, sum.Models
	if f.Active() {
		var err error
		if chars, err = s.db.CountBy(ctx, d.info.ID, "character", f.store()); err != nil {
			return v, err
		}
		if mods, err = s.db.CountBy(ctx, d.info.ID, "model", f.store()); err != nil {
			return v, err
		}
	}
	rows := func(gs []store.GroupCount, key string, label func(string) string) ([]breakRow, int) {
		var out []breakRow
		for _, g := range gs {
			if g.Total == 0 {
				continue
			}
			if len(out) == breakdownRows {
				return out, len(gs) - breakdownRows
			}
			r := breakRow{Value: g.Value, Label: label(g.Value), Total: g.Total}
			if !static {
				r.URL = f.URL(key, g.Value, "page", "", "turn", "")
			}
			for _, vd := range persona.Verdicts {
				r.Counts = append(r.Counts, verdictCount{string(vd), verdictClass[vd], g.ByVerdict[vd]})
			}
			out = append(out, r)
		}
		return out, 0
	}
	v.Characters, v.MoreCharacters = rows(chars, "character", d.characterLabel)
	v.Model, v.MoreModels = rows(mods, "model", func(s string) string { return s })
	return v, nil
}

// thousands writes n with a comma every three digits (10000: "10,000").
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// formatP writes a p-value for people: three decimals, or a power of ten
// below 0.001.
func formatP(p float64) string {
	if p >= 0.001 {
		return fmt.Sprintf("%.3f", p)
	}
	if p <= 0 {
		return "0"
	}
	exp := int(math.Floor(math.Log10(p)))
	mant := p / math.Pow(10, float64(exp))
	if mant >= 9.95 {
		mant, exp = 1, exp+1
	}
	return fmt.Sprintf("%.1f×10%s", mant, superscript(exp))
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	s := strconv.Itoa(n)
	var b strings.Builder
	for _, c := range s {
		if c == '-' {
			b.WriteString("⁻")
			continue
		}
		b.WriteString(string([]rune(digits)[c-'0']))
	}
	return b.String()
}

type rejectsView struct {
	Count int
	Rows  []persona.Reject
	More  int
}

// ---- models disagree ---------------------------------------------------------

type disagreePage struct {
	RunID      int64
	Run        runHead
	Character  string
	Characters []option
	Models     []string
	Shared     int
	Total      int // disagreeing prompts of the scope
	Items      []disagreeItem
	Missing    string // no stored summary: why the page is empty
	Pager      pager
	More       int // the report only: prompts left out by its cap
	BackURL    string
}

type disagreeItem struct {
	PromptID    string
	UserMessage string
	Cells       []disagreeCell
}

type disagreeCell struct {
	Model                  string
	Has                    bool
	TurnID, Verdict, Class string
	Summary, Link          string
	Reply                  []Segment
	ReplyNull              bool
}

// disagreePageSize is how many prompts one page of the models-disagree list
// shows.
const disagreePageSize = 50

// disagreements lays out one page of the prompts answered by several models
// whose verdicts differ (evalrun.FindDisagreements' rule, precomputed per
// scope at judge time: runstore.Summarize), optionally for one character,
// in the order the prompts first appear: prompts [offset, offset+limit).
// Each prompt's records are read through the verdict_by_prompt index.
func (s *Server) disagreements(ctx context.Context, d *runData, sum store.RunSummary, stored bool, character string,
	offset, limit int, link func(turnID string) string) (*disagreePage, error) {
	out := &disagreePage{RunID: d.info.ID, Character: character}
	if !stored {
		out.Missing = noSummary
		return out, nil
	}
	st := sum.Disagree[character]
	out.Shared, out.Total, out.Models = st.Shared, st.Prompts, st.Models
	ids, err := s.db.Disagreements(ctx, d.info.ID, character, offset, limit)
	if err != nil {
		return nil, err
	}
	type cellAt struct {
		item, cell int
		e          store.Entry
	}
	var firsts []cellAt
	for i, pid := range ids {
		entries, err := s.db.PromptEntries(ctx, d.info.ID, pid, character)
		if err != nil {
			return nil, err
		}
		first := map[string]store.Entry{}
		for _, e := range entries {
			if _, dup := first[e.Record.ModelID]; !dup {
				first[e.Record.ModelID] = e
			}
		}
		it := disagreeItem{PromptID: pid}
		for j, m := range out.Models {
			it.Cells = append(it.Cells, disagreeCell{Model: m})
			if e, ok := first[m]; ok {
				firsts = append(firsts, cellAt{i, j, e})
			}
		}
		out.Items = append(out.Items, it)
	}
	recs := make([]*persona.Record, len(firsts))
	for i := range firsts {
		recs[i] = &firsts[i].e.Record
	}
	turns, err := s.pageTurns(ctx, d, recs)
	if err != nil {
		return nil, err
	}
	for _, fc := range firsts {
		r := &fc.e.Record
		it := &out.Items[fc.item]
		c := &it.Cells[fc.cell]
		c.Has, c.TurnID, c.Verdict, c.Class, c.Summary = true, r.TurnID, string(r.Verdict), verdictClass[r.Verdict], r.Summary
		c.Link = link(r.TurnID)
		t, hasTurn := turns[r.TurnID]
		reply, ok := r.JudgedReply()
		if hasTurn {
			reply, ok = deref(t.ReplyText), t.ReplyText != nil
		}
		if ok {
			c.Reply = shownSegments(reply, replySpans(r, reply))
		} else {
			c.ReplyNull = true
		}
		if it.UserMessage == "" && hasTurn && t.UserMessage != nil {
			it.UserMessage = shownText(*t.UserMessage)
		}
	}
	return out, nil
}
