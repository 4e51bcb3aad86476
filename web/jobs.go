package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"evident/persona"
	"evident/persona/batch"
	"evident/runstore"
	"evident/store"
)

// Background re-judges of review decisions (issue 13: progress shown for
// long work, every page answering while a re-judge runs). The package doc,
// "Review queues", says what a job does and how queueing, coalescing,
// shutdown and the bounded list behave; this file holds the jobs, their
// pages and their JSON.

// maxFinishedJobs is how many finished (done or failed) jobs are kept in
// memory for their pages; older finished ones are forgotten. Queued and
// running jobs are always kept (at most two per source run).
const maxFinishedJobs = 50

// jobWaitMax caps how long GET /review/jobs/N.json?after=V waits for the job
// to change (a long poll; the answer is the job as it is then).
const jobWaitMax = 20 * time.Second

// jobRefresh is the job page's self-refresh while the job is queued or
// running, in seconds (the Refresh header: works with scripts off).
const jobRefresh = 2

// jobState is where a re-judge stands.
type jobState string

const (
	jobQueued  jobState = "queued"  // waiting for the run's previous re-judge or another judge of the server
	jobRunning jobState = "running" // judging (Judged of Total rows)
	jobDone    jobState = "done"    // a new run (JudgedAgain), or nothing left to change
	jobFailed  jobState = "failed"  // Error says why; the decisions stay stored
)

var jobStateLabels = map[jobState]string{jobQueued: "기다리는 중", jobRunning: "판정하는 중", jobDone: "끝남", jobFailed: "실패"}

// errJobsClosed: the server is shutting down and starts no re-judge.
var errJobsClosed = errors.New("the server is shutting down; it starts no re-judge")

// rejudgeJob is one background re-judge of a source run's dataset. Fields
// after mu-guarded are read and written under jobs.mu only.
type rejudgeJob struct {
	id   int64
	run  store.RunInfo // the source run, as it was when the first decision came
	slug string        // the queue page of the first decision: offcanon or endings
	done chan struct{} // closed when the job ends

	// mu-guarded
	plan                         runstore.Plan
	labels                       []string
	state                        jobState
	judged, total                int
	queuedAt, startedAt, endedAt time.Time
	next                         store.RunInfo
	judgedAgain                  bool
	err                          string
	version                      int64
	changed                      chan struct{} // closed and replaced on every change
}

// jobs runs the re-judges of one Server: one goroutine per running job, at
// most one running job per source run, and behind it at most one queued
// job into which every later decision on that run is coalesced.
type jobs struct {
	s      *Server
	ctx    context.Context // cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	now    func() time.Time

	mu      sync.Mutex
	seq     int64
	all     []*rejudgeJob         // oldest first
	active  map[int64]*rejudgeJob // source run → its running job
	waiting map[int64]*rejudgeJob // source run → its queued job
	closed  bool
	gate    func(context.Context, *rejudgeJob) error // tests: called after each stored chunk
}

func newJobs(s *Server) *jobs {
	ctx, cancel := context.WithCancel(context.Background())
	now := s.opt.Now
	if now == nil {
		now = time.Now
	}
	return &jobs{s: s, ctx: ctx, cancel: cancel, now: now,
		active: map[int64]*rejudgeJob{}, waiting: map[int64]*rejudgeJob{}}
}

// Close ends the server's background work: it starts no new re-judge, fails
// the queued ones, cancels the running ones (their run writers roll back, so
// no half run becomes visible; the decisions stay stored), stops the search
// indexer (IndexInBackground; what it wrote stays) and returns once they
// have ended. The screen keeps answering pages. ListenAndServe calls it
// after the HTTP server has shut down; call it before closing the store.
// It is safe to call more than once.
func (s *Server) Close() error {
	s.rejudges.close()
	s.indexer.close()
	return nil
}

func (m *jobs) close() {
	m.mu.Lock()
	m.closed = true
	for id, j := range m.waiting {
		delete(m.waiting, id)
		m.end(j, store.RunInfo{}, false, errJobsClosed)
	}
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
}

// busy reports a queued or running re-judge of the source run.
func (m *jobs) busy(runID int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active[runID] != nil || m.waiting[runID] != nil
}

