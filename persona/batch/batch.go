// Package batch streams whole input tables through the character-card judge:
// a Run reads its chat_turn ingest.Source (a file, an upload, a stored
// dataset: the pipeline takes sources, not files) twice (once to index
// sessions and turn ids, once to judge), decodes and judges rows on all cores,
// and writes records in input order with every row accounted for as a record
// or a reject (spec persona.md "Output").
//
// It owns the pipeline (Run: pass1 indexes, pass2 judges; results go to one
// Sink: records, rejects, tally), the rejects policy (malformed row, missing
// required column, unknown character_id, duplicate turn_id) and the run
// tally. It must not decide verdicts (persona does) or parse cells
// (persona/ingest does), and must not import store, runstore, web, llm or
// cmd. It runs an optional Summarizer (e.g. persona/summarize) inside its
// workers but decides no summary itself. Rows arrive in chunks
// (ingest.RowReader.ReadRows), one interface call per chunk, never per row.
//
// # Why two passes, and what stays in memory
//
// Session order is created_at only when every turn of the session has one,
// so whether an earlier input row is an earlier turn is known only after the
// whole session was read. The first pass collects what the rules need from
// other rows: which rows are turns (the first row of each turn_id) and, for
// each recall question, the earliest earlier mention of the asked entity in
// its session. It keeps them in external sorts (index.go: sorted runs in a
// temporary file under Config.TempDir, removed at the end), so memory does not
// grow with the input: about 90 MiB of resident memory for 100,000 or
// 1,000,000 turns (bench/judge.sh). The second pass re-reads the file,
// reading the first pass's notes in step with it, and judges. Positions are
// int32: a table holds at most 2^31-1 rows.
//
// Check is different: it holds the turn table in memory, because the ten
// checks look up any turn by id for any record.
package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"reflect"
	"runtime"
	"slices"

	"sync"

	jsoniter "github.com/json-iterator/go"

	"evident/persona"
	"evident/persona/cardfile"
	"evident/persona/ingest"
	"evident/persona/speech"
)

// readAll reads every row of a small table (cards, lexicon) with decode,
// turning bad rows into rejects.
func readAll[T any](in ingest.Source, decode func(ingest.Raw) (T, error)) (out []T, lines []int, rej []persona.Reject, err error) {
	rows, err := in.Open()
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	var buf []ingest.Raw
	for {
		var rerr error
		buf, rerr = rows.ReadRows(buf[:0], chunkSize, chunkBytes)
		if rerr != nil && rerr != io.EOF {
			return nil, nil, nil, rerr
		}
		for _, raw := range buf {
			v, err := decodeRaw(raw, decode)
			if err != nil {
				rej = append(rej, persona.RejectOf(in.Name(), raw.Line, nil, err))
				continue
			}
			out = append(out, v)
			lines = append(lines, raw.Line)
		}
		if rerr == io.EOF {
			return out, lines, rej, nil
		}
	}
}

func decodeRaw[T any](raw ingest.Raw, decode func(ingest.Raw) (T, error)) (T, error) {
	if raw.Err != nil {
		var zero T
		return zero, raw.Err
	}
	return decode(raw)
}

// LoadCards reads the character_card table. A row that cannot be decoded, or
// that repeats an accepted character_id, is a reject.
//
// The input may instead be one Character Card V2/V3 file (issue 3): a .png or
// .charx (ingest.CardFile), or a .json whose first character is '{' (a card
// object, where a table would be an array). Its card is read with
// persona/cardfile; fields the card's data.extensions["evident/persona"] lacks
// are prefilled as cardfile documents and used as they are (CardNotes lists
// them for the creator to confirm). A file that is not a usable card is an
// error naming it.
func LoadCards(in ingest.Source) ([]persona.Card, []persona.Reject, error) {
	if f, ok, err := cardFile(in); err != nil {
		return nil, nil, err
	} else if ok {
		c, _ := f.Card("")
		if c.HonorificRule == "" || c.FirstPerson == "" {
			return nil, []persona.Reject{{File: in.Name(), Reason: fmt.Sprintf("card %q: honorific_rule and first_person are neither in data.extensions[%q] nor guessable from its Korean texts; set them with evident card write", c.Name, cardfile.ExtensionKey)}}, nil
		}
		return []persona.Card{c}, nil, nil
	}
	cards, lines, rej, err := readAll(in, ingest.DecodeCard)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]int{}
	out := cards[:0]
	for i, c := range cards {
		if at, dup := seen[c.CharacterID]; dup {
			rej = append(rej, persona.Reject{File: in.Name(), Line: lines[i],
				Reason: fmt.Sprintf("duplicate character_id %q (first at line %d)", c.CharacterID, at)})
			continue
		}
		seen[c.CharacterID] = lines[i]
		out = append(out, c)
	}
	return out, rej, nil
}

