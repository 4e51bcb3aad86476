package summarize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"evident/llm"
	"evident/persona"
	"evident/persona/batch"
	"evident/persona/ingest"
	"evident/store"
)

// echo is a fake llm.Client that answers every request with its rule record
// and a new summary, counting calls and the most in flight at once.
type echo struct {
	calls, inflight, peak atomic.Int32
	// overlap, when set, makes calls wait until that many are in flight
	// (once), to show that they overlap.
	overlap int32
	once    sync.Once
	gate    chan struct{}
}

const echoSummary = "규칙이 적은 근거를 그대로 두고 요약만 다시 썼습니다."

func (e *echo) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	e.calls.Add(1)
	n := e.inflight.Add(1)
	defer e.inflight.Add(-1)
	for {
		p := e.peak.Load()
		if n <= p || e.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if e.overlap > 0 {
		if n >= e.overlap {
			e.once.Do(func() { close(e.gate) })
		}
		select {
		case <-e.gate:
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	var in struct {
		RuleRecord map[string]any `json:"rule_record"`
	}
	if err := json.Unmarshal([]byte(req.Messages[0].Text), &in); err != nil {
		return llm.Response{}, err
	}
	in.RuleRecord["summary"] = echoSummary
	b, _ := json.Marshal(in.RuleRecord)
	return llm.Response{Text: string(b), JSON: b, InputTokens: 100, OutputTokens: 10}, nil
}

// judgeSeed runs the seed fixture through batch with s and returns the
// output and the sidecar lines.
func judgeSeed(t *testing.T, j *persona.Judge, s *Summarizer, workers, conc int) (string, []LogLine) {
	t.Helper()
	var out bytes.Buffer
	var lines []LogLine
	_, err := batchJudge(context.Background(), seedInput(t, "turns.jsonl"), batchConfig{
		Judge: j, Out: &out, Workers: workers, Summarize: s.Summarize, SummarizeConcurrency: conc,
		Summarized: func(r *persona.Record, _ *persona.Turn, o persona.Summary) error {
			lines = append(lines, Line(r, o))
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), lines
}

// TestBatchRunAndCache judges the seed fixture with a summarizer on one
// worker: calls overlap up to the client's limit, every record carries the
// model's summary in input order and passes `evident check`'s ten checks
// with the full turn table, and a second run with the same store-backed cache
// sends nothing.
func TestBatchRunAndCache(t *testing.T) {
	ctx := context.Background()
	j, cards := seedJudge(t)
	db, err := store.Open(ctx, store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	e := &echo{overlap: 4, gate: make(chan struct{})}
	s1, err := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(e, llm.Policy{Concurrency: 4, Timeout: 10 * time.Second}), Provider: ProviderOpenAI, Model: "m", Cache: store.SummaryCache{DB: db}})
	if err != nil {
		t.Fatal(err)
	}
	out, lines := judgeSeed(t, j, s1, 1, 4)
	if p := e.peak.Load(); p != 4 {
		t.Errorf("peak calls in flight %d, want 4 on one worker", p)
	}
	if got := s1.Tally().String(); got != "summaries 8: calls 8 (requests 8, retries 0), cached 0, accepted 8, reverted 0, discarded 0, failed 0, tokens in 800 out 80" {
		t.Errorf("first run tally %s", got)
	}
	wantIDs := []string{"T-004450", "T-004468", "T-004471", "T-004519", "T-004530", "T-004602", "T-004611", "T-004631"}
	for i, l := range lines {
		if l.TurnID != wantIDs[i] || l.SummarySource != "model" || l.RejectedBy != nil || l.Cached {
			t.Errorf("sidecar %d: %+v", i, l)
		}
	}
	if strings.Count(out, echoSummary) != 8 {
		t.Errorf("output does not carry the model's summaries:\n%s", out)
	}
	// The records pass the checks as `evident check` runs them.
	dir := t.TempDir()
	vf := filepath.Join(dir, "v.jsonl")
	if err := os.WriteFile(vf, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := batch.Check(ctx, mustFile(t, vf), seedInput(t, "turns.jsonl"), j)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Records != 8 {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Errorf("check report:\n%s", b.String())
	}

	// Second run, new summarizer, same database: nothing is sent.
	e2 := &echo{}
	s2, _ := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(e2, llm.Policy{}), Provider: ProviderOpenAI, Model: "m", Cache: store.SummaryCache{DB: db}})
	out2, lines2 := judgeSeed(t, j, s2, 2, 8)
	if e2.calls.Load() != 0 {
		t.Errorf("re-run sent %d calls", e2.calls.Load())
	}
	if out2 != out {
		t.Error("re-run from the cache wrote other records")
	}
	for _, l := range lines2 {
		if !l.Cached || l.SummarySource != "model" {
			t.Errorf("re-run sidecar %+v", l)
		}
	}
	if got := s2.Tally().String(); got != "summaries 8: calls 0 (requests 0, retries 0), cached 8, accepted 8, reverted 0, discarded 0, failed 0, tokens in 0 out 0" {
		t.Errorf("re-run tally %s", got)
	}

	// Another model or provider is another key.
	e3 := &echo{}
	s3, _ := New(Config{Judge: j, Cards: cards, Client: e3, Provider: ProviderAnthropic, Model: "m", Cache: store.SummaryCache{DB: db}})
	judgeSeed(t, j, s3, 2, 8)
	if e3.calls.Load() != 8 {
		t.Errorf("another provider reused the cache: %d calls", e3.calls.Load())
	}
	if got := s3.Tally().String(); !strings.HasPrefix(got, "summaries 8: calls 8, cached 0,") {
		t.Errorf("tally without an llm.Tally: %s", got)
	}
}

func mustFile(t *testing.T, path string) ingest.Source {
	t.Helper()
	in, err := ingest.File(path)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestBudget: once the run's call budget is spent, the rest keep the rules'
// sentence with "failed: budget".
func TestBudget(t *testing.T) {
	j, cards := seedJudge(t)
	e := &echo{}
	s, _ := New(Config{Judge: j, Cards: cards, Client: llm.Wrap(e, llm.Policy{MaxCalls: 3, Concurrency: 1}), Provider: ProviderOpenAI, Model: "m"})
	_, lines := judgeSeed(t, j, s, 1, 1)
	var sources []string
	for _, l := range lines {
		r := "-"
		if l.RejectedBy != nil {
			r = *l.RejectedBy
		}
		sources = append(sources, l.SummarySource+":"+r)
	}
	want := "model:- model:- model:- rule:failed: budget rule:failed: budget rule:failed: budget rule:failed: budget rule:failed: budget"
	if strings.Join(sources, " ") != want {
		t.Errorf("sidecar %v", sources)
	}
	if got := s.Tally().String(); got != "summaries 8: calls 8 (requests 3, retries 0), cached 0, accepted 3, reverted 0, discarded 0, failed 5 (budget 5), tokens in 300 out 30" {
		t.Errorf("tally %s", got)
	}
}

// TestStoreSidecar stores a run with each record's summary outcome
// (StoreOption) and the prompt version, and reads them back as the screen
// would.
func TestStoreSidecar(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j, _ := seedJudge(t)
	recs := seedRecords(t, j)
	w, err := db.BeginRun(ctx, store.RunMeta{Profile: "seed", PromptVersion: PromptVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	tally := persona.Tally{ByVerdict: map[persona.Verdict]int{}}
	for _, c := range []struct {
		id string
		s  persona.Summary
	}{{"T-004468", persona.Summary{Source: persona.SummaryModel}}, {"T-004471", persona.Summary{Source: persona.SummaryRule, RejectedBy: "check 9"}}} {
		r := recs[c.id]
		if err := w.Add(r.rec, r.cx.Turn, store.WithSummary(c.s.Source, c.s.RejectedBy)); err != nil {
			t.Fatal(err)
		}
		tally.Judged++
		tally.ByVerdict[r.rec.Verdict]++
	}
	info, err := w.Commit(tally)
	if err != nil {
		t.Fatal(err)
	}
	if info.PromptVersion != PromptVersion {
		t.Errorf("prompt version %q", info.PromptVersion)
	}
	es, err := db.Entries(ctx, info.ID, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].SummarySource != persona.SummaryModel || es[0].SummaryRejectedBy != "" ||
		es[1].SummarySource != persona.SummaryRule || es[1].SummaryRejectedBy != "check 9" {
		t.Errorf("entries %+v", es)
	}
}

// TestBuffered holds writes back while a run's transaction holds the write
// lock, serves them from memory meanwhile, and writes them on Flush.
func TestBuffered(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := db.BeginRun(ctx, store.RunMeta{Profile: "seed"}) // holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuffered(store.SummaryCache{DB: db})
	e := persona.CacheEntry{Key: "k", PromptVersion: PromptVersion, Provider: "openai", Model: "m", Answer: persona.CachedAnswer{Text: "{}", JSON: json.RawMessage(`{}`), InputTokens: 5}}
	if err := b.Put(ctx, e); err != nil {
		t.Fatal(err)
	}
	if a, ok, err := b.Get(ctx, "k"); !ok || err != nil || a.InputTokens != 5 {
		t.Errorf("pending get %+v %v %v", a, ok, err)
	}
	if _, ok, _ := (store.SummaryCache{DB: db}).Get(ctx, "k"); ok {
		t.Error("written before Flush")
	}
	if _, err := w.Commit(persona.Tally{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	a, ok, err := (store.SummaryCache{DB: db}).Get(ctx, "k")
	if !ok || err != nil || string(a.JSON) != `{}` || a.InputTokens != 5 {
		t.Errorf("after Flush: %+v %v %v", a, ok, err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Errorf("second Flush: %v", err)
	}
}

// failingCache fails every read and write.
type failingCache struct{}

func (failingCache) Get(context.Context, string) (persona.CachedAnswer, bool, error) {
	return persona.CachedAnswer{}, false, errors.New("disk gone")
}
func (failingCache) Put(context.Context, persona.CacheEntry) error { return errors.New("disk gone") }

// TestCacheErrorsAreNotFatal: a broken cache costs calls, never records.
func TestCacheErrorsAreNotFatal(t *testing.T) {
	j, cards := seedJudge(t)
	s, _ := New(Config{Judge: j, Cards: cards, Client: &echo{}, Provider: ProviderOpenAI, Model: "m", Cache: failingCache{}})
	judgeSeed(t, j, s, 1, 2)
	if got := s.Tally().String(); got != "summaries 8: calls 8, cached 0, accepted 8, reverted 0, discarded 0, failed 0, tokens in 800 out 80, cache errors 16" {
		t.Errorf("tally %s", got)
	}
}
