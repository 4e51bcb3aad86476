package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"evident/persona"
	"evident/store"
)

// render executes page name with data into a buffer first, so a template
// error becomes a clean 500 instead of half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, page any) {
	v := s.view(r, page)
	if rp, ok := page.(*runPage); ok {
		v.Title, v.Nav, v.RunID = fmt.Sprintf("실행 #%d", rp.Run.ID), "run", rp.Run.ID
	}
	if dp, ok := page.(*disagreePage); ok {
		v.Title, v.Nav, v.RunID = fmt.Sprintf("모델끼리 갈린 프롬프트 · 실행 #%d", dp.RunID), "disagree", dp.RunID
	}
	switch pg := page.(type) {
	case *reviewPage:
		v.Title, v.Nav, v.RunID = fmt.Sprintf("검토 · %s · 실행 #%d", tabLabel(pg.Slug), pg.Run.ID), "review", pg.Run.ID
	case *runsPage:
		v.Title, v.Nav, v.RunID = "실행 목록", "runs", pg.Latest
	case *uploadPage:
		v.Title, v.Nav, v.RunID = "올리기", "upload", pg.RunID
	case *loginPage:
		v.Title = "로그인"
	case *errorPage:
		v.Title = pg.Title
		if pg.English {
			v.Lang, v.Nav = "en", "crystal"
		}
	case *crystalRunsPage:
		v.Title, v.Nav, v.Lang = "CRYSTAL runs", "crystal", "en"
	case *crystalRunPage:
		v.Title, v.Nav, v.Lang = "CRYSTAL · "+pg.Run.Name, "crystal", "en"
	case *crystalItemPage:
		v.Title, v.Nav, v.Lang = fmt.Sprintf("CRYSTAL · %s · %s", pg.ID, pg.Model), "crystal", "en"
	}
	s.renderView(w, status, name, v)
}

func (s *Server) view(r *http.Request, page any) view {
	v := view{CSRF: s.csrfToken(r), Page: page}
	v.LoggedIn = s.opt.Token != "" && s.authed(r, sidOf(r))
	return v
}

type errorPage struct {
	Title, Detail string
	Status        int
	English       bool // a CRYSTAL page's error: English, back to /crystal
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	if status >= 500 {
		s.opt.Log.Printf("web: %s %s: %s: %s", r.Method, r.URL.Path, title, detail)
	}
	if r.Context().Value(sidKey) == nil { // before the session layer: no forms on this page
		r = r.WithContext(context.WithValue(r.Context(), sidKey, ""))
	}
	s.render(w, r, status, "error", &errorPage{Title: title, Detail: detail, Status: status})
}

// storeFail answers a store error: 404 for a missing run, 500 otherwise.
func (s *Server) storeFail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "주소의 실행 번호를 확인하거나 실행 목록에서 고르세요.")
		return
	}
	s.fail(w, r, http.StatusInternalServerError, "저장소를 읽지 못했습니다", err.Error())
}

func runID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id, err == nil && id > 0
}

// home opens the latest run, or the upload form when there is none.
func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	run, err := s.db.LatestRun(r.Context())
	if errors.Is(err, store.ErrNotFound) {
		http.Redirect(w, r, "/upload", http.StatusSeeOther)
		return
	}
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/runs/%d", run.ID), http.StatusSeeOther)
}

// badVerdict answers 400 when the query's verdict is set but is not one of
// the five (a typo in a shared link must not read as "no filter"); ok is
// false then.
func (s *Server) badVerdict(w http.ResponseWriter, r *http.Request) (ok bool) {
	v := r.URL.Query().Get("verdict")
	if v == "" || persona.Verdict(v).Valid() {
		return true
	}
	names := make([]string, len(persona.Verdicts))
	for i, x := range persona.Verdicts {
		names[i] = string(x)
	}
	s.fail(w, r, http.StatusBadRequest, "판정 값이 다섯 가운데 하나가 아닙니다",
		fmt.Sprintf("verdict=%q 는 알 수 없는 판정입니다. 쓸 수 있는 값: %s.", v, strings.Join(names, ", ")))
	return false
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return
	}
	if !s.badVerdict(w, r) {
		return
	}
	d, err := s.head(r.Context(), id)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	p, err := s.buildRun(r.Context(), d, parseFilter("", r.URL.Query()), false)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "run", p)
}

