package summarize

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"evident/llm"
	"evident/persona"
)

// Tally counts what a Summarizer did in a run.
type Tally struct {
	// Records is the number of records offered to Summarize.
	Records int
	// Calls is the number of answers asked of the model (cache misses that
	// reached the client, failed ones included); Cached the number taken
	// from the cache instead.
	Calls, Cached int
	// Accepted counts records that carry the model's summary.
	Accepted int
	// Reverted counts records whose model answer was checked and rejected,
	// by what rejected it ("check 8", "rule evidence", "proper noun", …).
	Reverted map[string]int
	// Discarded counts answers thrown away whole, by reason ("malformed
	// JSON", "check 1", "verdict differs", …; without the "discarded: "
	// prefix of Summary.RejectedBy).
	Discarded map[string]int
	// Failed counts calls that brought no answer, by reason ("timeout",
	// "budget", "http 500", …; without the "failed: " prefix).
	Failed map[string]int
	// InputTokens and OutputTokens sum the usage of the answers fetched in
	// this run (cached answers cost nothing).
	InputTokens, OutputTokens int
	// CacheErrors counts cache reads and writes that failed (a failed read is
	// a miss).
	CacheErrors int
	// LLM is the client's own tally (requests, retries) when the client
	// reports one (as *llm.Robust does).
	LLM *llm.Tally
}

func newTally() Tally {
	return Tally{Reverted: map[string]int{}, Discarded: map[string]int{}, Failed: map[string]int{}}
}

// Tally returns the counts so far.
func (s *Summarizer) Tally() Tally {
	s.mu.Lock()
	t := s.tally
	t.Reverted, t.Discarded, t.Failed = clone(t.Reverted), clone(t.Discarded), clone(t.Failed)
	s.mu.Unlock()
	if r, ok := s.cfg.Client.(interface{ Tally() llm.Tally }); ok {
		lt := r.Tally()
		t.LLM = &lt
	}
	return t
}

func clone(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// count adds one record's outcome.
func (s *Summarizer) count(out persona.Summary, inTok, outTok int, called bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &s.tally
	t.Records++
	if called {
		t.Calls++
	}
	if out.Cached {
		t.Cached++
	}
	t.InputTokens += inTok
	t.OutputTokens += outTok
	switch r := out.RejectedBy; {
	case out.Source == persona.SummaryModel:
		t.Accepted++
	case strings.HasPrefix(r, "discarded: "):
		t.Discarded[strings.TrimPrefix(r, "discarded: ")]++
	case strings.HasPrefix(r, "failed: "):
		t.Failed[strings.TrimPrefix(r, "failed: ")]++
	default:
		t.Reverted[r]++
	}
}

func (s *Summarizer) cacheError() {
	s.mu.Lock()
	s.tally.CacheErrors++
	s.mu.Unlock()
}

// String is the one-line final tally, e.g.
//
//	summaries 9: calls 8 (requests 9, retries 1), cached 1, accepted 2, reverted 4 (check 8 1 · check 9 1 · check 10 1 · proper noun 1), discarded 2 (check 1 1 · verdict differs 1), failed 1 (timeout 1), tokens in 800 out 200
//
// Reasons within a group come in check order, then alphabetically; the
// parenthesis after calls appears when the client reports an llm.Tally; a
// cache error count is added when there were any.
func (t Tally) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "summaries %d: calls %d", t.Records, t.Calls)
	if t.LLM != nil {
		fmt.Fprintf(&b, " (requests %d, retries %d)", t.LLM.Requests, t.LLM.Retries)
	}
	fmt.Fprintf(&b, ", cached %d, accepted %d", t.Cached, t.Accepted)
	group(&b, "reverted", t.Reverted)
	group(&b, "discarded", t.Discarded)
	group(&b, "failed", t.Failed)
	fmt.Fprintf(&b, ", tokens in %d out %d", t.InputTokens, t.OutputTokens)
	if t.CacheErrors > 0 {
		fmt.Fprintf(&b, ", cache errors %d", t.CacheErrors)
	}
	return b.String()
}

func group(b *strings.Builder, name string, m map[string]int) {
	n := 0
	var keys []string
	for k, v := range m {
		if v > 0 {
			n += v
			keys = append(keys, k)
		}
	}
	fmt.Fprintf(b, ", %s %d", name, n)
	if n == 0 {
		return
	}
	slices.SortFunc(keys, func(a, c string) int {
		na, nc := checkNo(a), checkNo(c)
		switch {
		case na != nc:
			return na - nc
		case a < c:
			return -1
		case a > c:
			return 1
		}
		return 0
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	fmt.Fprintf(b, " (%s)", strings.Join(parts, " · "))
}

// checkNo orders "check N" reasons by N before every other reason.
func checkNo(s string) int {
	if rest, ok := strings.CutPrefix(s, "check "); ok {
		if n, err := strconv.Atoi(rest); err == nil {
			return n
		}
	}
	return 100
}