// submit starts a re-judge of run with plan, or queues it behind the run's
// running one, or, when one is queued already, adds plan to it (coalesced:
// the queued job reads every decision when it starts, and applies all their
// changes in one judgement). It returns the job that will apply plan.
func (m *jobs) submit(run store.RunInfo, slug string, plan runstore.Plan, label string) (*rejudgeJob, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errJobsClosed
	}
	if w := m.waiting[run.ID]; w != nil {
		w.plan.Changes = append(w.plan.Changes, plan.Changes...)
		w.plan.Always = w.plan.Always || plan.Always
		w.labels = append(w.labels, label)
		w.touch()
		return w, nil
	}
	m.seq++
	j := &rejudgeJob{id: m.seq, run: run, slug: slug, done: make(chan struct{}), changed: make(chan struct{}),
		plan: runstore.Plan{Changes: slices.Clone(plan.Changes), Always: plan.Always}, labels: []string{label},
		state: jobQueued, queuedAt: m.now()}
	m.all = append(m.all, j)
	if m.active[run.ID] == nil {
		m.start(j)
	} else {
		m.waiting[run.ID] = j
	}
	m.trim()
	return j, nil
}

// start runs j in a goroutine of its own (m.mu held).
func (m *jobs) start(j *rejudgeJob) {
	m.active[j.run.ID] = j
	m.wg.Add(1)
	go m.run(j)
}