func (s *Server) disagreePage(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return
	}
	ctx := r.Context()
	d, err := s.head(ctx, id)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	sum, stored, err := s.summaryFor(ctx, d)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	q := r.URL.Query()
	character := strings.TrimSpace(q.Get("character"))
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	p, err := s.disagreements(ctx, d, sum, stored, character, (page-1)*disagreePageSize, disagreePageSize,
		func(t string) string { return fmt.Sprintf("/runs/%d?turn=%s", id, queryEscape(t)) })
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	p.Run = head(d)
	p.BackURL = fmt.Sprintf("/runs/%d", id)
	base := fmt.Sprintf("/runs/%d/disagree", id)
	pageURL := func(n int) string {
		var parts []string
		if character != "" {
			parts = append(parts, "character="+queryEscape(character))
		}
		if n > 1 {
			parts = append(parts, "page="+strconv.Itoa(n))
		}
		if len(parts) == 0 {
			return base
		}
		return base + "?" + strings.Join(parts, "&")
	}
	p.Pager = pager{Page: page, Pages: max(1, (p.Total+disagreePageSize-1)/disagreePageSize)}
	if page > 1 {
		p.Pager.Prev = pageURL(page - 1)
	}
	if page < p.Pager.Pages {
		p.Pager.Next = pageURL(page + 1)
	}
	p.Characters = options(groupValues(sum.Characters), character, d.characterLabel)
	s.render(w, r, http.StatusOK, "disagree", p)
}

