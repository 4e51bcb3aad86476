package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/persona"
	"evident/persona/ingest"
	queues "evident/persona/review"
	"evident/runstore"
	"evident/store"
)

// The background re-judge (jobs.go) against a real HTTP server on loopback
// and a store file in t.TempDir(). The judge is held at a gate (jobs.gate,
// called after each stored chunk of 512 rows), and tests wait on the job's
// state (its done channel, its JSON), never on time.

const (
	jobCards   = `{"character_id":"C1","name":"하나","honorific_rule":"반말","first_person":"나","canon_entities":["하늘"],"forbidden_topics":["현실 정치"],"entity_roles":[]}` + "\n"
	jobLexicon = "term,topic\n선거,현실 정치\n"
	jobTurns   = 1200 // three chunks of the judge's second pass
)

// jobTables: 1200 turns of 하나 naming 나비, every second one 별이 too and
// every third one 달이, none of them in her canon.
func jobTables() runstore.Tables {
	var b strings.Builder
	for i := range jobTurns {
		names := []string{"나비"}
		if i%2 == 0 {
			names = append(names, "별이")
		}
		if i%3 == 0 {
			names = append(names, "달이")
		}
		js, _ := json.Marshal(names)
		fmt.Fprintf(&b, `{"turn_id":"J%04d","session_id":"S%d","character_id":"C1","model_id":"m","reply_text":"%s랑 같이 가자.","named_entities":%s}`+"\n",
			i, i%40, names[len(names)-1], js)
	}
	table := func(name, body string) ingest.Source {
		f, err := ingest.FormatOf(name)
		if err != nil {
			panic(err)
		}
		return ingest.NewTable(name, f, func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil })
	}
	return runstore.Tables{Turns: table("turns.jsonl", b.String()), Cards: table("cards.jsonl", jobCards), Lexicon: table("lexicon.csv", jobLexicon)}
}

type jobsFixture struct {
	t    *testing.T
	db   *store.DB
	s    *Server
	base string
	http *http.Client
	csrf string
	run  store.RunInfo
}

// newJobsFixture: a store file holding jobTables judged as run 1, the
// screen over it on loopback, a browser-like client with its CSRF token.
func newJobsFixture(t *testing.T) *jobsFixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "evident.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	res, err := runstore.Run(ctx, db, jobTables(), runstore.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Options{Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // before the store closes
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	f := &jobsFixture{t: t, db: db, s: s, base: ts.URL, run: res.Run,
		http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(f.get("/upload").body)
	if m == nil {
		t.Fatal("no csrf token on /upload")
	}
	f.csrf = m[1]
	return f
}

type resp struct {
	status int
	body   string
	header http.Header
}

func (f *jobsFixture) do(req *http.Request) resp {
	f.t.Helper()
	r, err := f.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp{r.StatusCode, string(b), r.Header}
}

func (f *jobsFixture) get(path string) resp {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.base+path, nil)
	return f.do(req)
}

// post sends a form with the CSRF token; accept, when set, is the Accept header.
func (f *jobsFixture) post(path, accept string, kv ...string) resp {
	f.t.Helper()
	form := url.Values{"csrf": {f.csrf}}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Set(kv[i], kv[i+1])
	}
	req, _ := http.NewRequest(http.MethodPost, f.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return f.do(req)
}

// addName posts "add name to 하나's canon" on run 1.
func (f *jobsFixture) addName(name string) resp {
	f.t.Helper()
	return f.post("/runs/1/review/offcanon", "", "character", "C1", "name", name, "value", queues.CanonAdd)
}

// jobOf is the job a decision's 303 goes to.
func (f *jobsFixture) jobOf(r resp) *rejudgeJob {
	f.t.Helper()
	var id int64
	if r.status != http.StatusSeeOther {
		f.t.Fatalf("%d, want 303 to a job page\n%s", r.status, r.body)
	}
	if _, err := fmt.Sscanf(r.header.Get("Location"), "/review/jobs/%d?watch=1", &id); err != nil {
		f.t.Fatalf("303 to %q: %v", r.header.Get("Location"), err)
	}
	j := f.s.rejudges.byID(id)
	if j == nil {
		f.t.Fatalf("no job %d", id)
	}
	return j
}

