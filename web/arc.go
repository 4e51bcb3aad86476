package web

// The ARC view (issue 11 item 6; package doc, "ARC"): agent runs of
// ARC-AGI-3 games read from a folder of workspaces. Per run the RHAE table
// (evident/arc/score, as `evident arc score` computes it), the levels and
// attempts of client/session, each step's frame with its action and the
// intermediate frames, the mismatch folders, the transcript the controller
// wrote (evident/arc/agent) and the git snapshot of every iteration. This
// file lays the pages out; arc_read.go reads the files.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"evident/arc/agent"
	"evident/arc/frame"
	"evident/arc/planexec"
	"evident/arc/session"
)

// Page sizes of the ARC view.
const (
	arcRunsPer       = 100
	arcStepsPer      = 50
	arcEntriesPer    = 50
	arcSnapshotsPer  = 100
	arcMismatchesPer = 20
)

// arcSource is the configured ARC folder (Options.ARC).
type arcSource struct {
	dir    string   // absolute path, for the page only
	root   *os.Root // every file is opened through it
	single string   // the folder is itself a workspace: its one run's name
}

// arcPages are the ARC view's templates, one set per page.
var arcPageNames = []string{"arc_runs", "arc_run", "arc_attempt", "arc_transcript", "arc_snapshots", "arc_mismatches", "arc_error"}

// arcSetup opens Options.ARC (when set), parses the ARC templates and
// registers the routes on m.
func (s *Server) arcSetup(m *http.ServeMux) error {
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html",
		"templates/arc_parts.html")
	if err != nil {
		return err
	}
	s.arcPages = map[string]*template.Template{}
	for _, name := range arcPageNames {
		t, err := base.Clone()
		if err != nil {
			return err
		}
		if _, err := t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return err
		}
		s.arcPages[name] = t
	}
	if s.opt.ARC != "" {
		src, err := openARC(s.opt.ARC)
		if err != nil {
			return err
		}
		s.arc = src
	}
	m.HandleFunc("GET /arc", s.arcRuns)
	m.HandleFunc("GET /arc/{run}", s.arcRun)
	m.HandleFunc("GET /arc/{run}/attempts/{attempt}", s.arcAttempt)
	m.HandleFunc("GET /arc/{run}/frames/{attempt}/{file}", s.arcFrame)
	m.HandleFunc("GET /arc/{run}/transcript", s.arcTranscript)
	m.HandleFunc("GET /arc/{run}/snapshots", s.arcSnapshots)
	m.HandleFunc("GET /arc/{run}/mismatches", s.arcMismatches)
	m.HandleFunc("GET /arc/{run}/mismatches/{n}/{file}", s.arcMismatchFile)
	return nil
}

// openARC opens dir as the ARC folder: a workspace itself (one run, named
// after the folder) or a folder of workspaces.
func openARC(dir string) (*arcSource, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--arc %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("--arc %s: %w", dir, err)
	}
	src := &arcSource{dir: abs, root: root}
	if isWorkspace(root) {
		src.single = filepath.Base(abs)
		if !validRunName(src.single) {
			src.single = "workspace"
		}
	}
	return src, nil
}