// CardNotes returns, when in is a character card file (see LoadCards), one
// line per field of the wrong type or null that was not read
// ("FILE: field not read: data.tags: string where a list is expected",
// cardfile.Fault) and then one per guessed field, for the creator to
// confirm; nil for a table.
func CardNotes(in ingest.Source) ([]string, error) {
	f, ok, err := cardFile(in)
	if err != nil || !ok {
		return nil, err
	}
	_, g := f.Card("")
	var notes []string
	for _, x := range f.Faults() {
		notes = append(notes, in.Name()+": field not read: "+x.String())
	}
	for _, x := range g.Guessed {
		notes = append(notes, in.Name()+": guessed "+x.String())
	}
	return notes, nil
}

// cardFile reads in as a character card file when it is one (an
// ingest.CardSource that says so).
func cardFile(in ingest.Source) (*cardfile.File, bool, error) {
	cs, ok := in.(ingest.CardSource)
	if !ok {
		return nil, false, nil
	}
	return cs.CardFile()
}

// LoadLexicon reads the topic_lexicon table in row order; bad rows are rejects.
func LoadLexicon(in ingest.Source) ([]persona.LexiconRow, []persona.Reject, error) {
	rows, _, rej, err := readAll(in, ingest.DecodeLexicon)
	return rows, rej, err
}

// Run is one judgement of a chat_turn table: the judge, the table, and how
// to run. Do runs it (pass 1, then pass 2) into a Sink. A Run may be
// judged again; it holds no state between calls.
type Run struct {
	// Judge holds cards, lexicon and speech profile. Required.
	Judge *persona.Judge
	// Turns is the chat_turn table. It is opened twice (once per pass) and
	// must give the same rows both times; a table that changes between the
	// passes is an error.
	Turns ingest.Source
	// Workers decoding and judging in parallel; 0 means GOMAXPROCS.
	Workers int
	// TempDir is where the first pass's index spills its sorted runs (a
	// temporary file, removed when the run ends; see index.go). "" lets the
	// sort library choose a disk-backed directory (/var/tmp before /tmp).
	TempDir string
	// Summarizer, when set, may replace judged records' summaries (see
	// Summarizer). nil: every record keeps the rules' summary.
	Summarizer Summarizer
	// SummarizeConcurrency bounds the Summarize calls in flight per worker
	// (0: 8). The model client's own limit bounds the run as a whole.
	SummarizeConcurrency int

	// runSize overrides runSize (tests use tiny runs to spill).
	runSize int
}

// Summarizer may replace a judged record's summary and evidence (a model's
// rewrite that code checked; see persona/summarize) and says which summary
// was used. Summarize is called inside the workers, after the rules and
// before the record reaches the sink, with the turn's check context
// (cx.Turn, cx.Pos, cx.History; cx.TurnByID knows the recall source turn as
// the session index holds it: turn_id, session_id, character_id and
// reply_text). It must not change any other field of rec: the verdict and
// rule fields belong to the rules. The run holds it to that: a summarizer
// that changes another field, or changes the text but reports SummaryRule,
// gets the rules' record back (RejectedBy "summarizer changed a rule field"
// in the first case). The records of one chunk are summarized concurrently,
// up to Run.SummarizeConcurrency at a time per worker, so that slow model
// calls overlap even on few cores; the sink still sees input order.
// Implementations are safe for concurrent use.
type Summarizer interface {
	Summarize(ctx context.Context, rec *persona.Record, cx persona.Context) persona.Summary
}

// Inline may be implemented by a Summarizer whose Summarize never waits
// (no model call: the store's checks of the rules' records, say). When
// Inline reports true the worker calls Summarize on each record in turn,
// without a goroutine per record: at 300,000 turns the goroutines, their
// stacks and the semaphore cost about 4 % of an import's CPU.
type Inline interface {
	Inline() bool
}

