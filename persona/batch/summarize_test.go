package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"evident/persona"
	"evident/persona/ingest"
)

// TestSummarizeHook checks Config.Summarize: records of a chunk are
// summarized concurrently up to SummarizeConcurrency even with one worker,
// the hook's summary reaches Out, Record and Summarized, rows stay in input
// order across chunks with rejects among them, and Counted gets the number of
// turns judged.
func TestSummarizeHook(t *testing.T) {
	var b bytes.Buffer
	n := chunkSize + 40
	for i := 0; i < n; i++ {
		if i == 7 {
			b.WriteString("{not json\n")
		}
		fmt.Fprintf(&b, `{"turn_id":"T%d","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.","named_entities":[]}`+"\n", i)
	}
	j := testJudge(t)
	const limit = 4
	var (
		mu        sync.Mutex
		inflight  int
		peak      int
		ready     = make(chan struct{})
		readyOnce sync.Once
	)
	hook := func(ctx context.Context, rec *persona.Record, cx persona.Context) Summary {
		if cx.Turn == nil || cx.Turn.TurnID != rec.TurnID || cx.History == nil {
			t.Errorf("context for %s: %+v", rec.TurnID, cx)
		}
		mu.Lock()
		inflight++
		peak = max(peak, inflight)
		if inflight >= limit {
			readyOnce.Do(func() { close(ready) })
		}
		mu.Unlock()
		select { // wait until limit calls overlap (a fallback keeps a broken pipeline from hanging)
		case <-ready:
		case <-time.After(time.Minute):
		}
		mu.Lock()
		inflight--
		mu.Unlock()
		if rec.TurnID == "T3" {
			return Summary{RejectedBy: "check 10", Detail: "why"} // Source "" reads as rule
		}
		rec.Summary = "모델 요약 " + rec.TurnID + "입니다."
		return Summary{Source: SummaryModel, Cached: rec.TurnID == "T5"}
	}
	var out bytes.Buffer
	var counted int
	var recs, sums []string
	var rejects []Reject
	tally, err := Judge(context.Background(), bytesInput("t.jsonl", ingest.JSONL, b.Bytes()), Config{
		Judge: j, Out: &out, Workers: 1, Summarize: hook, SummarizeConcurrency: limit,
		Counted: func(k int) { counted = k },
		Reject:  func(r Reject) { rejects = append(rejects, r) },
		Record: func(r *persona.Record, _ *persona.Turn) error {
			recs = append(recs, r.TurnID+"|"+r.Summary)
			return nil
		},
		Summarized: func(r *persona.Record, tu *persona.Turn, s Summary) error {
			if r.TurnID != tu.TurnID {
				t.Errorf("record %s with turn %s", r.TurnID, tu.TurnID)
			}
			sums = append(sums, fmt.Sprintf("%s %s %q %v", r.TurnID, s.Source, s.RejectedBy, s.Cached))
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if peak != limit {
		t.Errorf("peak concurrent Summarize calls %d, want %d", peak, limit)
	}
	if counted != n || tally.Judged != n || tally.Rejected != 1 || len(rejects) != 1 || rejects[0].Line != 8 {
		t.Errorf("counted %d, tally %v, rejects %+v", counted, tally, rejects)
	}
	dec := json.NewDecoder(&out)
	for i := 0; i < n; i++ {
		var r persona.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("T%d", i)
		want := "모델 요약 " + id + "입니다."
		if i == 3 {
			want = "답장 한 문장이 반말로 끝나고 1인칭은 로그에 없어 말투만 견줬으며 카드 밖 이름 없이 넘어갔습니다."
		}
		if r.TurnID != id || r.Summary != want {
			t.Fatalf("record %d: %s %q, want %s %q", i, r.TurnID, r.Summary, id, want)
		}
		if recs[i] != id+"|"+want {
			t.Errorf("Record %d got %s", i, recs[i])
		}
	}
	for i, want := range map[int]string{0: `T0 model "" false`, 3: `T3 rule "check 10" false`, 5: `T5 model "" true`} {
		if sums[i] != want {
			t.Errorf("Summarized %d: %s, want %s", i, sums[i], want)
		}
	}
	if len(sums) != n {
		t.Errorf("%d Summarized calls, want %d", len(sums), n)
	}
}

// TestSummarizedWithoutHook: without Summarize every record is the rule's.
func TestSummarizedWithoutHook(t *testing.T) {
	turns := `{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.","named_entities":[]}` + "\n"
	j := testJudge(t)
	var got []Summary
	_, err := Judge(context.Background(), bytesInput("t.jsonl", ingest.JSONL, []byte(turns)), Config{Judge: j,
		Summarized: func(_ *persona.Record, _ *persona.Turn, s Summary) error { got = append(got, s); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != (Summary{Source: SummaryRule}) {
		t.Errorf("got %+v", got)
	}
}

// TestSummarizeGuard: a hook may change only summary and evidence, and only
// when it reports SummaryModel; anything else gets the rules' record back.
func TestSummarizeGuard(t *testing.T) {
	turns := `{"turn_id":"T1","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.","named_entities":[]}` + "\n" +
		`{"turn_id":"T2","session_id":"S","character_id":"C1","model_id":"m","reply_text":"응.","named_entities":[]}` + "\n"
	j := testJudge(t)
	var out bytes.Buffer
	var got []Summary
	tally, err := Judge(context.Background(), bytesInput("t.jsonl", ingest.JSONL, []byte(turns)), Config{Judge: j, Out: &out,
		Summarize: func(_ context.Context, rec *persona.Record, _ persona.Context) Summary {
			rec.Summary = "바꾼 요약입니다."
			if rec.TurnID == "T1" {
				rec.Verdict = persona.ForbiddenTopic // not the hook's to change
				return Summary{Source: SummaryModel}
			}
			rec.Evidence[0].Value = "딴 값" // changed in place, but reported as the rule's
			return Summary{Source: SummaryRule, RejectedBy: "check 9"}
		},
		Summarized: func(_ *persona.Record, _ *persona.Turn, s Summary) error { got = append(got, s); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if tally.ByVerdict[persona.Kept] != 2 || strings.Contains(out.String(), "바꾼") || strings.Contains(out.String(), "딴 값") {
		t.Errorf("tally %v, records\n%s", tally, out.String())
	}
	want := []Summary{{Source: SummaryRule, RejectedBy: "summarizer changed a rule field"}, {Source: SummaryRule, RejectedBy: "check 9"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("outcomes %+v, want %+v", got, want)
	}
}

// An Inline summarizer is called in the worker, one record after another:
// with one worker no two calls overlap and they come in input order, and
// the output is what the concurrent path gives.
func TestInlineSummarizerRunsInTheWorker(t *testing.T) {
	var b bytes.Buffer
	n := 3*chunkSize + 17
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"turn_id":"T%d","session_id":"S%d","character_id":"C1","model_id":"m","reply_text":"응.","named_entities":[]}`+"\n", i, i%5)
	}
	j := testJudge(t)
	run := func(inline bool) (out string, peak int, inOrder bool) {
		var mu sync.Mutex
		inflight, last := 0, -1
		inOrder = true
		hook := func(ctx context.Context, rec *persona.Record, cx persona.Context) Summary {
			mu.Lock()
			inflight++
			peak = max(peak, inflight)
			if cx.Pos <= last {
				inOrder = false
			}
			last = cx.Pos
			mu.Unlock()
			runtime.Gosched() // let another call start, if one may
			mu.Lock()
			inflight--
			mu.Unlock()
			rec.Summary = "모델 요약 " + rec.TurnID + "입니다."
			return Summary{Source: SummaryModel}
		}
		var w bytes.Buffer
		tally, err := Judge(context.Background(), bytesInput("t.jsonl", ingest.JSONL, b.Bytes()), Config{
			Judge: j, Out: &w, Workers: 1, Summarize: hook, SummarizeInline: inline, SummarizeConcurrency: 8,
		})
		if err != nil || tally.Judged != n {
			t.Fatalf("inline %v: %v, %v", inline, tally, err)
		}
		return w.String(), peak, inOrder
	}
	inline, peak, inOrder := run(true)
	if peak != 1 || !inOrder {
		t.Errorf("inline: %d calls overlapped (in input order: %v), want 1 at a time in order", peak, inOrder)
	}
	concurrent, _, _ := run(false)
	if inline != concurrent {
		t.Error("inline and concurrent summaries give different records")
	}
	if want := fmt.Sprintf("모델 요약 T%d입니다.", n-1); !strings.Contains(inline, want) {
		t.Errorf("the last record's summary %q is missing", want)
	}
}