// reportDownload serves the static report of a run as a file, for the
// filter in the query string (the run screen's), streamed as it is written.
func (s *Server) reportDownload(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return
	}
	if !s.badVerdict(w, r) {
		return
	}
	if _, err := s.head(r.Context(), id); err != nil {
		s.storeFail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="evident-run-%d.html"`, id))
	bw := bufio.NewWriterSize(w, 64<<10)
	f := parseFilter("", r.URL.Query())
	if err := s.writeReport(r.Context(), id, bw, ReportOptions{Filter: f.store()}); err != nil {
		// Headers are gone: the file ends early; say so in the log.
		s.opt.Log.Printf("web: report of run %d: %v", id, err)
		return
	}
	bw.Flush()
}

// ReportCap is the default cap on the turns of one static report (issue 13:
// a single file with a clear cap).
const ReportCap = 20000

// reportDisagreeCap caps the models-disagree prompts of one report.
const reportDisagreeCap = 1000

// ReportOptions choose what a static report holds.
type ReportOptions struct {
	// Filter narrows the turns (its Limit, Offset and From are ignored); the
	// zero Filter is the whole run.
	Filter store.Filter
	// Cap is the most turns written, the first Cap of the filter in run
	// order; 0 means ReportCap. The report says how many matched and how to
	// get the rest (the JSON Lines export, or a narrower filter).
	Cap int
}

// ReportFilter parses the run screen's query string ("verdict=…&character=…";
// keys character, model, session, verdict, q, turn) into the filter of a
// report (evident report --filter). An unknown key, a verdict that is not
// one of the five or a query that does not parse is an error naming it.
func ReportFilter(query string) (store.Filter, error) {
	q, err := url.ParseQuery(query)
	if err != nil {
		return store.Filter{}, fmt.Errorf("--filter %q: %w", query, err)
	}
	for k := range q {
		switch k {
		case "character", "model", "session", "verdict", "q", "turn":
		default:
			return store.Filter{}, fmt.Errorf("--filter %q: unknown key %q (character, model, session, verdict, q, turn)", query, k)
		}
	}
	if v := q.Get("verdict"); v != "" && !persona.Verdict(v).Valid() {
		return store.Filter{}, fmt.Errorf("--filter %q: verdict %q is not one of the five", query, v)
	}
	return parseFilter("", q).store(), nil
}

// reportCap is what the report says about its cap.
type reportCap struct {
	Capped        bool
	Cap, Matched  int
	ExportURL     string
	DisagreeShown int
}

// WriteReport writes run id of db as one self-contained HTML file (the first
// ReportCap turns of the run); see WriteReportWith.
func WriteReport(ctx context.Context, db *store.DB, id int64, w io.Writer) error {
	return WriteReportWith(ctx, db, id, w, ReportOptions{})
}

// WriteReportWith writes run id of db as one self-contained HTML file: the
// run screen with the first o.Cap turns of o.Filter in run order, grouped by
// verdict, the panels and the first 1,000 models-disagree prompts, the CSS
// inlined, no script and no reference to any other file or site. It is
// written as it is read — rows a page at a time from the store, each row's
// template straight into w — so memory does not grow with the run; w should
// be buffered. An error part way leaves w holding a partial file.
func WriteReportWith(ctx context.Context, db *store.DB, id int64, w io.Writer, o ReportOptions) error {
	s, err := New(db, Options{})
	if err != nil {
		return err
	}
	return s.writeReport(ctx, id, w, o)
}

// reportPage is how many records the report reads per query.
const reportPage = 500

func (s *Server) writeReport(ctx context.Context, id int64, w io.Writer, o ReportOptions) error {
	d, err := s.head(ctx, id)
	if err != nil {
		return err
	}
	capN := o.Cap
	if capN <= 0 {
		capN = ReportCap
	}
	sf := o.Filter
	sf.Limit, sf.Offset, sf.From = 0, 0, 0
	f := filterView{Character: sf.Character, Model: sf.Model, Session: sf.Session, Verdict: string(sf.Verdict),
		Q: sf.Text, Turn: sf.TurnID, Page: 1}
	p, err := s.buildRun(ctx, d, f, true)
	if err != nil {
		return err
	}
	p.Report = reportCap{Cap: capN, Matched: p.Total, ExportURL: p.ExportURL}
	// Only turns before the cap's last one: count each group again below it.
	until := 0
	if p.Total > capN {
		seq, ok, err := s.db.SeqAt(ctx, id, sf, capN)
		if err != nil {
			return err
		}
		if ok {
			until = seq
			p.Report.Capped = true
			capped := sf
			capped.Until = until
			counts, err := s.db.CountByVerdict(ctx, id, capped)
			if err != nil {
				return err
			}
			for _, g := range p.Groups {
				g.Count = counts[persona.Verdict(g.Verdict)]
			}
		}
	}
	var streamErr error
	for _, g := range p.Groups {
		if g.Count == 0 {
			continue
		}
		gf := sf
		gf.Verdict, gf.Until, gf.Limit = persona.Verdict(g.Verdict), until, reportPage
		g.Stream = func(yield func(rowView) bool) {
			for from := 0; streamErr == nil; {
				gf.From = from
				entries, err := s.db.Entries(ctx, id, gf)
				if err != nil {
					streamErr = err
					return
				}
				lk, err := s.lookups(ctx, d, entries)
				if err != nil {
					streamErr = err
					return
				}
				for _, e := range entries {
					if !yield(s.row(d, lk, e, f, true)) {
						return
					}
				}
				if len(entries) < reportPage {
					return
				}
				from = entries[len(entries)-1].Seq + 1
			}
		}
	}
	sum, stored, err := s.summaryFor(ctx, d)
	if err != nil {
		return err
	}
	if p.Disagree, err = s.disagreements(ctx, d, sum, stored, "", 0, reportDisagreeCap, func(t string) string { return "#t-" + t }); err != nil {
		return err
	}
	p.Disagree.More = p.Disagree.Total - len(p.Disagree.Items)
	v := view{Title: fmt.Sprintf("evident 판정 보고서 · 실행 #%d", id), Static: true, CSS: template.CSS(s.css), Nav: "run",
		RunID: id, Generated: time.Now().Format("2006-01-02 15:04 MST"), Page: p}
	if err := s.pages["run"].ExecuteTemplate(w, "layout", v); err != nil {
		return err
	}
	return streamErr
}