// validRunName is a run name the view accepts in a URL: one path element,
// not "." or "..", not hidden, no slash or backslash, no control character.
func validRunName(name string) bool {
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, ".") || len(name) > 255 ||
		strings.ContainsAny(name, `/\`) || !fs.ValidPath(name) {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// arcRunURL is the run's overview; parts are appended as escaped path
// segments.
func arcRunURL(run string, parts ...string) string {
	u := "/arc/" + url.PathEscape(run)
	for _, p := range parts {
		u += "/" + url.PathEscape(p)
	}
	return u
}

// openRun opens the run named in the URL, answering 404 itself when there
// is none: a bad name, a folder that is not a workspace, or one the ARC
// folder's root refuses (a symbolic link leading out of it).
func (s *Server) openRun(w http.ResponseWriter, r *http.Request) (*os.Root, string, bool) {
	if s.arc == nil {
		s.arcNoFolder(w, r)
		return nil, "", false
	}
	name := r.PathValue("run")
	var root *os.Root
	var err error
	switch {
	case !validRunName(name):
		err = fs.ErrNotExist
	case s.arc.single != "":
		if name != s.arc.single {
			err = fs.ErrNotExist
		} else {
			root, err = s.arc.root.OpenRoot(".")
		}
	default:
		root, err = s.arc.root.OpenRoot(name)
		if err == nil && !isWorkspace(root) {
			root.Close()
			err = fs.ErrNotExist
		}
	}
	if err != nil {
		s.arcFail(w, r, http.StatusNotFound, "No such run", "The ARC folder has no agent workspace of that name.")
		return nil, "", false
	}
	return root, name, true
}

// ---- rendering ---------------------------------------------------------------

// arcRender renders one ARC page in the site's layout (English, the ARC
// navigation), buffered like render.
func (s *Server) arcRender(w http.ResponseWriter, r *http.Request, status int, name, title string, page any) {
	v := s.view(r, page)
	v.Title, v.Nav, v.Lang = title, "arc", "en"
	var buf bytes.Buffer
	if err := s.arcPages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		s.opt.Log.Printf("web: render %s: %v", name, err)
		http.Error(w, "the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) arcFail(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	if status >= 500 {
		s.opt.Log.Printf("web: %s %s: %s: %s", r.Method, r.URL.Path, title, detail)
	}
	s.arcRender(w, r, status, "arc_error", title, &errorPage{Title: title, Detail: detail, Status: status, English: true})
}

func (s *Server) arcNoFolder(w http.ResponseWriter, r *http.Request) {
	s.arcFail(w, r, http.StatusNotFound, "No ARC folder",
		"This server was started without --arc. Start it with evident serve --arc DIR, DIR being an agent workspace or a folder of them.")
}

// arcPager pages a list of n items by size.
type arcPager struct {
	Page, Pages int
	Prev, Next  string
	First, Last string
}

// pageOf reads ?page= (a number, or "last") for n items.
func pageOf(q url.Values, n, size int) int {
	pages := max(1, (n+size-1)/size)
	if q.Get("page") == "last" {
		return pages
	}
	p, _ := strconv.Atoi(q.Get("page"))
	return min(max(p, 1), pages)
}

// newPager links the pages of n items; link gives the URL of page p.
func newPager(page, n, size int, link func(p int) string) arcPager {
	pg := arcPager{Page: page, Pages: max(1, (n+size-1)/size)}
	if page > 1 {
		pg.Prev, pg.First = link(page-1), link(1)
	}
	if page < pg.Pages {
		pg.Next, pg.Last = link(page+1), link(pg.Pages)
	}
	return pg
}

func withPage(base string, q url.Values, p int) string {
	v := url.Values{}
	for k, vs := range q {
		if k != "page" && k != "iteration" && k != "step" && len(vs) > 0 && vs[0] != "" {
			v.Set(k, vs[0])
		}
	}
	if p > 1 {
		v.Set("page", strconv.Itoa(p))
	}
	if len(v) == 0 {
		return base
	}
	return base + "?" + strings.ReplaceAll(v.Encode(), "+", "%20")
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// fmtScore is a score as `evident arc score` prints it (two decimals).
func fmtScore(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// exact is a float in full precision, for data attributes.
func exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// ---- GET /arc ----------------------------------------------------------------

type arcRunRow struct {
	Name, URL        string
	Game, State      string
	Levels           string // "2 / 3"
	Attempts, Steps  int
	Transcript       bool
	Modified, Err    string
	TranscriptSize   string
	StateUnreadable  bool
	HasSession       bool
	MismatchFolders  int
	LastStepIndexStr string
}

type arcRunsPage struct {
	Dir      string
	Runs     []arcRunRow
	Total    int
	Pager    arcPager
	NoFolder bool
}

func (s *Server) arcRuns(w http.ResponseWriter, r *http.Request) {
	if s.arc == nil {
		s.arcRender(w, r, http.StatusOK, "arc_runs", "ARC runs", &arcRunsPage{NoFolder: true})
		return
	}
	var names []string
	if s.arc.single != "" {
		names = []string{s.arc.single}
	} else {
		entries, err := readDirNames(s.arc.root, ".")
		if err != nil {
			s.arcFail(w, r, http.StatusInternalServerError, "The ARC folder could not be read", err.Error())
			return
		}
		for _, e := range entries {
			if validRunName(e.Name()) && (e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
				names = append(names, e.Name())
			}
		}
	}
	// Folders that are not workspaces are left out; this opens each
	// candidate's root (cheap) but reads files only for the page shown.
	var runs []string
	for _, n := range names {
		root, err := s.runRoot(n)
		if err != nil {
			continue
		}
		if isWorkspace(root) {
			runs = append(runs, n)
		}
		root.Close()
	}
	q := r.URL.Query()
	page := pageOf(q, len(runs), arcRunsPer)
	p := &arcRunsPage{Dir: s.arc.dir, Total: len(runs),
		Pager: newPager(page, len(runs), arcRunsPer, func(p int) string { return withPage("/arc", q, p) })}
	lo := (page - 1) * arcRunsPer
	for _, n := range runs[lo:min(len(runs), lo+arcRunsPer)] {
		p.Runs = append(p.Runs, s.runRow(n))
	}
	s.arcRender(w, r, http.StatusOK, "arc_runs", "ARC runs", p)
}

func (s *Server) runRoot(name string) (*os.Root, error) {
	if s.arc.single != "" {
		return s.arc.root.OpenRoot(".")
	}
	return s.arc.root.OpenRoot(name)
}

func (s *Server) runRow(name string) arcRunRow {
	row := arcRunRow{Name: name, URL: arcRunURL(name)}
	root, err := s.runRoot(name)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer root.Close()
	st := readState(root)
	row.Game, row.State, row.Err = st.GameID, st.State, st.Err
	if st.Present {
		row.Levels = fmt.Sprintf("%d / %d", st.LevelsCompleted, st.WinLevels)
	}
	atts, err := listAttempts(root)
	if err != nil && row.Err == "" {
		row.Err = err.Error()
	}
	row.Attempts = len(atts)
	for _, a := range atts {
		if af, err := scanAttemptFiles(root, a.Name); err == nil {
			row.Steps += af.MaxStep
		}
	}
	if fi, err := root.Stat(agent.TranscriptPath); err == nil && fi.Mode().IsRegular() {
		row.Transcript = true
		row.TranscriptSize = byteSize(fi.Size())
		row.Modified = fmtTime(fi.ModTime())
	}
	if mf, err := mismatchFolders(root); err == nil {
		row.MismatchFolders = len(mf)
	}
	return row
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// ---- GET /arc/{run} ----------------------------------------------------------

type arcLevelScore struct {
	Level             int
	Actions, Baseline int
	Score, Exact      string
}

type arcRunScore struct {
	N                        int
	Score, Exact             string
	LevelsCompleted, Actions int
	Resets                   int
	State, Message           string
	Best                     bool
	Levels                   []arcLevelScore
}

type arcScoreView struct {
	Game                     string
	Score, Exact             string
	LevelsCompleted, Actions int
	Resets                   int
	Completed                bool
	Runs                     []arcRunScore
	Baselines                string
	NoBaselines              bool
	Err                      string
}

type arcAttemptRow struct {
	Level, Attempt int
	Name, URL      string
	Steps          int
	Status, State  string
	Opened         string // the action that opened the attempt
	Err            string
}

type arcRunPage struct {
	Name, URL                                  string
	State                                      arcState
	Score                                      arcScoreView
	Attempts                                   []arcAttemptRow
	Transcript                                 bool
	Entries                                    int
	Kinds                                      []arcKindCount
	Unreadable                                 int
	Stop                                       *agent.Entry
	Mismatches                                 int
	TranscriptURL, SnapshotsURL, MismatchesURL string
	TranscriptErr                              string
}

type arcKindCount struct {
	Kind, URL string
	Count     int
}

func (s *Server) arcRun(w http.ResponseWriter, r *http.Request) {
	root, name, ok := s.openRun(w, r)
	if !ok {
		return
	}
	defer root.Close()
	st := readState(root)
	p := &arcRunPage{Name: name, URL: arcRunURL(name), State: st,
		TranscriptURL: arcRunURL(name, "transcript"), SnapshotsURL: arcRunURL(name, "snapshots"),
		MismatchesURL: arcRunURL(name, "mismatches")}
	p.Score = scoreView(scoreRun(root, st))
	atts, err := listAttempts(root)
	if err != nil {
		p.Score.Err = err.Error()
	}
	for _, a := range atts {
		p.Attempts = append(p.Attempts, attemptRow(root, name, a))
	}
	if mf, err := mismatchFolders(root); err == nil {
		p.Mismatches = len(mf)
	}
	if f, ok, err := openTranscript(root); err != nil {
		p.TranscriptErr = err.Error()
	} else if ok {
		res, err := scanTranscript(f, transcriptQuery{FromIteration: -1})
		f.Close()
		if err != nil {
			p.TranscriptErr = err.Error()
		}
		p.Transcript, p.Entries, p.Unreadable, p.Stop = true, res.Total, res.Unreadable, res.Stop
		p.Kinds = kindCounts(name, res.Kinds)
	}
	s.arcRender(w, r, http.StatusOK, "arc_run", "ARC · "+name, p)
}

// kindCounts lists the kinds of the contract first, in their order, then
// any other kind by name.
func kindCounts(run string, kinds map[string]int) []arcKindCount {
	order := []string{agent.KindPrompt, agent.KindAgentEvent, agent.KindTurn, agent.KindInspection,
		agent.KindRefusal, agent.KindSnapshot, agent.KindReset, agent.KindStop}
	var rest []string
	for k := range kinds {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	var out []arcKindCount
	for _, k := range append(order, rest...) {
		if kinds[k] > 0 {
			out = append(out, arcKindCount{Kind: k, Count: kinds[k],
				URL: arcRunURL(run, "transcript") + "?kind=" + url.QueryEscape(k)})
		}
	}
	return out
}

func scoreView(sc arcScore) arcScoreView {
	v := arcScoreView{Game: sc.GameID, Err: sc.Err, NoBaselines: len(sc.Baselines) == 0}
	if len(sc.Baselines) > 0 {
		parts := make([]string, len(sc.Baselines))
		for i, b := range sc.Baselines {
			parts[i] = strconv.Itoa(b)
		}
		v.Baselines = strings.Join(parts, ", ")
	}
	if sc.Err != "" {
		return v
	}
	e := sc.Env
	v.Score, v.Exact = fmtScore(e.Score), exact(e.Score)
	v.LevelsCompleted, v.Actions, v.Resets, v.Completed = e.LevelsCompleted, e.Actions, e.Resets, e.Completed
	for i, rs := range e.Runs {
		row := arcRunScore{N: i + 1, Score: fmtScore(rs.Score), Exact: exact(rs.Score), LevelsCompleted: rs.LevelsCompleted,
			Actions: rs.Actions, Resets: rs.Resets, State: rs.State, Message: rs.Message, Best: i == e.Best}
		for l, ls := range rs.LevelScores {
			row.Levels = append(row.Levels, arcLevelScore{Level: l + 1, Actions: rs.LevelActions[l],
				Baseline: rs.LevelBaselineActions[l], Score: fmtScore(ls), Exact: exact(ls)})
		}
		v.Runs = append(v.Runs, row)
	}
	return v
}

func attemptRow(root *os.Root, run string, a attemptFiles) arcAttemptRow {
	row := arcAttemptRow{Level: a.Level, Attempt: a.Attempt, Name: a.Name, URL: arcRunURL(run, "attempts", a.Name)}
	af, err := scanAttemptFiles(root, a.Name)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	row.Steps = af.MaxStep
	if m, err := readMetadata(root, a.Name, session.InitialMetadataFile); err == nil {
		row.Opened = actionName(m.ActionInput)
		row.State, row.Status = m.State, string(session.ObservedStatus(m, a.Level))
	} else if af.MaxStep == 0 {
		row.Err = err.Error()
	}
	if af.MaxStep > 0 {
		m, err := readMetadata(root, a.Name, session.StepMetadataFile(af.MaxStep))
		if err != nil {
			row.Err = err.Error()
		} else {
			row.State, row.Status = m.State, string(session.ObservedStatus(m, a.Level))
		}
	}
	return row
}

// actionName names a metadata's action: "ACTION6 (x 12, y 40)", "RESET", or
// the id as written when it is not a known action.
func actionName(ai *session.ActionInput) string {
	if ai == nil {
		return "no action_input"
	}
	a, err := session.ActionFromInput(ai)
	if err != nil {
		b, _ := ai.ID.MarshalJSON()
		return "unknown action " + string(b)
	}
	if a.Name == "ACTION6" {
		return fmt.Sprintf("ACTION6 (x %d, y %d)", a.X, a.Y)
	}
	return a.Name
}

// ---- GET /arc/{run}/attempts/{attempt} ----------------------------------------

type arcFrameView struct {
	URL, Alt, Label string
}

type arcStepView struct {
	Index, StepIndex int
	Anchor           string
	Action           string
	Click            bool
	X, Y             int
	State, Status    string
	LevelsCompleted  int
	Final            *arcFrameView
	Strip            []arcFrameView
	Err              string
	Skipped          bool // no final frame after a GAME_OVER step: the session reader skips it
}

type arcAttemptPage struct {
	Run, RunURL    string
	Name           string
	Level, Attempt int
	Initial        *arcFrameView
	InitialState   string
	InitialLevels  int
	InitialAction  string
	InitialErr     string
	Steps          []arcStepView
	Total          int
	Pager          arcPager
	Prev, Next     *arcAttemptRow
	Focus          int
}

func (s *Server) arcAttempt(w http.ResponseWriter, r *http.Request) {
	root, run, ok := s.openRun(w, r)
	if !ok {
		return
	}
	defer root.Close()
	name := r.PathValue("attempt")
	af, err := scanAttemptFiles(root, name)
	if err != nil {
		s.arcFail(w, r, http.StatusNotFound, "No such attempt", "The run's session has no attempt folder of that name.")
		return
	}
	q := r.URL.Query()
	page := pageOf(q, af.MaxStep, arcStepsPer)
	focus := 0
	if k, err := strconv.Atoi(q.Get("step")); err == nil && k >= 1 && k <= af.MaxStep {
		page, focus = (k-1)/arcStepsPer+1, k
	}
	base := arcRunURL(run, "attempts", name)
	p := &arcAttemptPage{Run: run, RunURL: arcRunURL(run), Name: name, Level: af.Level, Attempt: af.Attempt,
		Total: af.MaxStep, Focus: focus,
		Pager: newPager(page, af.MaxStep, arcStepsPer, func(p int) string { return withPage(base, q, p) })}
	frameURL := func(file string) string { return arcRunURL(run, "frames", name, file+".png") }
	if af.initialFrame {
		p.Initial = &arcFrameView{URL: frameURL("initial_frame"), Alt: fmt.Sprintf("level %d attempt %d, initial frame", af.Level, af.Attempt)}
	}
	if m, err := readMetadata(root, name, session.InitialMetadataFile); err != nil {
		p.InitialErr = err.Error()
	} else {
		p.InitialState, p.InitialLevels, p.InitialAction = m.State, m.LevelsCompleted, actionName(m.ActionInput)
	}
	prevGameOver := false
	lo := (page-1)*arcStepsPer + 1
	if lo > 1 {
		// Whether the step before the page ended the attempt decides
		// whether the page's first step is one the reader skips.
		if m, err := readMetadata(root, name, session.StepMetadataFile(lo-1)); err == nil {
			prevGameOver = session.ObservedStatus(m, af.Level) == session.GameOver
		}
	}
	for k := lo; k <= min(af.MaxStep, lo+arcStepsPer-1); k++ {
		v := arcStepView{Index: k, Anchor: fmt.Sprintf("step-%d", k)}
		sf := af.steps[k]
		switch {
		case sf == nil:
			v.Err = fmt.Sprintf("no step_%04d_* file", k)
		case !sf.metadata:
			v.Err = "missing " + session.StepMetadataFile(k)
		default:
			m, err := readMetadata(root, name, session.StepMetadataFile(k))
			if err != nil {
				v.Err = err.Error()
				break
			}
			v.StepIndex, v.State, v.LevelsCompleted = m.StepIndex, m.State, m.LevelsCompleted
			v.Status = string(session.ObservedStatus(m, af.Level))
			v.Action = actionName(m.ActionInput)
			if a, err := session.ActionFromInput(m.ActionInput); err == nil && a.Name == "ACTION6" {
				v.Click, v.X, v.Y = true, a.X, a.Y
			}
			v.Skipped = prevGameOver && !sf.final
			prevGameOver = v.Status == string(session.GameOver)
		}
		if sf != nil {
			if sf.final || sf.finalPNG {
				v.Final = &arcFrameView{URL: frameURL(fmt.Sprintf("step_%04d_final", k)), Alt: fmt.Sprintf("step %d final frame", k)}
			}
			nums := make([]int, 0, len(sf.inter))
			for i := range sf.inter {
				nums = append(nums, i)
			}
			slices.Sort(nums)
			for _, i := range nums {
				v.Strip = append(v.Strip, arcFrameView{URL: frameURL(sf.inter[i]), Label: strconv.Itoa(i),
					Alt: fmt.Sprintf("step %d intermediate frame %d", k, i)})
			}
		}
		p.Steps = append(p.Steps, v)
	}
	if atts, err := listAttempts(root); err == nil {
		for i, a := range atts {
			if a.Name != name {
				continue
			}
			if i > 0 {
				p.Prev = &arcAttemptRow{Level: atts[i-1].Level, Attempt: atts[i-1].Attempt, URL: arcRunURL(run, "attempts", atts[i-1].Name)}
			}
			if i+1 < len(atts) {
				p.Next = &arcAttemptRow{Level: atts[i+1].Level, Attempt: atts[i+1].Attempt, URL: arcRunURL(run, "attempts", atts[i+1].Name)}
			}
		}
	}
	s.arcRender(w, r, http.StatusOK, "arc_attempt", fmt.Sprintf("ARC · %s · level %d attempt %d", run, af.Level, af.Attempt), p)
}

// ---- frames ------------------------------------------------------------------

var frameNameRE = regexp.MustCompile(`^(initial_frame|step_\d{4}_final|step_\d{4}_intermediate_\d{1,9})\.png$`)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// arcFrame serves one session frame: the recorded PNG, or the .txt
// rendered by evident/arc/frame when the PNG is absent.
func (s *Server) arcFrame(w http.ResponseWriter, r *http.Request) {
	root, _, ok := s.openRun(w, r)
	if !ok {
		return
	}
	defer root.Close()
	attempt, file := r.PathValue("attempt"), r.PathValue("file")
	if _, _, ok := session.ParseAttemptDirName(attempt); !ok || strings.ContainsAny(attempt, `/\`) || !frameNameRE.MatchString(file) {
		http.NotFound(w, r)
		return
	}
	servePNG(w, r, root, path.Join(session.Dir, attempt), strings.TrimSuffix(file, ".png"))
}

// servePNG answers dir/base.png, or dir/base.txt drawn by arc/frame.
func servePNG(w http.ResponseWriter, r *http.Request, root *os.Root, dir, base string) {
	b, err := readCappedRoot(root, path.Join(dir, base+".png"), arcMaxPNG)
	switch {
	case err == nil:
		if !bytes.HasPrefix(b, pngSignature) {
			http.Error(w, base+".png is not a PNG file", http.StatusNotFound)
			return
		}
	case errors.Is(err, fs.ErrNotExist):
		txt, err := readCappedRoot(root, path.Join(dir, base+".txt"), arcMaxASCII)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		g, err := frame.ParseASCII(txt)
		if err != nil {
			http.Error(w, base+".txt: "+err.Error(), http.StatusNotFound)
			return
		}
		var buf bytes.Buffer
		if err := g.WritePNG(&buf); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		b = buf.Bytes()
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=300")
	w.Write(b)
}

// ---- GET /arc/{run}/transcript -----------------------------------------------

type arcEntryView struct {
	Line, Iteration int
	Anchor          string
	Kind, Time      string
	Class           string
	E               agent.Entry
	Reply           []arcReplyPart // agent_event: what the agent said or ran
	Event           string         // agent_event: the event, indented
	Raw, Err        string
	Known           bool
	AttemptURL      string // inspection: the attempt it read
	SnapshotURL     string
}

type arcReplyPart struct {
	Label, Text string
}

type arcTranscriptPage struct {
	Run, RunURL, URL string
	Entries          []arcEntryView
	Total            int
	Kind             string
	Kinds            []option
	Pager            arcPager
	Missing          bool
	Err              string
}

func (s *Server) arcTranscript(w http.ResponseWriter, r *http.Request) {
	root, run, ok := s.openRun(w, r)
	if !ok {
		return
	}
	defer root.Close()
	q := r.URL.Query()
	kind := strings.TrimSpace(q.Get("kind"))
	base := arcRunURL(run, "transcript")
	p := &arcTranscriptPage{Run: run, RunURL: arcRunURL(run), URL: base, Kind: kind}
	f, ok, err := openTranscript(root)
	if err != nil {
		p.Err = err.Error()
	}
	if !ok {
		p.Missing = err == nil
		s.arcRender(w, r, http.StatusOK, "arc_transcript", "ARC · "+run+" · transcript", p)
		return
	}
	defer f.Close()
	if it, err := strconv.Atoi(q.Get("iteration")); err == nil && it >= 0 {
		// Jump to the page holding the iteration's first entry.
		res, err := scanTranscript(f, transcriptQuery{Kind: kind, FromIteration: it, Take: 1})
		if err != nil {
			s.arcFail(w, r, http.StatusInternalServerError, "The transcript could not be read", err.Error())
			return
		}
		to := withPage(base, q, res.Start/arcEntriesPer+1)
		if len(res.Entries) > 0 {
			to += fmt.Sprintf("#line-%d", res.Entries[0].Line)
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	res, err := scanTranscript(f, transcriptQuery{Kind: kind, FromIteration: -1, Skip: (page - 1) * arcEntriesPer, Take: arcEntriesPer})
	if err != nil {
		p.Err = err.Error()
	}
	if q.Get("page") == "last" || page > max(1, (res.Total+arcEntriesPer-1)/arcEntriesPer) {
		page = max(1, (res.Total+arcEntriesPer-1)/arcEntriesPer)
		if _, err := f.Seek(0, io.SeekStart); err == nil {
			res, _ = scanTranscript(f, transcriptQuery{Kind: kind, FromIteration: -1, Skip: (page - 1) * arcEntriesPer, Take: arcEntriesPer})
		}
	}
	p.Total = res.Total
	p.Pager = newPager(page, res.Total, arcEntriesPer, func(p int) string { return withPage(base, q, p) })
	var kinds []string
	for _, k := range kindCounts(run, res.Kinds) {
		kinds = append(kinds, k.Kind)
	}
	if kind != "" && !slices.Contains(kinds, kind) {
		kinds = append(kinds, kind)
	}
	p.Kinds = options(kinds, kind, func(k string) string { return fmt.Sprintf("%s (%d)", k, res.Kinds[k]) })
	atts, _ := listAttempts(root)
	for _, e := range res.Entries {
		p.Entries = append(p.Entries, entryView(run, e, atts))
	}
	s.arcRender(w, r, http.StatusOK, "arc_transcript", "ARC · "+run+" · transcript", p)
}

func entryView(run string, e arcEntry, atts []attemptFiles) arcEntryView {
	v := arcEntryView{Line: e.Line, Anchor: fmt.Sprintf("line-%d", e.Line), Raw: e.Raw, Err: e.Err, Known: e.Known,
		E: e.Entry, Kind: e.Entry.Kind, Iteration: e.Entry.Iteration, Time: fmtTime(e.Entry.Time)}
	v.Class = "kind-other"
	if e.Known {
		v.Class = "kind-" + strings.ReplaceAll(e.Entry.Kind, "_", "-")
	}
	if e.Err != "" {
		v.Class = "kind-bad"
		return v
	}
	switch e.Entry.Kind {
	case agent.KindAgentEvent:
		v.Reply = replyParts(e.Entry.Event)
		var ind bytes.Buffer
		if json.Indent(&ind, e.Entry.Event, "", "  ") == nil {
			v.Event = ind.String()
		} else {
			v.Event = string(e.Entry.Event)
		}
	case agent.KindInspection:
		name := session.AttemptDirName(e.Entry.Level, e.Entry.Attempt)
		for _, a := range atts {
			if a.Level == e.Entry.Level && a.Attempt == e.Entry.Attempt {
				name = a.Name
			}
		}
		if e.Entry.Level > 0 && e.Entry.Attempt > 0 {
			v.AttemptURL = arcRunURL(run, "attempts", name) + "?page=last"
		}
	case agent.KindSnapshot:
		v.SnapshotURL = arcRunURL(run, "snapshots")
	}
	return v
}

// replyParts picks out what a person reads in an agent event: the text of
// Codex's `exec --json` items (agent_message, reasoning; a
// command_execution's command and output) and of Claude Code's stream-json
// messages (assistant text and tool uses, the result), and the text of a
// line that was not JSON ({"text": …}, agent.EventJSON). Other events show
// only as JSON.
func replyParts(ev json.RawMessage) []arcReplyPart {
	var e struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
		Item *struct {
			Type             string `json:"type"`
			Text             string `json:"text"`
			Command          string `json:"command"`
			AggregatedOutput string `json:"aggregated_output"`
		} `json:"item"`
		Message *struct {
			Content []struct {
				Type  string          `json:"type"`
				Text  string          `json:"text"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"message"`
		Result *string `json:"result"`
	}
	if json.Unmarshal(ev, &e) != nil {
		return nil
	}
	var out []arcReplyPart
	add := func(label, text string) {
		if strings.TrimSpace(text) != "" {
			out = append(out, arcReplyPart{Label: label, Text: cut(text)})
		}
	}
	switch {
	case e.Item != nil:
		add(e.Item.Type, e.Item.Text)
		if e.Item.Command != "" {
			add(e.Item.Type+" command", e.Item.Command)
			add(e.Item.Type+" output", e.Item.AggregatedOutput)
		}
	case e.Message != nil && (e.Type == "assistant" || e.Type == "user"):
		for _, c := range e.Message.Content {
			switch c.Type {
			case "text":
				add(e.Type+" text", c.Text)
			case "tool_use":
				add("tool use "+c.Name, string(c.Input))
			}
		}
	case e.Result != nil:
		add("result", *e.Result)
	case e.Text != nil && e.Type == "":
		add("output", *e.Text)
	}
	return out
}

// ---- GET /arc/{run}/snapshots ------------------------------------------------

type arcSnapshotView struct {
	Line, Iteration  int
	Time             string
	Commit, Tag, Msg string
	GitCommit        string // what .git says the tag points at; "" when unknown
	Match, Moved     bool
	TranscriptURL    string
}

type arcSnapshotsPage struct {
	Run, RunURL string
	Snapshots   []arcSnapshotView
	Total       int
	Pager       arcPager
	Git         bool
	Missing     bool
	Err         string
}

func (s *Server) arcSnapshots(w http.ResponseWriter, r *http.Request) {
	root, run, ok := s.openRun(w, r)
	if !ok {
		return
	}
	defer root.Close()
	q := r.URL.Query()
	base := arcRunURL(run, "snapshots")
	p := &arcSnapshotsPage{Run: run, RunURL: arcRunURL(run)}
	if st, err := root.Stat(".git"); err == nil && st.IsDir() {
		p.Git = true
	}
	f, ok, err := openTranscript(root)
	if err != nil {
		p.Err = err.Error()
	}
	if !ok {
		p.Missing = err == nil
		s.arcRender(w, r, http.StatusOK, "arc_snapshots", "ARC · "+run+" · snapshots", p)
		return
	}
	defer f.Close()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	res, err := scanTranscript(f, transcriptQuery{Kind: agent.KindSnapshot, FromIteration: -1, Skip: (page - 1) * arcSnapshotsPer, Take: arcSnapshotsPer})
	if err != nil {
		p.Err = err.Error()
	}
	p.Total = res.Total
	p.Pager = newPager(page, res.Total, arcSnapshotsPer, func(p int) string { return withPage(base, q, p) })
	var tags []string
	for _, e := range res.Entries {
		tags = append(tags, e.Entry.Tag)
	}
	git := gitTags(root, tags)
	for _, e := range res.Entries {
		x := e.Entry
		v := arcSnapshotView{Line: e.Line, Iteration: x.Iteration, Time: fmtTime(x.Time), Commit: x.Commit, Tag: x.Tag,
			Msg: x.Message, GitCommit: git[x.Tag],
			TranscriptURL: arcRunURL(run, "transcript") + "?iteration=" + strconv.Itoa(x.Iteration)}
		v.Match = v.GitCommit != "" && v.GitCommit == x.Commit
		v.Moved = v.GitCommit != "" && v.GitCommit != x.Commit
		p.Snapshots = append(p.Snapshots, v)
	}
	s.arcRender(w, r, http.StatusOK, "arc_snapshots", "ARC · "+run+" · snapshots", p)
}

// ---- mismatches ----------------------------------------------------------------

type arcMismatchView struct {
	N        int
	Anchor   string
	Modified string
	Images   []arcFrameView
	TextURL  string
}

type arcMismatchesPage struct {
	Run, RunURL string
	Folders     []arcMismatchView
	Total       int
	Pager       arcPager
	Err         string
}

// mismatchFiles are the files the view serves from mismatch_frames/N/ (the
// verifier's and plan executor's artifacts, evident/arc/frame), in the order
// of the verifier's failure message.
var mismatchFiles = []struct{ File, Label string }{
	{frame.SimulatedPNGFile, "simulated frame (the model's prediction)"},
	{frame.MismatchRegionFile, "mismatch region (v1: real colours near a mismatch, brown elsewhere)"},
	{frame.MismatchAsMagnetaFile, "mismatch as magenta (v2: the real frame, mismatching cells magenta)"},
}

func (s *Server) arcMismatches(w http.ResponseWriter, r *http.Request) {
	root, run, ok := s.openRun(w, r)
	if !ok {
		return
	}
	defer root.Close()
	q := r.URL.Query()
	base := arcRunURL(run, "mismatches")
	p := &arcMismatchesPage{Run: run, RunURL: arcRunURL(run)}
	nums, err := mismatchFolders(root)
	if err != nil {
		p.Err = err.Error()
	}
	page := pageOf(q, len(nums), arcMismatchesPer)
	p.Total = len(nums)
	p.Pager = newPager(page, len(nums), arcMismatchesPer, func(p int) string { return withPage(base, q, p) })
	lo := (page - 1) * arcMismatchesPer
	for _, n := range nums[lo:min(len(nums), lo+arcMismatchesPer)] {
		dir := path.Join(planexec.MismatchDir, strconv.Itoa(n))
		v := arcMismatchView{N: n, Anchor: fmt.Sprintf("mismatch-%d", n)}
		if st, err := root.Stat(dir); err == nil {
			v.Modified = fmtTime(st.ModTime())
		}
		for _, mf := range mismatchFiles {
			if _, err := root.Stat(path.Join(dir, mf.File)); err == nil ||
				(mf.File == frame.SimulatedPNGFile && exists(root, path.Join(dir, frame.SimulatedFrameFile))) {
				v.Images = append(v.Images, arcFrameView{URL: arcRunURL(run, "mismatches", strconv.Itoa(n), mf.File),
					Label: mf.Label, Alt: fmt.Sprintf("mismatch %d: %s", n, mf.Label)})
			}
		}
		if exists(root, path.Join(dir, frame.SimulatedFrameFile)) {
			v.TextURL = arcRunURL(run, "mismatches", strconv.Itoa(n), frame.SimulatedFrameFile)
		}
		p.Folders = append(p.Folders, v)
	}
	s.arcRender(w, r, http.StatusOK, "arc_mismatches", "ARC · "+run+" · mismatches", p)
}

func exists(root *os.Root, name string) bool {
	st, err := root.Stat(name)
	return err == nil && st.Mode().IsRegular()
}

// arcMismatchFile serves one artifact of mismatch_frames/N/: the three
// PNGs (the simulated frame drawn from its .txt when its PNG is absent) and
// simulated_frame.txt as text.
func (s *Server) arcMismatchFile(w http.ResponseWriter, r *http.Request) {
	root, _, ok := s.openRun(w, r)
	if !ok {
		return
	}
	defer root.Close()
	n, ok := allDigits(r.PathValue("n"))
	file := r.PathValue("file")
	if !ok {
		http.NotFound(w, r)
		return
	}
	dir := path.Join(planexec.MismatchDir, strconv.Itoa(n))
	switch file {
	case frame.SimulatedFrameFile:
		b, err := readCappedRoot(root, path.Join(dir, file), arcMaxASCII)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(b)
	case frame.SimulatedPNGFile:
		servePNG(w, r, root, dir, strings.TrimSuffix(file, ".png"))
	case frame.MismatchRegionFile, frame.MismatchAsMagnetaFile:
		// No fallback: the views need the real frame, which the folder
		// does not hold.
		b, err := readCappedRoot(root, path.Join(dir, file), arcMaxPNG)
		if err != nil || !bytes.HasPrefix(b, pngSignature) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "private, max-age=300")
		w.Write(b)
	default:
		http.NotFound(w, r)
	}
}
