package summarize

import (
	"evident/persona"
	"evident/persona/batch"
	"evident/store"
)

// LogLine is one line of the summary sidecar (the judge command's
// --summary-log, JSON Lines, one per record in output order): which summary
// the record carries and, when a model's rewrite was not used, what rejected
// it. RejectedBy is null when none was rejected; Detail is omitted when
// empty.
type LogLine struct {
	// TurnID is the record's turn_id.
	TurnID string `json:"turn_id"`
	// SummarySource is "rule" or "model" (batch.SummaryRule, SummaryModel).
	SummarySource string `json:"summary_source"`
	// RejectedBy is batch.Summary.RejectedBy, nil (null) when empty.
	RejectedBy *string `json:"rejected_by"`
	// Cached reports that the model's answer came from the cache.
	Cached bool `json:"cached"`
	// Detail is batch.Summary.Detail (the failing check's reason, …).
	Detail string `json:"detail,omitempty"`
}

// Line returns the sidecar line of rec with outcome s (a zero s reads as the
// rule's summary).
func Line(rec *persona.Record, s batch.Summary) LogLine {
	l := LogLine{TurnID: rec.TurnID, SummarySource: s.Source, Cached: s.Cached, Detail: s.Detail}
	if l.SummarySource == "" {
		l.SummarySource = batch.SummaryRule
	}
	if s.RejectedBy != "" {
		r := s.RejectedBy
		l.RejectedBy = &r
	}
	return l
}

// StoreOption is the store sidecar of outcome s, for RunWriter.Add:
// store.WithSummary(rule|model, rejected_by).
func StoreOption(s batch.Summary) store.AddOption {
	src := store.SummaryRule
	if s.Source == batch.SummaryModel {
		src = store.SummaryModel
	}
	return store.WithSummary(src, s.RejectedBy)
}
