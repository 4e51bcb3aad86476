package summarize

import (
	"encoding/json"
	"io"

	"evident/persona"
)

// LogLine is one line of the summary sidecar (the judge command's
// --summary-log, JSON Lines, one per record in output order): which summary
// the record carries and, when a model's rewrite was not used, what rejected
// it. RejectedBy is null when none was rejected; Detail is omitted when
// empty.
type LogLine struct {
	// TurnID is the record's turn_id.
	TurnID string `json:"turn_id"`
	// SummarySource is "rule" or "model" (persona.SummaryRule, SummaryModel).
	SummarySource string `json:"summary_source"`
	// RejectedBy is persona.Summary.RejectedBy, nil (null) when empty.
	RejectedBy *string `json:"rejected_by"`
	// Cached reports that the model's answer came from the cache.
	Cached bool `json:"cached"`
	// Detail is persona.Summary.Detail (the failing check's reason, …).
	Detail string `json:"detail,omitempty"`
}

// Line returns the sidecar line of rec with outcome s (a zero s reads as the
// rule's summary).
func Line(rec *persona.Record, s persona.Summary) LogLine {
	l := LogLine{TurnID: rec.TurnID, SummarySource: string(s.Source), Cached: s.Cached, Detail: s.Detail}
	if l.SummarySource == "" {
		l.SummarySource = string(persona.SummaryRule)
	}
	if s.RejectedBy != "" {
		r := s.RejectedBy
		l.RejectedBy = &r
	}
	return l
}

// LogWriter writes the summary sidecar: one LogLine (Line) a record, as JSON
// Lines without HTML escaping, one Write each to the writer below (give it a
// buffered one). It is not safe for concurrent use (a run's sink calls it
// from one goroutine, in output order).
type LogWriter struct {
	enc *json.Encoder
}

// NewLogWriter returns a LogWriter writing to w.
func NewLogWriter(w io.Writer) *LogWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &LogWriter{enc: enc}
}

// Write writes the sidecar line of rec with outcome s.
func (l *LogWriter) Write(rec *persona.Record, s persona.Summary) error {
	return l.enc.Encode(Line(rec, s))
}
