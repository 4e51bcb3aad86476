package runstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"evident/persona"
	"evident/persona/batch"
)

// The ten checks of a run computed as it is judged (issue 13: memory flat in
// run size). batch.Check holds the whole turn table in memory to look turns
// up by id; a run's summary instead checks each record inside the judge's
// workers, where batch hands a Summarizer the record's own check context
// (the turn, its position and the session index of the run's first pass:
// persona.Context). checker is that Summarizer: it runs persona.Judge.Check
// on the record (and on a model's rewrite when a real summarizer runs too),
// and the run's sink takes the outcome of each record as it stores it, in
// run order, into a batch.CheckReport equal to what batch.Check reports
// over the stored run (tested on the demo and on generated logs).

// Schema validation of a record (persona.ValidateJSON) costs about 25 µs,
// as much as judging it: the checks validate the first schemaAll records of
// a run (by input position) and every schemaEvery-th after, and say how
// many (StoredChecks.SchemaChecked).
const (
	schemaAll   = 10000
	schemaEvery = 100
)

// outcome is one record's failed checks (passes are the rest of the ten)
// and its schema error ("" when valid or not validated).
type outcome struct {
	fails     []persona.CheckResult
	schema    string
	validated bool
}

// checked is what checker found for one turn: the rules' record and, when a
// summarizer reported a model's rewrite, the rewritten one.
type checked struct {
	rule, model *outcome
}

// checker is a batch.Summarizer that checks each record and passes it on
// to inner (nil: the rules' summary, as batch does without a summarizer).
type checker struct {
	j     *persona.Judge
	inner batch.Summarizer

	mu  sync.Mutex
	out map[string]checked // by turn_id, until the sink takes it
}

func newChecker(j *persona.Judge, inner batch.Summarizer) *checker {
	return &checker{j: j, inner: inner, out: map[string]checked{}}
}

// Summarize implements batch.Summarizer.
func (c *checker) Summarize(ctx context.Context, rec *persona.Record, cx persona.Context) persona.Summary {
	id := cx.Turn.TurnID
	ck := checked{rule: c.check(rec, cx)}
	s := persona.Summary{Source: persona.SummaryRule}
	if c.inner != nil {
		s = c.inner.Summarize(ctx, rec, cx)
		if s.Source == persona.SummaryModel {
			ck.model = c.check(rec, cx)
		}
	}
	c.mu.Lock()
	c.out[id] = ck
	c.mu.Unlock()
	return s
}

// Inline implements batch.Inline: the checks never wait, so they run in
// the worker unless inner (a model) may.
func (c *checker) Inline() bool {
	if c.inner == nil {
		return true
	}
	in, ok := c.inner.(batch.Inline)
	return ok && in.Inline()
}

// Counted passes the turn count on to inner when it wants it.
func (c *checker) Counted(n int) {
	if k, ok := c.inner.(batch.Counter); ok {
		k.Counted(n)
	}
}

func (c *checker) check(rec *persona.Record, cx persona.Context) *outcome {
	o := &outcome{}
	for _, r := range c.j.Check(rec, cx) {
		if !r.Pass {
			o.fails = append(o.fails, r)
		}
	}
	if cx.Pos < schemaAll || cx.Pos%schemaEvery == 0 {
		o.validated = true
		b, err := json.Marshal(rec)
		if err == nil {
			err = persona.ValidateJSON(b)
		}
		if err != nil {
			o.schema = err.Error()
		}
	}
	return o
}

// take removes and returns the outcome for the stored record jd: the
// rewrite's when batch kept the model's summary (Summary.Source
// SummaryModel), else the rules'.
func (c *checker) take(jd *batch.Judged) (*outcome, bool) {
	c.mu.Lock()
	ck, ok := c.out[jd.Turn.TurnID]
	delete(c.out, jd.Turn.TurnID)
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	if jd.Summary.Source == persona.SummaryModel && ck.model != nil {
		return ck.model, true
	}
	return ck.rule, true
}

// checkTally builds the run's StoredChecks from the records in run order.
type checkTally struct {
	sc StoredChecks
}

func newCheckTally() *checkTally {
	return &checkTally{}
}

func (t *checkTally) fail(f batch.Failure) {
	t.sc.Failures++
	if len(t.sc.Report.Failures) < MaxStoredFailures {
		t.sc.Report.Failures = append(t.sc.Report.Failures, f)
	}
}

// add counts one stored record (line: its 1-based position in the run, as
// in the run's records read as a verdict file) with its outcome; ok false
// when the checker has none (a record the workers did not see: a failure).
func (t *checkTally) add(line int, turnID string, o *outcome, ok bool) {
	rep := &t.sc.Report
	rep.Records++
	if !ok {
		t.fail(batch.Failure{Line: line, TurnID: turnID, Reason: "the record was not checked as it was judged"})
		return
	}
	if o.validated {
		t.sc.SchemaChecked++
		if o.schema != "" {
			rep.SchemaFail++
			t.fail(batch.Failure{Line: line, TurnID: turnID, Reason: "schema: " + o.schema})
		}
	}
	failed := [10]bool{}
	for _, f := range o.fails {
		if f.ID < 1 || f.ID > 10 {
			t.fail(batch.Failure{Line: line, TurnID: turnID, Reason: fmt.Sprintf("check %d is not one of the ten: %s", f.ID, f.Reason)})
			continue
		}
		failed[f.ID-1] = true
		rep.Fail[f.ID-1]++
		t.fail(batch.Failure{Line: line, TurnID: turnID, Check: f.ID, Reason: f.Reason})
	}
	for i, f := range failed {
		if !f {
			rep.Pass[i]++
		}
	}
}