// run is one job's goroutine: it waits its turn for the server's one judge
// at a time (Server.jobs, shared with uploads), judges, and ends.
func (m *jobs) run(j *rejudgeJob) {
	defer m.wg.Done()
	err := lockCtx(m.ctx, &m.s.jobs)
	var next store.RunInfo
	var judged bool
	if err == nil {
		m.mu.Lock()
		plan := runstore.Plan{Changes: slices.Clone(j.plan.Changes), Always: j.plan.Always}
		j.state, j.startedAt = jobRunning, m.now()
		j.touch()
		m.mu.Unlock()
		next, judged, err = runstore.Apply(m.ctx, m.s.db, j.run, plan,
			runstore.Options{Workers: m.s.opt.Workers, Also: &jobSink{m: m, j: j}})
		m.s.jobs.Unlock()
		m.s.forget(j.run.ID) // its dataset's cards may have changed: read its head again
		if err == nil && judged {
			m.s.IndexInBackground()
		}
	}
	if err != nil {
		m.s.opt.Log.Printf("web: re-judge #%d of run %d: %v", j.id, j.run.ID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.end(j, next, judged, err)
	if m.active[j.run.ID] == j {
		delete(m.active, j.run.ID)
	}
	if w := m.waiting[j.run.ID]; w != nil && !m.closed {
		delete(m.waiting, j.run.ID)
		m.start(w)
	}
	m.trim()
}

// end marks j finished (m.mu held).
func (m *jobs) end(j *rejudgeJob, next store.RunInfo, judged bool, err error) {
	j.endedAt = m.now()
	if err != nil {
		j.state, j.err = jobFailed, err.Error()
		if errors.Is(err, context.Canceled) || errors.Is(err, errJobsClosed) {
			j.err = "the server stopped before the re-judge ended (" + err.Error() + "); nothing of it was kept"
		}
	} else {
		j.state, j.next, j.judgedAgain = jobDone, next, judged
	}
	j.touch()
	close(j.done)
}

// touch records a change of j for long polls (m.mu held).
func (j *rejudgeJob) touch() {
	j.version++
	close(j.changed)
	j.changed = make(chan struct{})
}

// trim forgets the oldest finished jobs beyond maxFinishedJobs (m.mu held).
func (m *jobs) trim() {
	finished := 0
	for _, j := range m.all {
		if j.state == jobDone || j.state == jobFailed {
			finished++
		}
	}
	m.all = slices.DeleteFunc(m.all, func(j *rejudgeJob) bool {
		if finished > maxFinishedJobs && (j.state == jobDone || j.state == jobFailed) {
			finished--
			return true
		}
		return false
	})
}

func (m *jobs) byID(id int64) *rejudgeJob {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range m.all {
		if j.id == id {
			return j
		}
	}
	return nil
}

// forRun lists the kept jobs of a source run, newest first.
func (m *jobs) forRun(runID int64) []jobView {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []jobView
	for i := len(m.all) - 1; i >= 0; i-- {
		if j := m.all[i]; j.run.ID == runID {
			out = append(out, j.view())
		}
	}
	return out
}

// lockCtx locks mu, or gives up when ctx ends first (the lock, once got,
// is then released at once).
func lockCtx(ctx context.Context, mu *sync.Mutex) error {
	if mu.TryLock() {
		return nil
	}
	got := make(chan struct{})
	go func() { mu.Lock(); close(got) }()
	select {
	case <-got:
		return nil
	case <-ctx.Done():
		go func() { <-got; mu.Unlock() }()
		return ctx.Err()
	}
}

// jobSink is the job's runstore Options.Also: it counts the rows judged
// and stored (the judge's own count, batch.Counter for the total).
type jobSink struct {
	m *jobs
	j *rejudgeJob
}

func (p *jobSink) Wants() batch.Want { return batch.WantRecords }

func (p *jobSink) Records(_ []byte, recs []batch.Judged) error {
	p.m.mu.Lock()
	p.j.judged += len(recs)
	p.j.touch()
	gate := p.m.gate
	p.m.mu.Unlock()
	if gate != nil {
		return gate(p.m.ctx, p.j)
	}
	return nil
}

func (p *jobSink) Rejects([]persona.Reject) error { return nil }
func (p *jobSink) Tally(persona.Tally) error      { return nil }

// Counted implements batch.Counter: the rows the second pass will judge.
func (p *jobSink) Counted(n int) {
	p.m.mu.Lock()
	p.j.total = n
	p.j.touch()
	p.m.mu.Unlock()
}

// jobView is a job as its page, the review page and its JSON show it.
type jobView struct {
	ID          int64      `json:"id"`
	Run         int64      `json:"run"`
	Dataset     int64      `json:"dataset"`
	Queue       string     `json:"queue"`
	Decisions   []string   `json:"decisions"`
	State       jobState   `json:"state"`
	Judged      int        `json:"judged"`
	Total       int        `json:"total"` // 0 until the judge's first pass has counted the rows
	QueuedAt    time.Time  `json:"queued_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	JudgedAgain bool       `json:"judged_again"`
	NewRun      int64      `json:"new_run,omitempty"`
	ResultURL   string     `json:"result_url,omitempty"`
	Error       string     `json:"error,omitempty"`
	Retry       string     `json:"retry,omitempty"`
	URL         string     `json:"url"`
	Version     int64      `json:"version"`

	StateLabel, Queued, Started, Ended string `json:"-"`
	RetryURL                           string `json:"-"`
	Percent                            int    `json:"-"`
}

// view is j as shown (m.mu held).
func (j *rejudgeJob) view() jobView {
	v := jobView{ID: j.id, Run: j.run.ID, Dataset: j.run.DatasetID, Queue: j.slug, Decisions: slices.Clone(j.labels),
		State: j.state, Judged: j.judged, Total: j.total, QueuedAt: j.queuedAt, JudgedAgain: j.judgedAgain,
		Error: j.err, URL: fmt.Sprintf("/review/jobs/%d", j.id), Version: j.version,
		StateLabel: jobStateLabels[j.state], Queued: localTime(j.queuedAt)}
	if !j.startedAt.IsZero() {
		t := j.startedAt
		v.StartedAt, v.Started = &t, localTime(t)
	}
	if !j.endedAt.IsZero() {
		t := j.endedAt
		v.EndedAt, v.Ended = &t, localTime(t)
	}
	if j.total > 0 {
		v.Percent = min(100, j.judged*100/j.total)
	}
	switch {
	case j.state == jobDone && j.judgedAgain:
		v.NewRun = j.next.ID
		v.ResultURL = fmt.Sprintf("/runs/%d/review/%s?from=%d", j.next.ID, j.slug, j.run.ID)
	case j.state == jobDone:
		v.ResultURL = fmt.Sprintf("/runs/%d/review/%s", j.run.ID, j.slug)
	case j.state == jobFailed:
		v.RetryURL = v.URL + "/retry"
		v.Retry = fmt.Sprintf("The decisions stay stored. Retry with POST %s (the 다시 판정 button of the job page; it judges again even when the card already changed), "+
			"or judge dataset %d again from the run list (/runs).", v.RetryURL, j.run.DatasetID)
	}
	return v
}

// jobPage is the page of one job.
type jobPage struct {
	Job     jobView
	Run     runHead
	Refresh int // seconds between the page's own refreshes while it runs
}

// jobHandler answers GET /review/jobs/{job}: the job page for "N", its JSON
// for "N.json" (?after=V waits, up to jobWaitMax, until the job's version
// passes V or it has ended).
func (s *Server) jobHandler(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("job")
	asJSON := strings.HasSuffix(name, ".json")
	id, err := strconv.ParseInt(strings.TrimSuffix(name, ".json"), 10, 64)
	var j *rejudgeJob
	if err == nil && id > 0 {
		j = s.rejudges.byID(id)
	}
	if j == nil {
		if asJSON {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no re-judge %q: unknown, or forgotten (only the last %d finished are kept, none across a restart)", name, maxFinishedJobs)})
			return
		}
		s.fail(w, r, http.StatusNotFound, "그런 다시 판정이 없습니다",
			fmt.Sprintf("번호가 틀렸거나, 끝난 지 오래되어 잊었습니다 (끝난 것은 최근 %d개만, 서버를 다시 띄우면 하나도 남지 않습니다). 검토 화면의 결정 기록은 저장소에 그대로 있습니다.", maxFinishedJobs))
		return
	}
	if asJSON {
		if after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64); err == nil {
			s.rejudges.wait(r.Context(), j, after)
		}
		s.rejudges.mu.Lock()
		v := j.view()
		s.rejudges.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, v)
		return
	}
	s.rejudges.mu.Lock()
	v := j.view()
	s.rejudges.mu.Unlock()
	watch := r.URL.Query().Get("watch") == "1"
	if watch && v.State == jobDone {
		http.Redirect(w, r, v.ResultURL, http.StatusSeeOther)
		return
	}
	p := &jobPage{Job: v, Refresh: jobRefresh}
	if d, err := s.head(r.Context(), v.Run); err == nil {
		p.Run = head(d)
	}
	if v.State == jobQueued || v.State == jobRunning {
		self := v.URL
		if watch {
			self += "?watch=1"
		}
		w.Header().Set("Refresh", fmt.Sprintf("%d; url=%s", jobRefresh, self))
		w.Header().Set("Cache-Control", "no-store")
	}
	vw := s.view(r, p)
	vw.Title, vw.Nav, vw.RunID = fmt.Sprintf("다시 판정 #%d · 실행 #%d", v.ID, v.Run), "review", v.Run
	s.renderView(w, http.StatusOK, "job", vw)
}

// wait returns when j's version passes after, j has ended, ctx ends or
// jobWaitMax has passed.
func (m *jobs) wait(ctx context.Context, j *rejudgeJob, after int64) {
	m.mu.Lock()
	ended := j.state == jobDone || j.state == jobFailed
	ch := j.changed
	fresh := j.version > after
	m.mu.Unlock()
	if ended || fresh {
		return
	}
	t := time.NewTimer(jobWaitMax)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// retryJob answers POST /review/jobs/{job}/retry: a failed job's changes
// are judged again (Plan.Always), as a new job.
func (s *Server) retryJob(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("job"), 10, 64)
	var j *rejudgeJob
	if err == nil && id > 0 {
		j = s.rejudges.byID(id)
	}
	if j == nil {
		s.fail(w, r, http.StatusNotFound, "그런 다시 판정이 없습니다", "번호가 틀렸거나, 끝난 지 오래되어 잊었습니다.")
		return
	}
	s.rejudges.mu.Lock()
	state, plan := j.state, runstore.Plan{Changes: slices.Clone(j.plan.Changes), Always: true}
	s.rejudges.mu.Unlock()
	if state != jobFailed {
		s.fail(w, r, http.StatusConflict, "실패한 다시 판정만 다시 할 수 있습니다", fmt.Sprintf("다시 판정 #%d 은 %s 상태입니다.", id, jobStateLabels[state]))
		return
	}
	next, err := s.rejudges.submit(j.run, j.slug, plan, fmt.Sprintf("다시 판정 #%d 다시 시도", id))
	if err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, "다시 판정을 시작하지 못했습니다", err.Error())
		return
	}
	s.answerJob(w, r, next)
}

// answerJob answers a POST that started or joined a job: 202 with the job's
// JSON for a caller that accepts JSON (fetch), else 303 to the job page,
// which follows the job and goes on to its result (?watch=1).
func (s *Server) answerJob(w http.ResponseWriter, r *http.Request, j *rejudgeJob) {
	s.rejudges.mu.Lock()
	v := j.view()
	s.rejudges.mu.Unlock()
	if wantsJSON(r) {
		w.Header().Set("Location", v.URL)
		writeJSON(w, http.StatusAccepted, v)
		return
	}
	http.Redirect(w, r, v.URL+"?watch=1", http.StatusSeeOther)
}

// wantsJSON: the request's Accept names application/json (a script's fetch).
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// renderView executes page name with a view built by the caller (the job
// page sets its own title and navigation), buffered like render.
func (s *Server) renderView(w http.ResponseWriter, status int, name string, v view) {
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
