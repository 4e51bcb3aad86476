// Package batch streams whole input files through the character-card judge:
// it loads cards and lexicon, reads the chat_turn table twice (once to index
// sessions and turn ids, once to judge), decodes and judges rows on all cores,
// and writes records in input order with every row accounted for as a record
// or a reject (spec persona.md "Output").
//
// It owns the pipeline, the rejects policy (malformed row, missing required
// column, unknown character_id, duplicate turn_id) and the run tally. It must
// not decide verdicts (persona does) or parse cells (persona/ingest does).
// It runs an optional summary hook (Config.Summarize, e.g.
// persona/summarize) inside its workers but decides no summary itself.
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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	jsoniter "github.com/json-iterator/go"

	"evident/persona"
	"evident/persona/cardfile"
	"evident/persona/ingest"
	"evident/persona/speech"
)

// Input is one table file: a name for messages and rejects, its format, and
// a way to open it (called once per pass, so the judge can read it twice).
type Input struct {
	Name   string
	Format ingest.Format
	Open   func() (io.ReadCloser, error)
}

// FileInput returns the Input for a file path; the format comes from the
// extension (ingest.FormatOf). The file is not opened yet.
func FileInput(path string) (Input, error) {
	f, err := ingest.FormatOf(path)
	if err != nil {
		return Input{}, err
	}
	return Input{Name: path, Format: f, Open: func() (io.ReadCloser, error) { return os.Open(path) }}, nil
}

// Reject is one input row that cannot be judged, written as JSONL
// {file, line, turn_id, reason}. TurnID is nil when the row has none (or is
// not a chat_turn row). Line is 1-based.
type Reject struct {
	File   string  `json:"file"`
	Line   int     `json:"line"`
	TurnID *string `json:"turn_id"`
	Reason string  `json:"reason"`
}

// Tally counts a run: judged turns per verdict and rejected rows of all three
// tables.
type Tally struct {
	Judged    int
	ByVerdict map[persona.Verdict]int
	Rejected  int
}

// String is the one-line tally printed at the end of a run, e.g.
// "judged 8 (금지 소재 접촉 1 · 세계관 밖 고유명사 1 · 말투 어긋남 2 · 앞 회차를 기억 못 함 1 · 설정대로 말함 3), rejected 0".
func (t Tally) String() string {
	var parts []string
	for _, v := range persona.Verdicts {
		parts = append(parts, fmt.Sprintf("%s %d", v, t.ByVerdict[v]))
	}
	return fmt.Sprintf("judged %d (%s), rejected %d", t.Judged, strings.Join(parts, " · "), t.Rejected)
}