// Counter may be implemented by a Sink or a Summarizer that wants to know,
// once after the first pass, how many turns the second pass will judge (a
// progress bar's total).
type Counter interface {
	Counted(turns int)
}

// Judged is one judged record with its turn and the summary outcome (Source
// SummaryRule when no summarizer ran).
type Judged struct {
	Record  persona.Record
	Turn    persona.Turn
	Summary persona.Summary
}

// Want says what a Sink takes of the records (Sink.Wants).
type Want uint8

// The two things a Sink may want of the records.
const (
	// WantLines: the records encoded as JSON Lines (spec persona.md
	// "Output"), encoded by the workers, in input order.
	WantLines Want = 1 << iota
	// WantRecords: the records as values with their turns and summary
	// outcomes (a store, a sidecar log).
	WantRecords
)

// Sink receives a run's results in input order, from one goroutine: records
// and rejects one chunk of consecutive input rows at a time, then the tally.
// An error from any method stops the run and is returned by Run.Do.
type Sink interface {
	// Wants is asked once per run: a sink that wants neither gets records
	// as nil and nil, and the run keeps none (the cheapest run).
	Wants() Want
	// Records receives the judged records of one chunk: lines holds them as
	// JSON Lines when the sink wants WantLines (else nil); recs holds them
	// as values when it wants WantRecords (else nil). Neither may be kept
	// after the call returns. Called only for chunks with a record.
	Records(lines []byte, recs []Judged) error
	// Rejects receives the rejected rows of one chunk, in input order.
	// Called only for chunks with a reject.
	Rejects(rs []persona.Reject) error
	// Tally receives the run's tally once, after the last chunk, when the
	// whole table was judged.
	Tally(t persona.Tally) error
}

// Outputs is a Sink made of optional parts, for shells and tests: Lines gets
// the JSON Lines records, Record each record value, Reject each reject; nil
// parts are not asked for.
type Outputs struct {
	Lines  io.Writer
	Record func(j *Judged) error
	Reject func(r persona.Reject) error
}

// Wants implements Sink.
func (o Outputs) Wants() Want {
	var w Want
	if o.Lines != nil {
		w |= WantLines
	}
	if o.Record != nil {
		w |= WantRecords
	}
	return w
}

// Records implements Sink.
func (o Outputs) Records(lines []byte, recs []Judged) error {
	if o.Lines != nil {
		if _, err := o.Lines.Write(lines); err != nil {
			return fmt.Errorf("write records: %w", err)
		}
	}
	if o.Record != nil {
		for i := range recs {
			if err := o.Record(&recs[i]); err != nil {
				return fmt.Errorf("record %s: %w", recs[i].Turn.TurnID, err)
			}
		}
	}
	return nil
}

// Rejects implements Sink.
func (o Outputs) Rejects(rs []persona.Reject) error {
	if o.Reject == nil {
		return nil
	}
	for _, r := range rs {
		if err := o.Reject(r); err != nil {
			return err
		}
	}
	return nil
}

// Tally implements Sink; it does nothing.
func (Outputs) Tally(persona.Tally) error { return nil }