// state reads the job's JSON at once.
func (f *jobsFixture) state(id int64) jobView {
	f.t.Helper()
	r := f.get(fmt.Sprintf("/review/jobs/%d.json", id))
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		f.t.Fatalf("job %d JSON: %d %s", id, r.status, r.body)
	}
	var v jobView
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		f.t.Fatal(err)
	}
	return v
}

// gate holds the judging of job hold at its first stored chunk until
// release is closed (or the jobs' context ends); at is closed once it is
// held there.
type gate struct {
	hold    int64
	at      chan struct{}
	release chan struct{}
	once    sync.Once
}

func holdJob(f *jobsFixture, id int64) *gate {
	g := &gate{hold: id, at: make(chan struct{}), release: make(chan struct{})}
	f.s.rejudges.mu.Lock()
	f.s.rejudges.gate = func(ctx context.Context, j *rejudgeJob) error {
		if j.id != g.hold {
			return nil
		}
		held := false
		g.once.Do(func() { held = true })
		if !held {
			return nil
		}
		close(g.at)
		select {
		case <-g.release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.s.rejudges.mu.Unlock()
	return g
}

// recordsOf lists a run's records.
func recordsOf(t *testing.T, db *store.DB, id int64) []persona.Record {
	t.Helper()
	recs, err := db.Records(context.Background(), id, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// syncRecords is what the synchronous path (runstore.ApplyCanon, one
// decision after the other, as the screen did inside the request) gives
// for the names added in order, on a store of its own.
func syncRecords(t *testing.T, names ...string) []persona.Record {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := runstore.Run(ctx, db, jobTables(), runstore.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	run := res.Run
	for _, n := range names {
		if _, err := db.Decide(ctx, store.Decision{Queue: store.QueueOffCanon, Key: queues.OffCanonKey("C1", n), Value: queues.CanonAdd, Who: "test"}); err != nil {
			t.Fatal(err)
		}
		next, judged, err := runstore.ApplyCanon(ctx, db, res.Run, "C1", n, runstore.Options{})
		if err != nil || !judged {
			t.Fatalf("ApplyCanon(%s) = %v, %v", n, judged, err)
		}
		run = next
	}
	return recordsOf(t, db, run.ID)
}

func runCount(t *testing.T, db *store.DB) int {
	t.Helper()
	runs, err := db.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

func TestRejudgeRunsInTheBackground(t *testing.T) {
	f := newJobsFixture(t)
	g := holdJob(f, 1)
	accepted := f.addName("나비")
	j := f.jobOf(accepted)
	<-g.at // held after its first chunk: the POST above answered before the judging ended

	t.Run("the decision is stored and the answer came before the re-judge ended", func(t *testing.T) {
		select {
		case <-j.done:
			t.Fatal("the job ended while held")
		default:
		}
		ds, err := f.db.Decisions(context.Background(), store.QueueOffCanon)
		if err != nil || len(ds) != 1 || ds[0].Key != "C1/나비" || ds[0].Value != "add" {
			t.Errorf("decisions %+v, %v", ds, err)
		}
	})
	t.Run("the job's JSON says running, 512 of 1200 rows judged, with its decision and start", func(t *testing.T) {
		v := f.state(j.id)
		if v.State != jobRunning || v.Judged != 512 || v.Total != jobTurns || v.Run != 1 || v.StartedAt == nil || v.NewRun != 0 {
			t.Errorf("%+v", v)
		}
		if want := []string{"나비 · 하나: 카드 설정에 더함"}; !reflect.DeepEqual(v.Decisions, want) {
			t.Errorf("decisions %q, want %q", v.Decisions, want)
		}
	})
	t.Run("the job page refreshes itself and shows the progress", func(t *testing.T) {
		r := f.get("/review/jobs/1?watch=1")
		if r.status != http.StatusOK || r.header.Get("Refresh") != "2; url=/review/jobs/1?watch=1" {
			t.Fatalf("%d, Refresh %q", r.status, r.header.Get("Refresh"))
		}
		for _, want := range []string{`data-state="running"`, `<progress value="512" max="1200">42%</progress>`, "512 / 1200회차", "판정하는 중"} {
			if !strings.Contains(r.body, want) {
				t.Errorf("job page lacks %q", want)
			}
		}
	})
	t.Run("pages of the source run answer while the job is held mid-run, and the review page lists the job", func(t *testing.T) {
		for _, path := range []string{"/runs/1", "/runs/1/review/forbidden", "/runs", "/runs/1/records.jsonl"} {
			if r := f.get(path); r.status != http.StatusOK {
				t.Errorf("GET %s: %d", path, r.status)
			}
		}
		body := f.get("/runs/1/review/offcanon").body
		for _, want := range []string{`id="jobs"`, `<a href="/review/jobs/1">다시 판정 #1</a>`, `data-state="running"`, "512 / 1200회차"} {
			if !strings.Contains(body, want) {
				t.Errorf("review page lacks %q", want)
			}
		}
		if n := runCount(t, f.db); n != 1 {
			t.Errorf("%d runs visible while the new one is written, want 1", n)
		}
	})
	close(g.release)
	<-j.done
	t.Run("then done: the new run 2 holds what the synchronous path gives", func(t *testing.T) {
		v := f.state(j.id)
		if v.State != jobDone || !v.JudgedAgain || v.NewRun != 2 || v.Judged != jobTurns || v.EndedAt == nil ||
			v.ResultURL != "/runs/2/review/offcanon?from=1" || v.Error != "" {
			t.Errorf("%+v", v)
		}
		if r := f.get("/review/jobs/1?watch=1"); r.status != http.StatusSeeOther || r.header.Get("Location") != v.ResultURL {
			t.Errorf("watching a done job: %d → %q", r.status, r.header.Get("Location"))
		}
		if r := f.get("/review/jobs/1"); r.status != http.StatusOK || r.header.Get("Refresh") != "" || !strings.Contains(r.body, `<a href="/runs/2/review/offcanon?from=1">`) {
			t.Errorf("done page: %d, Refresh %q", r.status, r.header.Get("Refresh"))
		}
		got, want := recordsOf(t, f.db, 2), syncRecords(t, "나비")
		if len(got) != jobTurns || !reflect.DeepEqual(got, want) {
			t.Errorf("run 2 has %d records, unlike the synchronous path's %d", len(got), len(want))
		}
		if r := f.get("/runs/2/review/offcanon?from=1"); r.status != http.StatusOK || !strings.Contains(r.body, "실행 #1</a> → 실행 #2") {
			t.Errorf("result page %d", r.status)
		}
	})
}

func TestRejudgeShutdownMidJob(t *testing.T) {
	f := newJobsFixture(t)
	g := holdJob(f, 1)
	j := f.jobOf(f.addName("나비"))
	<-g.at
	f.s.Close() // as ListenAndServe does once the HTTP server has shut down
	select {
	case <-j.done:
	default:
		t.Fatal("Close returned before the job ended")
	}
	ctx := context.Background()
	if n := runCount(t, f.db); n != 1 {
		t.Errorf("%d runs after a shutdown mid-job, want 1 (the new run rolled back)", n)
	}
	if _, err := f.db.Run(ctx, 2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run 2: %v", err)
	}
	if ds, _ := f.db.Decisions(ctx, store.QueueOffCanon); len(ds) != 1 || ds[0].Key != "C1/나비" {
		t.Errorf("the decision is not kept: %+v", ds)
	}
	cards, _ := f.db.Cards(ctx, f.run.DatasetID)
	if slices.Contains(cards[0].CanonEntities, "나비") {
		t.Errorf("the card kept 나비 with no run judged from it: %v", cards[0].CanonEntities)
	}
	v := f.state(j.id)
	if v.State != jobFailed || !strings.Contains(v.Error, "the server stopped before the re-judge ended") {
		t.Errorf("%+v", v)
	}
	t.Run("the same decision after shutdown is kept once and says it was not judged again", func(t *testing.T) {
		r := f.addName("나비")
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "결정은 저장했지만 다시 판정을 시작하지 못했습니다") {
			t.Errorf("%d\n%s", r.status, r.body)
		}
		if log, _ := f.db.DecisionLog(ctx, store.QueueOffCanon); len(log) != 1 {
			t.Errorf("%d decisions logged, want the first one alone", len(log))
		}
	})
}

func TestRejudgeTwoAcceptsOnOneRun(t *testing.T) {
	f := newJobsFixture(t)
	g := holdJob(f, 1)
	first := f.jobOf(f.addName("나비"))
	<-g.at
	second := f.jobOf(f.addName("별이"))
	t.Run("a second accept while the first runs is queued behind it", func(t *testing.T) {
		v := f.state(second.id)
		if second.id == first.id || v.State != jobQueued || v.Judged != 0 || v.StartedAt != nil {
			t.Errorf("%+v", v)
		}
		if r := f.get(v.URL); r.header.Get("Refresh") == "" || !strings.Contains(r.body, `data-state="queued"`) {
			t.Errorf("queued page: Refresh %q", r.header.Get("Refresh"))
		}
	})
	t.Run("a third is coalesced into the queued one", func(t *testing.T) {
		third := f.jobOf(f.addName("달이"))
		v := f.state(second.id)
		if third != second || !reflect.DeepEqual(v.Decisions, []string{"별이 · 하나: 카드 설정에 더함", "달이 · 하나: 카드 설정에 더함"}) {
			t.Errorf("third → job %d; job %d decisions %q", third.id, second.id, v.Decisions)
		}
	})
	close(g.release)
	<-first.done
	<-second.done
	t.Run("two re-judges for three decisions: run 2 has 나비, run 3 all three, as the synchronous path", func(t *testing.T) {
		a, b := f.state(first.id), f.state(second.id)
		if a.State != jobDone || a.NewRun != 2 || b.State != jobDone || b.NewRun != 3 || b.ResultURL != "/runs/3/review/offcanon?from=1" {
			t.Fatalf("%+v\n%+v", a, b)
		}
		if n := runCount(t, f.db); n != 3 {
			t.Errorf("%d runs, want 3", n)
		}
		if !reflect.DeepEqual(recordsOf(t, f.db, 2), syncRecords(t, "나비")) {
			t.Error("run 2 differs from the synchronous path")
		}
		got := recordsOf(t, f.db, 3)
		if !reflect.DeepEqual(got, syncRecords(t, "나비", "별이", "달이")) {
			t.Error("run 3 differs from the synchronous path")
		}
		off := 0
		for _, r := range got {
			if r.Verdict == persona.OffCanon {
				off++
			}
		}
		if off != 0 {
			t.Errorf("%d off-canon turns in run 3, want 0 (every name is in the canon)", off)
		}
	})
}

func TestRejudgeFailure(t *testing.T) {
	f := newJobsFixture(t)
	f.s.rejudges.gate = func(context.Context, *rejudgeJob) error { return errors.New("disk full (test)") }
	j := f.jobOf(f.addName("나비"))
	<-j.done
	v := f.state(j.id)
	t.Run("a failed re-judge shows failed with the error and how to retry", func(t *testing.T) {
		if v.State != jobFailed || !strings.Contains(v.Error, "disk full (test)") || !strings.Contains(v.Error, "the decision is stored but judging again failed") ||
			!strings.Contains(v.Retry, "POST /review/jobs/1/retry") || v.NewRun != 0 {
			t.Errorf("%+v", v)
		}
		r := f.get("/review/jobs/1?watch=1")
		for _, want := range []string{`data-state="failed"`, "disk full (test)", `action="/review/jobs/1/retry"`, "결정은 저장되어 있습니다"} {
			if !strings.Contains(r.body, want) {
				t.Errorf("failed page lacks %q", want)
			}
		}
		if r.status != http.StatusOK || r.header.Get("Refresh") != "" {
			t.Errorf("%d, Refresh %q", r.status, r.header.Get("Refresh"))
		}
		if n := runCount(t, f.db); n != 1 {
			t.Errorf("%d runs", n)
		}
		if ds, _ := f.db.Decisions(context.Background(), store.QueueOffCanon); len(ds) != 1 {
			t.Errorf("decisions %+v", ds)
		}
	})
	t.Run("retry needs the CSRF token, then judges again into run 2", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, f.base+"/review/jobs/1/retry", nil)
		if r := f.do(req); r.status != http.StatusForbidden {
			t.Errorf("without the token: %d", r.status)
		}
		f.s.rejudges.mu.Lock()
		f.s.rejudges.gate = nil
		f.s.rejudges.mu.Unlock()
		again := f.jobOf(f.post("/review/jobs/1/retry", ""))
		<-again.done
		v := f.state(again.id)
		if again.id != 2 || v.State != jobDone || v.NewRun != 2 || !reflect.DeepEqual(v.Decisions, []string{"다시 판정 #1 다시 시도"}) {
			t.Errorf("%+v", v)
		}
		if !reflect.DeepEqual(recordsOf(t, f.db, 2), syncRecords(t, "나비")) {
			t.Error("run 2 differs from the synchronous path")
		}
		if r := f.post("/review/jobs/2/retry", ""); r.status != http.StatusConflict {
			t.Errorf("retrying a done job: %d", r.status)
		}
	})
}

func TestRejudgeAnswersScriptsWithJSON(t *testing.T) {
	f := newJobsFixture(t)
	g := holdJob(f, 1)
	r := f.post("/runs/1/review/offcanon", "application/json", "character", "C1", "name", "나비", "value", "add")
	<-g.at
	var v jobView
	if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != http.StatusAccepted || r.header.Get("Location") != "/review/jobs/1" ||
		v.ID != 1 || v.URL != "/review/jobs/1" || v.Run != 1 {
		t.Errorf("%d %q %+v %v", r.status, r.header.Get("Location"), v, err)
	}
	t.Run("the JSON long poll answers when the job changes", func(t *testing.T) {
		before := f.state(1)
		done := make(chan jobView)
		go func() {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/review/jobs/1.json?after=%d", f.base, before.Version), nil)
			resp, err := f.http.Do(req)
			var v jobView
			if err == nil {
				json.NewDecoder(resp.Body).Decode(&v)
				resp.Body.Close()
			}
			done <- v
		}()
		close(g.release)
		got := <-done
		if got.Version <= before.Version {
			t.Errorf("version %d after %d", got.Version, before.Version)
		}
	})
	t.Run("a decision that changes nothing starts no job", func(t *testing.T) {
		<-f.s.rejudges.byID(1).done // the card has 나비 now
		r := f.post("/runs/1/review/offcanon", "application/json", "character", "C1", "name", "나비", "value", "add")
		if r.status != http.StatusOK || !strings.Contains(r.body, `"judged_again":false`) || !strings.Contains(r.body, `"next":"/runs/1/review/offcanon#n-decided"`) {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
	t.Run("an unknown job is 404 in HTML and JSON", func(t *testing.T) {
		for _, path := range []string{"/review/jobs/99", "/review/jobs/99.json", "/review/jobs/x"} {
			if r := f.get(path); r.status != http.StatusNotFound {
				t.Errorf("GET %s: %d", path, r.status)
			}
		}
	})
}

func TestFinishedJobsAreBounded(t *testing.T) {
	m := &jobs{now: time.Now, active: map[int64]*rejudgeJob{}, waiting: map[int64]*rejudgeJob{}}
	running := &rejudgeJob{id: 1, state: jobRunning}
	m.all = append(m.all, running)
	for i := range maxFinishedJobs + 10 {
		m.all = append(m.all, &rejudgeJob{id: int64(i + 2), state: []jobState{jobDone, jobFailed}[i%2]})
	}
	m.trim()
	if len(m.all) != maxFinishedJobs+1 || m.all[0] != running || m.all[1].id != 12 || m.all[len(m.all)-1].id != maxFinishedJobs+11 {
		t.Errorf("%d kept, first %d, second %d", len(m.all), m.all[0].id, m.all[1].id)
	}
}