// readAll reads every row of a small table (cards, lexicon) with decode,
// turning bad rows into rejects.
func readAll[T any](in Input, decode func(ingest.Raw) (T, error)) (out []T, lines []int, rej []Reject, err error) {
	rc, err := in.Open()
	if err != nil {
		return nil, nil, nil, err
	}
	defer rc.Close()
	rows, err := ingest.NewRows(rc, in.Format)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	for {
		raw, err := rows.Next()
		if err == io.EOF {
			return out, lines, rej, nil
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		v, err := decodeRaw(raw, decode)
		if err != nil {
			rej = append(rej, Reject{File: in.Name, Line: raw.Line, Reason: err.Error()})
			continue
		}
		out = append(out, v)
		lines = append(lines, raw.Line)
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
func LoadCards(in Input) ([]persona.Card, []Reject, error) {
	if f, ok, err := cardFile(in); err != nil {
		return nil, nil, err
	} else if ok {
		c, _ := f.Card("")
		if c.HonorificRule == "" || c.FirstPerson == "" {
			return nil, []Reject{{File: in.Name, Reason: fmt.Sprintf("card %q: honorific_rule and first_person are neither in data.extensions[%q] nor guessable from its Korean texts; set them with evident card write", c.Name, cardfile.ExtensionKey)}}, nil
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
			rej = append(rej, Reject{File: in.Name, Line: lines[i],
				Reason: fmt.Sprintf("duplicate character_id %q (first at line %d)", c.CharacterID, at)})
			continue
		}
		seen[c.CharacterID] = lines[i]
		out = append(out, c)
	}
	return out, rej, nil
}

// CardNotes returns one line per guessed field when in is a character card
// file (see LoadCards), for the creator to confirm; nil for a table.
func CardNotes(in Input) ([]string, error) {
	f, ok, err := cardFile(in)
	if err != nil || !ok {
		return nil, err
	}
	_, g := f.Card("")
	var notes []string
	for _, x := range g.Guessed {
		notes = append(notes, in.Name+": guessed "+x.String())
	}
	return notes, nil
}

// maxCardFile bounds how much of a character card file is read (PNG cards
// carry an image; 64 MiB is far above real ones).
const maxCardFile = 64 << 20

// cardFile reads in as a character card file when it is one.
func cardFile(in Input) (*cardfile.File, bool, error) {
	if in.Format != ingest.CardFile && in.Format != ingest.JSONArray {
		return nil, false, nil
	}
	rc, err := in.Open()
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	br := bufio.NewReader(io.LimitReader(rc, maxCardFile+1))
	if in.Format == ingest.JSONArray {
		b, _ := br.Peek(512)
		b = bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")), " \t\r\n")
		if len(b) == 0 || b[0] != '{' {
			return nil, false, nil
		}
	}
	b, err := io.ReadAll(br)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", in.Name, err)
	}
	if len(b) > maxCardFile {
		return nil, false, fmt.Errorf("%s: character card file larger than %d MiB", in.Name, maxCardFile>>20)
	}
	f, err := cardfile.Read(in.Name, b)
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}

// LoadLexicon reads the topic_lexicon table in row order; bad rows are rejects.
func LoadLexicon(in Input) ([]persona.LexiconRow, []Reject, error) {
	rows, _, rej, err := readAll(in, ingest.DecodeLexicon)
	return rows, rej, err
}

// Config configures Judge.
type Config struct {
	// Judge holds cards, lexicon and speech profile. Required.
	Judge *persona.Judge
	// Out receives one JSON record per judged turn, one per line, in input
	// order. May be nil when only Record is wanted.
	Out io.Writer
	// Reject receives each rejected chat_turn row, in input order. May be nil.
	Reject func(Reject)
	// Workers decoding and judging in parallel; 0 means GOMAXPROCS.
	Workers int
	// Record, when set, also receives each judged record with its turn, in
	// input order, from a single goroutine (for a store). An error stops the run.
	Record func(rec *persona.Record, t *persona.Turn) error

	// Summarize, when set, may replace a judged record's summary and
	// evidence (a model's rewrite that code checked; see persona/summarize)
	// and says which summary was used. It is called inside the workers,
	// after the rules and before the record is written, with the turn's
	// check context (cx.Turn, cx.Pos, cx.History; cx.TurnByID knows the
	// recall source turn as the session index holds it: turn_id,
	// session_id, character_id and reply_text). It must not change any
	// other field of rec: the verdict and rule fields belong to the rules.
	// batch holds it to that: a hook that changes another field, or changes
	// the text but reports SummaryRule, gets the rules' record back
	// (RejectedBy "summarizer changed a rule field" in the first case).
	// The records of one chunk are summarized concurrently, up to
	// SummarizeConcurrency at a time per worker, so that slow model calls
	// overlap even on few cores; output order is still input order.
	Summarize func(ctx context.Context, rec *persona.Record, cx persona.Context) Summary
	// SummarizeConcurrency bounds the Summarize calls in flight per worker
	// (0: 8). The model client's own limit bounds the run as a whole.
	SummarizeConcurrency int
	// Summarized, when set, receives each judged record with its turn and
	// its Summary, in input order, from a single goroutine (for a sidecar
	// log or a store's WithSummary), after Record. Without Summarize every
	// Summary is {Source: SummaryRule}. An error stops the run.
	Summarized func(rec *persona.Record, t *persona.Turn, s Summary) error
	// TempDir is where the first pass's index spills its sorted runs (a
	// temporary file, removed when the run ends; see index.go). "" lets the
	// sort library choose a disk-backed directory (/var/tmp before /tmp).
	TempDir string
	// runSize overrides runSize (tests use tiny runs to spill).
	runSize int

	// Counted, when set, is called once after the first pass with the
	// number of turns the second pass will judge (e.g. a progress bar's
	// total).
	Counted func(turns int)
}

// Summary says which summary a record carries and why a model's rewrite was
// not used (Config.Summarize; the sidecar of spec persona.md "Evidence,
// summary, hedge").
type Summary struct {
	// Source is SummaryRule (the rules' default sentence and evidence) or
	// SummaryModel (a model's rewrite that passed the checks).
	Source string `json:"summary_source"`
	// RejectedBy names what threw a model's rewrite away ("check 8",
	// "proper noun", "discarded: verdict differs", "failed: timeout", …);
	// "" when a model's summary was used or none was asked for.
	RejectedBy string `json:"rejected_by,omitempty"`
	// Detail says more about RejectedBy for people (the failing check's
	// reason, the field that differs, the call's error); "" when none.
	Detail string `json:"detail,omitempty"`
	// Cached reports that the model's answer came from the cache, not a
	// call.
	Cached bool `json:"cached"`
}

// The two values of Summary.Source.
const (
	SummaryRule  = "rule"
	SummaryModel = "model"
)

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

// rawSize is the size of a row's text, for chunkBytes.
func rawSize(r *ingest.Raw) int {
	n := len(r.JSON)
	for _, c := range r.CSV {
		n += len(c)
	}
	return n
}

type chunk struct {
	first int           // input position of raws[0]
	done  chan struct{} // closed when work is finished (or skipped)
	skip  bool          // not worked on: the run was cancelled
	raws  []ingest.Raw
	notes chunkNotes // pass 2: what pass 1 learned about these rows
	// results
	cands   []candidate   // pass 1; pos < 0 when the row is no candidate
	out     *bytes.Buffer // pass 2: encoded records (from outBuffers)
	rejects []Reject      // pass 2
	recs    []judged      // pass 2, only when Config.Record or Summarized is set
	tally   map[persona.Verdict]int
}

// pipeline reads in, hands chunks to workers running work, and calls sink on
// finished chunks in input order. attach, when set, is called on each chunk
// by the reader, in input order, before a worker sees it. It stops at the
// first error.
func pipeline(ctx context.Context, in Input, workers int, attach, work func(context.Context, *chunk), sink func(*chunk) error) error {
	rc, err := in.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	rows, err := ingest.NewRows(rc, in.Format)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
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
			for size := 0; len(c.raws) < chunkSize && size < chunkBytes; {
				raw, err := rows.Next()
				if err == io.EOF {
					eof = true
					break
				}
				if err != nil {
					readErr = fmt.Errorf("%s: %w", in.Name, err)
					eof = true
					break
				}
				c.raws = append(c.raws, raw)
				size += rawSize(&raw)
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

// judged is a record with its turn (and summary outcome), for Config.Record
// and Config.Summarized.
type judged struct {
	rec  persona.Record
	turn persona.Turn
	sum  Summary
}

// Judge judges every row of the chat_turn table turns and writes records to
// cfg.Out and rejects to cfg.Reject, both in input order. The returned error
// is fatal (I/O, a table that cannot be read at all, a failed write); row
// problems are rejects, never errors.
func Judge(ctx context.Context, turns Input, cfg Config) (Tally, error) {
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	j := cfg.Judge

	// Pass 1: candidates (rows that decode and name a known character) and
	// the rows that are not, into the first pass's index (index.go).
	ix := newIndex(ctx, j, cfg.runSize, cfg.TempDir)
	defer ix.close()
	rows1 := 0 // rows pass 1 read; pass 2 must read the same
	err := pipeline(ix.ctx, turns, workers, nil, func(_ context.Context, c *chunk) {
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
				return fmt.Errorf("%s: more than %d rows", turns.Name, math.MaxInt32)
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
		return Tally{}, err
	}

	// Pass 2: judge in input order.
	tally := Tally{ByVerdict: map[persona.Verdict]int{}}
	// judgeRow decodes and judges row i of c; rej is set when the row is
	// rejected.
	judgeRow := func(c *chunk, i int) (t persona.Turn, rec persona.Record, rej *Reject) {
		raw := c.raws[i]
		pos := c.first + i
		n := c.notes.at(pos)
		decode := ingest.DecodeTurnChecked // pass 1 checked these very bytes
		if n != nil && n.kind == noteUnusable {
			decode = ingest.DecodeTurn
		}
		t, err := decodeRaw(raw, decode)
		if err != nil {
			return t, rec, &Reject{File: turns.Name, Line: raw.Line, TurnID: rawTurnID(raw), Reason: err.Error()}
		}
		if n != nil && n.kind == noteDuplicate {
			return t, rec, &Reject{File: turns.Name, Line: raw.Line, TurnID: idOf(&t),
				Reason: fmt.Sprintf("duplicate turn_id %q (first at line %d)", t.TurnID, n.line)}
		}
		rec, err = j.Judge(&t, pos, c.notes)
		if err != nil {
			return t, rec, &Reject{File: turns.Name, Line: raw.Line, TurnID: idOf(&t), Reason: err.Error()}
		}
		return t, rec, nil
	}
	if cfg.Counted != nil {
		cfg.Counted(ix.turns)
	}
	attach := func(_ context.Context, c *chunk) { c.notes = ix.take(int32(c.first + len(c.raws))) }
	keep := cfg.Record != nil || cfg.Summarized != nil
	rows2 := 0
	err = pipeline(ix.ctx, turns, workers, attach, func(ctx context.Context, c *chunk) {
		c.tally = map[persona.Verdict]int{}
		var enc *jsoniter.Encoder // json-iterator: same bytes as encoding/json here, less CPU (TestRecordBytes)
		if cfg.Out != nil {
			c.out = outBuffers.Get().(*bytes.Buffer)
			enc = recordJSON.NewEncoder(c.out)
		}
		if cfg.Summarize == nil {
			for i := range c.raws {
				t, rec, rej := judgeRow(c, i)
				if rej != nil {
					c.rejects = append(c.rejects, *rej)
					continue
				}
				if enc != nil {
					if err := enc.Encode(&rec); err != nil {
						c.rejects = append(c.rejects, Reject{File: turns.Name, Line: c.raws[i].Line, TurnID: idOf(&t), Reason: "encode: " + err.Error()})
						continue
					}
				}
				c.tally[rec.Verdict]++
				if keep {
					c.recs = append(c.recs, judged{rec: rec, turn: t, sum: Summary{Source: SummaryRule}})
				}
			}
			return
		}
		// With a summarizer: judge the whole chunk, summarize its records
		// concurrently, then write rows in input order.
		type row struct {
			rej *Reject
			jd  judged
		}
		rows := make([]row, len(c.raws))
		for i := range c.raws {
			t, rec, rej := judgeRow(c, i)
			rows[i] = row{rej: rej, jd: judged{rec: rec, turn: t}}
		}
		limit := cfg.SummarizeConcurrency
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
			go func(jd *judged, pos int) {
				defer func() { <-sem; wg.Done() }()
				rule := jd.rec
				rule.Evidence = slices.Clone(rule.Evidence)
				cx := persona.Context{Turn: &jd.turn, Pos: pos, History: c.notes, TurnByID: sourceLookup(&jd.rec, &jd.turn, pos, c.notes)}
				jd.sum = cfg.Summarize(ctx, &jd.rec, cx)
				jd.rec = guardSummary(rule, jd.rec, &jd.sum)
			}(&rows[i].jd, c.first+i)
		}
		wg.Wait()
		for i := range rows {
			if rows[i].rej != nil {
				c.rejects = append(c.rejects, *rows[i].rej)
				continue
			}
			jd := &rows[i].jd
			if enc != nil {
				if err := enc.Encode(&jd.rec); err != nil {
					c.rejects = append(c.rejects, Reject{File: turns.Name, Line: c.raws[i].Line, TurnID: &jd.turn.TurnID, Reason: "encode: " + err.Error()})
					continue
				}
			}
			c.tally[jd.rec.Verdict]++
			if keep {
				c.recs = append(c.recs, *jd)
			}
		}
	}, func(c *chunk) error {
		if rows2 += len(c.raws); rows2 > rows1 {
			return fmt.Errorf("%s changed during the run: it now has more than the %d rows the first pass read", turns.Name, rows1)
		}
		for i := range c.recs {
			jd := &c.recs[i]
			if cfg.Record != nil {
				if err := cfg.Record(&jd.rec, &jd.turn); err != nil {
					return fmt.Errorf("record %s: %w", jd.turn.TurnID, err)
				}
			}
			if cfg.Summarized != nil {
				if err := cfg.Summarized(&jd.rec, &jd.turn, jd.sum); err != nil {
					return fmt.Errorf("record %s: %w", jd.turn.TurnID, err)
				}
			}
		}
		if c.out != nil {
			_, err := c.out.WriteTo(cfg.Out)
			c.out.Reset()
			outBuffers.Put(c.out)
			if err != nil {
				return fmt.Errorf("write records: %w", err)
			}
		}
		for _, r := range c.rejects {
			if cfg.Reject != nil {
				cfg.Reject(r)
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
		return tally, fmt.Errorf("%s changed during the run: it now has %d rows, the first pass read %d", turns.Name, rows2, rows1)
	}
	return tally, nil
}

// guardSummary holds a Summarize hook to its contract: got may differ from
// the rules' record rule only in summary and evidence, and only when the
// outcome says SummaryModel. A hook that changed another field gets the
// rules' record back with RejectedBy "summarizer changed a rule field"; one
// that changed the text but reports the rules' summary gets the rules' text.
func guardSummary(rule, got persona.Record, s *Summary) persona.Record {
	if s.Source != SummaryModel {
		s.Source = SummaryRule
		return rule
	}
	chk := got
	chk.Summary, chk.Evidence = rule.Summary, rule.Evidence
	if !reflect.DeepEqual(chk, rule) {
		*s = Summary{Source: SummaryRule, RejectedBy: "summarizer changed a rule field"}
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

// rejectText is a reject for people: the reason, after the line when the
// reason does not already start with it.
func rejectText(r Reject) string {
	if r.Line > 0 && !strings.HasPrefix(r.Reason, "line ") {
		return fmt.Sprintf("line %d: %s", r.Line, r.Reason)
	}
	return r.Reason
}

// NewJudge loads the card and lexicon tables and prepares a judge with
// profile (nil: the seed profile). Rows of either table that cannot be used
// come back as rejects; the error is fatal: a table cannot be read, or it has
// rows and none of them can be used (a swapped or wrong table).
func NewJudge(cards, lexicon Input, profile *speech.Profile) (*persona.Judge, []Reject, error) {
	cs, rej, err := LoadCards(cards)
	if err != nil {
		return nil, nil, err
	}
	if len(cs) == 0 && len(rej) > 0 {
		return nil, nil, fmt.Errorf("%s: no character_card row could be read (is it the right table?); first: %s", cards.Name, rejectText(rej[0]))
	}
	lex, lrej, err := LoadLexicon(lexicon)
	if err != nil {
		return nil, nil, err
	}
	if len(lex) == 0 && len(lrej) > 0 {
		return nil, nil, fmt.Errorf("%s: no topic_lexicon row could be read (is it the right table?); first: %s", lexicon.Name, rejectText(lrej[0]))
	}
	j, err := persona.NewJudge(cs, lex, profile)
	if err != nil {
		return nil, nil, err
	}
	return j, append(rej, lrej...), nil
}

// outBuffers recycles the chunks' record buffers: grown once to a chunk's
// size, not per chunk (growing them was 7 % of a 1M-turn run's CPU).
var outBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