// recordJSON encodes records like encoding/json with SetEscapeHTML(false).
var recordJSON = jsoniter.Config{EscapeHTML: false, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()

// Rows travel between pipeline stages in chunks of at most chunkSize rows
// and, past its first row, chunkBytes bytes of row text, so that a file of
// long rows does not put hundreds of megabytes in flight. At most about
// 3 × workers chunks are in flight, so memory grows with --workers and with
// the longest row, never with the number of rows.
const (
	chunkSize  = 512
	chunkBytes = 256 << 10
)

type chunk struct {
	first int           // input position of raws[0]
	done  chan struct{} // closed when work is finished (or skipped)
	skip  bool          // not worked on: the run was cancelled
	raws  []ingest.Raw
	notes chunkNotes // pass 2: what pass 1 learned about these rows
	// results
	cands   []candidate // pass 1; pos < 0 when the row is no candidate
	out     *[]byte     // pass 2: encoded records (from outBuffers), when the sink wants lines
	rejects []persona.Reject
	recs    []Judged // pass 2, only when the sink wants records
	tally   map[persona.Verdict]int
}

// pipeline reads in, hands chunks to workers running work, and calls sink on
// finished chunks in input order. attach, when set, is called on each chunk
// by the reader, in input order, before a worker sees it. It stops at the
// first error.
func pipeline(ctx context.Context, in ingest.Source, workers int, attach, work func(context.Context, *chunk), sink func(*chunk) error) error {
	rows, err := in.Open()
	if err != nil {
		return err
	}
	defer rows.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	todo := make(chan *chunk, workers)
	order := make(chan *chunk, workers*2)
	var readErr error
	go func() { // reader: chunks go to order first, then to a worker
		defer close(todo)
		defer close(order)
		pos := 0
		for eof := false; !eof; {
			c := &chunk{first: pos, done: make(chan struct{})}
			var err error
			c.raws, err = rows.ReadRows(make([]ingest.Raw, 0, chunkSize), chunkSize, chunkBytes)
			switch {
			case err == io.EOF:
				eof = true
			case err != nil:
				readErr = err
				eof = true
			}
			pos += len(c.raws)
			if len(c.raws) == 0 {
				return
			}
			if attach != nil {
				attach(ctx, c)
			}
			select {
			case order <- c:
			case <-ctx.Done():
				return
			}
			select {
			case todo <- c:
			case <-ctx.Done():
				c.skip = true
				close(c.done)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range todo {
				work(ctx, c)
				close(c.done)
			}
		}()
	}
	var sinkErr error
	for c := range order {
		<-c.done
		if sinkErr == nil && !c.skip {
			if sinkErr = sink(c); sinkErr != nil {
				cancel()
			}
		}
	}
	wg.Wait()
	if sinkErr != nil {
		return sinkErr
	}
	if readErr != nil {
		return readErr
	}
	return ctx.Err()
}

// Do judges every row of r.Turns and hands records, rejects and the tally
// to sink, in input order: pass 1 indexes the table, pass 2 judges it. The
// returned error is fatal (I/O, a table that cannot be read at all, a sink
// error, a table that changed between the passes); row problems are
// rejects, never errors. The tally is returned also after an error, counting
// what reached the sink.
func (r *Run) Do(ctx context.Context, sink Sink) (persona.Tally, error) {
	workers := r.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ix, rows1, err := r.pass1(ctx, workers)
	defer ix.close()
	if err != nil {
		return persona.Tally{}, err
	}
	for _, x := range []any{sink, r.Summarizer} {
		if c, ok := x.(Counter); ok {
			c.Counted(ix.turns)
		}
	}
	return r.pass2(ctx, workers, ix, rows1, sink)
}

// pass1 reads the table once into the first pass's index (index.go):
// candidates (rows that decode and name a known character) and the rows that
// are not. It returns the index (always; close it) and the number of rows
// read.
func (r *Run) pass1(ctx context.Context, workers int) (*index, int, error) {
	j := r.Judge
	ix := newIndex(ctx, j, r.runSize, r.TempDir)
	rows1 := 0 // rows pass 1 read; pass 2 must read the same
	err := pipeline(ix.ctx, r.Turns, workers, nil, func(_ context.Context, c *chunk) {
		c.cands = make([]candidate, len(c.raws))
		for i, raw := range c.raws {
			c.cands[i].pos = -1
			pos := c.first + i
			if pos > math.MaxInt32 {
				continue
			}
			if t, err := decodeRaw(raw, ingest.DecodeTurn); err == nil {
				if _, ok := j.Card(t.CharacterID); ok {
					c.cands[i] = ix.candidate(&t, int32(pos), int32(raw.Line))
				}
			}
		}
	}, func(c *chunk) error {
		rows1 += len(c.raws)
		for i := range c.cands {
			pos := c.first + i
			if pos > math.MaxInt32 {
				return fmt.Errorf("%s: more than %d rows", r.Turns.Name(), math.MaxInt32)
			}
			if c.cands[i].pos < 0 {
				ix.unusable(int32(pos))
			} else {
				ix.add(c.cands[i])
			}
		}
		return nil
	})
	if err == nil {
		err = ix.resolve()
	}
	if err != nil {
		if cause := context.Cause(ix.ctx); cause != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
			err = cause // the index failed (say, its temporary file) and cancelled the read
		}
		return ix, rows1, err
	}
	return ix, rows1, nil
}

// judgeRow decodes and judges row i of c (pass 2); rej is set when the row
// is rejected.
func (r *Run) judgeRow(c *chunk, i int, f *persona.Findings) (t persona.Turn, rec persona.Record, rej *persona.Reject) {
	raw := c.raws[i]
	pos := c.first + i
	n := c.notes.at(pos)
	decode := ingest.DecodeTurnChecked // pass 1 checked these very bytes
	if n != nil && n.kind == noteUnusable {
		decode = ingest.DecodeTurn
	}
	t, err := decodeRaw(raw, decode)
	if err != nil {
		rej := persona.RejectOf(r.Turns.Name(), raw.Line, rawTurnID(raw), err)
		return t, rec, &rej
	}
	if n != nil && n.kind == noteDuplicate {
		return t, rec, &persona.Reject{File: r.Turns.Name(), Line: raw.Line, TurnID: idOf(&t),
			Reason: fmt.Sprintf("duplicate turn_id %q (first at line %d)", t.TurnID, n.line)}
	}
	if f != nil {
		rec, *f, err = r.Judge.JudgeFindings(&t, pos, c.notes)
	} else {
		rec, err = r.Judge.Judge(&t, pos, c.notes)
	}
	if err != nil {
		rej := persona.RejectOf(r.Turns.Name(), raw.Line, idOf(&t), err)
		return t, rec, &rej
	}
	return t, rec, nil
}

// pass2 re-reads the table, reading the first pass's notes in step with it,
// judges every row and hands the results to sink in input order.
func (r *Run) pass2(ctx context.Context, workers int, ix *index, rows1 int, sink Sink) (persona.Tally, error) {
	tally := persona.Tally{ByVerdict: map[persona.Verdict]int{}}
	want := sink.Wants()
	lines, keep := want&WantLines != 0, want&WantRecords != 0
	name := r.Turns.Name()
	attach := func(_ context.Context, c *chunk) { c.notes = ix.take(int32(c.first + len(c.raws))) }
	rows2 := 0
	err := pipeline(ix.ctx, r.Turns, workers, attach, func(ctx context.Context, c *chunk) {
		c.tally = map[persona.Verdict]int{}
		if lines {
			c.out = outBuffers.Get().(*[]byte)
		}
		if r.Summarizer == nil {
			for i := range c.raws {
				t, rec, rej := r.judgeRow(c, i, nil)
				if rej != nil {
					c.rejects = append(c.rejects, *rej)
					continue
				}
				if c.out != nil {
					if err := encodeRecord(c.out, &rec); err != nil {
						c.rejects = append(c.rejects, persona.Reject{File: name, Line: c.raws[i].Line, TurnID: idOf(&t), Reason: "encode: " + err.Error()})
						continue
					}
				}
				c.tally[rec.Verdict]++
				if keep {
					c.recs = append(c.recs, Judged{Record: rec, Turn: t, Summary: persona.Summary{Source: persona.SummaryRule}})
				}
			}
			return
		}
		// With a summarizer: judge the whole chunk, summarize its records
		// concurrently, then write rows in input order.
		type row struct {
			rej *persona.Reject
			jd  Judged
			f   persona.Findings // what jd.Record was written from
		}
		rows := make([]row, len(c.raws))
		for i := range c.raws {
			rw := &rows[i]
			t, rec, rej := r.judgeRow(c, i, &rw.f)
			rw.rej, rw.jd = rej, Judged{Record: rec, Turn: t}
		}
		summarize := func(rw *row, pos int) {
			jd := &rw.jd
			rule := jd.Record
			rule.Evidence = slices.Clone(rule.Evidence)
			cx := persona.Context{Turn: &jd.Turn, Pos: pos, History: c.notes, TurnByID: sourceLookup(&jd.Record, &jd.Turn, pos, c.notes), Findings: &rw.f}
			jd.Summary = r.Summarizer.Summarize(ctx, &jd.Record, cx)
			jd.Record = guardSummary(rule, jd.Record, &jd.Summary)
		}
		if in, ok := r.Summarizer.(Inline); ok && in.Inline() {
			for i := range rows {
				if rows[i].rej == nil {
					summarize(&rows[i], c.first+i)
				}
			}
		} else {
			limit := r.SummarizeConcurrency
			if limit <= 0 {
				limit = 8
			}
			sem := make(chan struct{}, limit)
			var wg sync.WaitGroup
			for i := range rows {
				if rows[i].rej != nil {
					continue
				}
				sem <- struct{}{}
				wg.Add(1)
				go func(rw *row, pos int) {
					defer func() { <-sem; wg.Done() }()
					summarize(rw, pos)
				}(&rows[i], c.first+i)
			}
			wg.Wait()
		}
		for i := range rows {
			if rows[i].rej != nil {
				c.rejects = append(c.rejects, *rows[i].rej)
				continue
			}
			jd := &rows[i].jd
			if c.out != nil {
				if err := encodeRecord(c.out, &jd.Record); err != nil {
					c.rejects = append(c.rejects, persona.Reject{File: name, Line: c.raws[i].Line, TurnID: &jd.Turn.TurnID, Reason: "encode: " + err.Error()})
					continue
				}
			}
			c.tally[jd.Record.Verdict]++
			if keep {
				c.recs = append(c.recs, *jd)
			}
		}
	}, func(c *chunk) error {
		if rows2 += len(c.raws); rows2 > rows1 {
			return fmt.Errorf("%s changed during the run: it now has more than the %d rows the first pass read", name, rows1)
		}
		var err error
		if len(c.tally) > 0 {
			var b []byte
			if c.out != nil {
				b = *c.out
			}
			err = sink.Records(b, c.recs)
		}
		if c.out != nil {
			*c.out = (*c.out)[:0]
			outBuffers.Put(c.out)
		}
		if err != nil {
			return err
		}
		if len(c.rejects) > 0 {
			if err := sink.Rejects(c.rejects); err != nil {
				return err
			}
		}
		tally.Rejected += len(c.rejects)
		for v, n := range c.tally {
			tally.ByVerdict[v] += n
			tally.Judged += n
		}
		return nil
	})
	ferr := ix.finish()
	switch {
	case ctx.Err() != nil:
		return tally, ctx.Err()
	case err != nil && !errors.Is(err, context.Canceled):
		return tally, err // a failed write, an unreadable row stream, a changed input
	case ferr != nil:
		return tally, ferr // the notes' sort failed: pass 2 may have missed notes
	case err != nil:
		return tally, context.Cause(ix.ctx)
	case rows2 < rows1:
		return tally, fmt.Errorf("%s changed during the run: it now has %d rows, the first pass read %d", name, rows2, rows1)
	}
	return tally, sink.Tally(tally)
}

// guardSummary holds a Summarize hook to its contract: got may differ from
// the rules' record rule only in summary and evidence, and only when the
// outcome says SummaryModel. A hook that changed another field gets the
// rules' record back with RejectedBy "summarizer changed a rule field"; one
// that changed the text but reports the rules' summary gets the rules' text.
func guardSummary(rule, got persona.Record, s *persona.Summary) persona.Record {
	if s.Source != persona.SummaryModel {
		s.Source = persona.SummaryRule
		return rule
	}
	chk := got
	chk.Summary, chk.Evidence = rule.Summary, rule.Evidence
	if !reflect.DeepEqual(chk, rule) {
		*s = persona.Summary{Source: persona.SummaryRule, RejectedBy: "summarizer changed a rule field"}
		return rule
	}
	return got
}

// idOf returns a pointer to a copy of t's turn_id, for a Reject (so that t
// itself need not live on the heap).
func idOf(t *persona.Turn) *string {
	id := t.TurnID
	return &id
}

// sourceLookup returns a TurnByID for the checks of rec that knows the recall
// source turn rec cites, as the session index keeps it (turn_id and
// reply_text; session_id and character_id are t's, as for every earlier turn
// of the session). nil when rec cites none.
func sourceLookup(rec *persona.Record, t *persona.Turn, pos int, h persona.History) func(string) (*persona.Turn, bool) {
	if rec.RecallTarget == nil || rec.RecallSourceTurn == nil {
		return nil
	}
	m, ok := h.Earliest(t, pos, *rec.RecallTarget)
	if !ok || m.TurnID != *rec.RecallSourceTurn {
		return nil
	}
	src := &persona.Turn{TurnID: m.TurnID, SessionID: t.SessionID, CharacterID: t.CharacterID, ReplyText: m.ReplyText}
	return func(id string) (*persona.Turn, bool) {
		if id == src.TurnID {
			return src, true
		}
		return nil, false
	}
}

// rawTurnID digs the turn_id out of a row that failed to decode, so the
// reject can name it; nil when it cannot be found.
func rawTurnID(raw ingest.Raw) *string {
	if raw.JSON != nil {
		var probe struct {
			TurnID any `json:"turn_id"`
		}
		if json.Unmarshal(raw.JSON, &probe) == nil {
			if s, ok := probe.TurnID.(string); ok && s != "" {
				return &s
			}
		}
		return nil
	}
	for i, h := range raw.Header {
		if h == "turn_id" && i < len(raw.CSV) && raw.CSV[i] != "" {
			s := raw.CSV[i]
			return &s
		}
	}
	return nil
}

// NewJudge loads the card and lexicon tables and prepares a judge with
// profile (nil: the seed profile). Rows of either table that cannot be used
// come back as rejects; the error is fatal: a table cannot be read, or it has
// rows and none of them can be used (a swapped or wrong table).
func NewJudge(cards, lexicon ingest.Source, profile *speech.Profile) (*persona.Judge, []persona.Reject, error) {
	p, err := prepare(cards, lexicon, profile)
	if err != nil {
		return nil, nil, err
	}
	return p.Judge, p.Rejects, nil
}

// Prepared is a judge ready for a run over a chat_turn table, with what a
// shell reports about the card and lexicon tables it was built from.
type Prepared struct {
	// Judge holds the cards, the lexicon and the speech profile.
	Judge *persona.Judge
	// Cards are the usable cards in table order (a summarizer's context).
	Cards []persona.Card
	// Rejects are the card and lexicon rows that cannot be used.
	Rejects []persona.Reject
	// Notes are a card file's guessed fields, one line each, for the
	// creator to confirm (CardNotes); nil for a card table.
	Notes []string
}

// Prepare is NewJudge that also returns the usable cards and the card file's
// notes, reading the card table once for all of them. Its errors are
// NewJudge's and CardNotes's.
func Prepare(cards, lexicon ingest.Source, profile *speech.Profile) (Prepared, error) {
	p, err := prepare(cards, lexicon, profile)
	if err != nil {
		return Prepared{}, err
	}
	if p.Notes, err = CardNotes(cards); err != nil {
		return Prepared{}, err
	}
	return p, nil
}

func prepare(cards, lexicon ingest.Source, profile *speech.Profile) (Prepared, error) {
	cs, rej, err := LoadCards(cards)
	if err != nil {
		return Prepared{}, err
	}
	if len(cs) == 0 && len(rej) > 0 {
		return Prepared{}, fmt.Errorf("%s: no character_card row could be read (is it the right table?); first: %s", cards.Name(), rej[0].Text())
	}
	lex, lrej, err := LoadLexicon(lexicon)
	if err != nil {
		return Prepared{}, err
	}
	if len(lex) == 0 && len(lrej) > 0 {
		return Prepared{}, fmt.Errorf("%s: no topic_lexicon row could be read (is it the right table?); first: %s", lexicon.Name(), lrej[0].Text())
	}
	j, err := persona.NewJudge(cs, lex, profile)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Judge: j, Cards: cs, Rejects: append(rej, lrej...)}, nil
}

// outBuffers recycles the chunks' record buffers (*[]byte): grown once to a
// chunk's size, not per chunk (growing them was 7 % of a 1M-turn run's CPU).
var outBuffers = sync.Pool{New: func() any { return new([]byte) }}

// encodeRecord appends rec and its '\n' to *out: persona.AppendRecord, or
// recordJSON for a record it cannot write (an evidence value of another
// type; never from the rules).
func encodeRecord(out *[]byte, rec *persona.Record) error {
	if b, ok := persona.AppendRecord(*out, rec); ok {
		*out = b
		return nil
	}
	b, err := recordJSON.Marshal(rec)
	if err != nil {
		return err
	}
	*out = append(append(*out, b...), '\n')
	return nil
}

// SummarizerFunc is a function used as a Summarizer.
type SummarizerFunc func(ctx context.Context, rec *persona.Record, cx persona.Context) persona.Summary

// Summarize implements Summarizer.
func (f SummarizerFunc) Summarize(ctx context.Context, rec *persona.Record, cx persona.Context) persona.Summary {
	return f(ctx, rec, cx)
}
