package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"time"

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
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		s.opt.Log.Printf("web: render %s: %v", name, err)
		http.Error(w, "화면을 그리지 못했습니다", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
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

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return
	}
	d, err := s.run(r.Context(), id)
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
	d, err := s.run(r.Context(), id)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	character := r.URL.Query().Get("character")
	p := disagreements(d, character, func(t string) string { return fmt.Sprintf("/runs/%d?turn=%s", id, queryEscape(t)) })
	p.Run = head(d)
	p.BackURL = fmt.Sprintf("/runs/%d", id)
	facets, err := s.db.Facets(r.Context(), id)
	if err != nil {
		s.storeFail(w, r, err)
		return
	}
	p.Characters = options(facets.Characters, character, func(v string) string {
		if c, ok := d.cards[v]; ok && c.Name != "" {
			return c.Name + " · " + v
		}
		return v
	})
	s.render(w, r, http.StatusOK, "disagree", p)
}

// reportDownload serves the static report of a run as a file.
func (s *Server) reportDownload(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, "찾는 실행이 없습니다", "실행 번호는 1 이상의 정수입니다.")
		return
	}
	var buf bytes.Buffer
	if err := s.writeReport(r.Context(), id, &buf); err != nil {
		s.storeFail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="evident-run-%d.html"`, id))
	w.Write(buf.Bytes())
}

// WriteReport writes run id of db as one self-contained HTML file: the same
// screen with every row, the panels and the models-disagree list, the CSS
// inlined, no script and no reference to any other file or site.
func WriteReport(ctx context.Context, db *store.DB, id int64, w io.Writer) error {
	s, err := New(db, Options{})
	if err != nil {
		return err
	}
	return s.writeReport(ctx, id, w)
}

func (s *Server) writeReport(ctx context.Context, id int64, w io.Writer) error {
	d, err := s.run(ctx, id)
	if err != nil {
		return err
	}
	p, err := s.buildRun(ctx, d, filterView{Page: 1}, true)
	if err != nil {
		return err
	}
	p.Disagree = disagreements(d, "", func(t string) string { return "#t-" + t })
	v := view{Title: fmt.Sprintf("evident 판정 보고서 · 실행 #%d", id), Static: true, CSS: template.CSS(s.css), Nav: "run",
		RunID: id, Generated: time.Now().Format("2006-01-02 15:04 MST"), Page: p}
	var buf bytes.Buffer
	if err := s.pages["run"].ExecuteTemplate(&buf, "layout", v); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}
