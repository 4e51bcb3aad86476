package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"evident/persona"
	"evident/persona/ingest"
)

// CheckReport totals the ten automatic checks over a verdict file.
type CheckReport struct {
	// Records is the number of verdict records read.
	Records int `json:"records"`
	// Pass and Fail count records per check; index i is check i+1.
	Pass [10]int `json:"pass"`
	Fail [10]int `json:"fail"`
	// SchemaFail counts records that do not validate against the seed's
	// output schema; Unreadable counts lines that are not a JSON record.
	SchemaFail int `json:"schema_fail"`
	Unreadable int `json:"unreadable"`
	// Failures lists every failed check (and schema, read or coverage
	// failure, with Check 0), in file order; missing turns come last.
	Failures []Failure `json:"failures"`
	// Missing counts judgeable turns of the log with no record; Repeated
	// counts records for a turn that already had one. Both are failures: a
	// verdict file must cover every turn exactly once (spec persona.md
	// "Output": every judgeable turn produces exactly one record).
	Missing  int `json:"missing"`
	Repeated int `json:"repeated"`
}

// Failure is one failed check of one record. Line is the record's 1-based
// line in the verdict file; Check is 1..10, or 0 for a schema/read failure.
type Failure struct {
	Line   int    `json:"line"`
	TurnID string `json:"turn_id"`
	Check  int    `json:"check"`
	Reason string `json:"reason"`
}

// OK reports whether every record passed every check and the schema.
func (r *CheckReport) OK() bool { return len(r.Failures) == 0 }

// Check runs the seed's ten automatic checks on every record of verdicts, a
// JSON Lines table of records (a verdict file, ours or another system's, as
// ingest.NewTable(path, ingest.JSONL, …); a stored run's records), against
// the turns it judges. The
// turn table is held in memory (the checks look up any turn by id) and
// indexed as the judge indexes it; turn rows that the judge would reject are
// skipped. The error is fatal (a table cannot be read); bad records are
// failures in the report.
func Check(ctx context.Context, verdicts, turns ingest.Source, j *persona.Judge) (*CheckReport, error) {
	byID := map[string]*persona.Turn{}
	pos := map[string]int{}
	sessions := persona.NewSessionsFor(j.RecallEntities())
	i := 0
	err := eachRow(turns, func(raw ingest.Raw) error {
		defer func() { i++ }()
		t, err := decodeRaw(raw, ingest.DecodeTurn)
		if err != nil {
			return nil
		}
		if _, ok := j.Card(t.CharacterID); !ok || byID[t.TurnID] != nil {
			return nil
		}
		byID[t.TurnID], pos[t.TurnID] = &t, i
		sessions.Add(&t, i)
		return nil
	})
	if err != nil {
		return nil, err
	}
	lookup := func(id string) (*persona.Turn, bool) { t, ok := byID[id]; return t, ok }

	rep := &CheckReport{}
	covered := map[string]int{} // turn_id → line of its first record
	err = eachRow(verdicts, func(raw ingest.Raw) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if raw.JSON == nil { // a CSV or broken array element: not a record line
			rep.Unreadable++
			reason := "not a verdict record"
			if raw.Err != nil {
				reason += ": " + raw.Err.Error()
			}
			rep.Failures = append(rep.Failures, Failure{Line: raw.Line, Reason: reason})
			return nil
		}
		if id, ok := rep.checkLine(raw.Line, raw.JSON, j, byID, pos, sessions, lookup); ok {
			if at, dup := covered[id]; dup {
				rep.Repeated++
				rep.Failures = append(rep.Failures, Failure{Line: raw.Line, TurnID: id, Reason: fmt.Sprintf("a second record for turn %q (first at line %d)", id, at)})
			} else {
				covered[id] = raw.Line
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var missing []string
	for id := range byID {
		if _, ok := covered[id]; !ok {
			missing = append(missing, id)
		}
	}
	sort.Slice(missing, func(a, b int) bool { return pos[missing[a]] < pos[missing[b]] })
	rep.Missing = len(missing)
	for _, id := range missing {
		rep.Failures = append(rep.Failures, Failure{TurnID: id, Reason: "no record for this turn of the log"})
	}
	return rep, nil
}

// eachRow calls fn with every row of in, in order, reading it in chunks; it
// stops at fn's first error or the table's fatal one.
func eachRow(in ingest.Source, fn func(ingest.Raw) error) error {
	rows, err := in.Open()
	if err != nil {
		return err
	}
	defer rows.Close()
	var buf []ingest.Raw
	for {
		var rerr error
		buf, rerr = rows.ReadRows(buf[:0], chunkSize, chunkBytes)
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		for _, raw := range buf {
			if err := fn(raw); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
	}
}

// checkLine checks one record line and returns its turn_id (false when the
// line is not a record).
func (rep *CheckReport) checkLine(line int, b []byte, j *persona.Judge, byID map[string]*persona.Turn,
	pos map[string]int, h persona.History, lookup func(string) (*persona.Turn, bool)) (string, bool) {
	var r persona.Record
	if err := json.Unmarshal(b, &r); err != nil {
		rep.Unreadable++
		rep.Failures = append(rep.Failures, Failure{Line: line, Reason: "not a verdict record: " + err.Error()})
		return "", false
	}
	rep.Records++
	if err := persona.ValidateJSON(b); err != nil {
		rep.SchemaFail++
		rep.Failures = append(rep.Failures, Failure{Line: line, TurnID: r.TurnID, Reason: "schema: " + err.Error()})
	}
	t := byID[r.TurnID]
	for _, c := range j.Check(&r, persona.Context{Turn: t, Pos: pos[r.TurnID], History: h, TurnByID: lookup}) {
		if c.Pass {
			rep.Pass[c.ID-1]++
			continue
		}
		rep.Fail[c.ID-1]++
		rep.Failures = append(rep.Failures, Failure{Line: line, TurnID: r.TurnID, Check: c.ID, Reason: c.Reason})
	}
	return r.TurnID, true
}

// WriteText prints the report for people: one line per check with pass and
// fail counts, the schema and unreadable counts, then up to 20 failures.
func (rep *CheckReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "records %d\n", rep.Records)
	for i, name := range persona.CheckNames {
		fmt.Fprintf(w, "%2d  %-4s pass %d  fail %d  %s\n", i+1, passMark(rep.Fail[i] == 0), rep.Pass[i], rep.Fail[i], name)
	}
	fmt.Fprintf(w, "schema  %s fail %d · unreadable lines %d\n", passMark(rep.SchemaFail == 0), rep.SchemaFail, rep.Unreadable)
	fmt.Fprintf(w, "coverage  %s turns without a record %d · repeated records %d\n", passMark(rep.Missing == 0 && rep.Repeated == 0), rep.Missing, rep.Repeated)
	for i, f := range rep.Failures {
		if i == 20 {
			fmt.Fprintf(w, "… and %d more failures\n", len(rep.Failures)-20)
			break
		}
		where := f.TurnID
		if f.Line > 0 {
			where = fmt.Sprintf("line %d %s", f.Line, f.TurnID)
		}
		what := "coverage"
		if f.Check > 0 {
			what = fmt.Sprintf("check %d", f.Check)
		} else if f.Line > 0 {
			what = "record"
		}
		fmt.Fprintf(w, "%s: %s: %s\n", where, what, f.Reason)
	}
}

func passMark(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}
