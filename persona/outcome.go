package persona

import (
	"encoding/json"
	"fmt"
	"strings"

	"evident/internal/located"
)

// The value types of a run's outcome that the pipeline (persona/batch), the
// summarizer (persona/summarize), the store adapter (store) and the shells
// (web, cmd/evident) all share. They are defined here, once (issue 12 item 1).

// Reject is one input row that cannot be judged, written as JSONL
// {file, line, turn_id, reason} (spec persona.md "Output"). TurnID is nil
// when the row has none (or is not a chat_turn row). Line is 1-based, 0 when
// the reject concerns a whole table (a card file without the fields the
// rules need).
type Reject struct {
	File   string  `json:"file"`
	Line   int     `json:"line"`
	TurnID *string `json:"turn_id"`
	Reason string  `json:"reason"`
	// Located reports that Reason already names its position: it is the
	// text of a located.Error with a line ("line 12, column 5: …"), so
	// Text and the shells do not repeat the line. Set by RejectOf; not part
	// of the JSONL form and not stored (false on a reject read back).
	Located bool `json:"-"`
}

// RejectOf is the reject of the row at line of file whose decoding or
// judging failed with err: Reason is err's text, Located whether err
// carries a line (located.Line, issue 12 item 6).
func RejectOf(file string, line int, turnID *string, err error) Reject {
	return Reject{File: file, Line: line, TurnID: turnID, Reason: err.Error(), Located: located.Line(err) > 0}
}

// Text is the reject for people: the reason, after "line N: " unless the
// reason names its position itself (Located).
func (r Reject) Text() string {
	if r.Line > 0 && !r.Located {
		return fmt.Sprintf("line %d: %s", r.Line, r.Reason)
	}
	return r.Reason
}

// Tally counts a run: judged turns per verdict and rejected rows of all
// three tables.
type Tally struct {
	Judged    int
	ByVerdict map[Verdict]int
	Rejected  int
}

// String is the one-line tally printed at the end of a run, e.g.
// "judged 8 (금지 소재 접촉 1 · 세계관 밖 고유명사 1 · 말투 어긋남 2 · 앞 회차를 기억 못 함 1 · 설정대로 말함 3), rejected 0".
func (t Tally) String() string {
	var parts []string
	for _, v := range Verdicts {
		parts = append(parts, fmt.Sprintf("%s %d", v, t.ByVerdict[v]))
	}
	return fmt.Sprintf("judged %d (%s), rejected %d", t.Judged, strings.Join(parts, " · "), t.Rejected)
}

// SummarySource says who wrote a record's summary: the rules' default
// sentence or a model's rewrite that passed the checks (spec persona.md
// "Evidence, summary, hedge": the sidecar).
type SummarySource string

// The two summary sources.
const (
	SummaryRule  SummarySource = "rule"
	SummaryModel SummarySource = "model"
)

// Valid reports whether s is SummaryRule or SummaryModel.
func (s SummarySource) Valid() bool { return s == SummaryRule || s == SummaryModel }

// Summary says which summary a record carries and why a model's rewrite was
// not used (the sidecar of spec persona.md "Evidence, summary, hedge").
type Summary struct {
	// Source is SummaryRule (the rules' default sentence and evidence) or
	// SummaryModel (a model's rewrite that passed the checks).
	Source SummarySource `json:"summary_source"`
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

// CachedAnswer is a model's answer to a summary request as the answer cache
// keeps it (persona/summarize's Cache; the store's llm_cache table,
// migration 0002). It lives here so that the summarizer, which declares the
// cache, and the store, which implements it, share one definition without
// the store importing the pipeline (issue 12 item 3).
type CachedAnswer struct {
	// Text is the answer's text; JSON the answer as raw JSON, nil when it
	// was not JSON (llm.Response).
	Text string          `json:"text"`
	JSON json.RawMessage `json:"json,omitempty"`
	// InputTokens and OutputTokens are what the answer cost when fetched.
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Model is the model name the server reported.
	Model string `json:"model,omitempty"`
}

// CacheEntry is one CachedAnswer under its content address, with what it
// answered.
type CacheEntry struct {
	// Key is the content address: sha256 (hex) over the prompt version,
	// provider, model and the request as JSON (persona/summarize "Cache").
	Key string
	// PromptVersion, Provider and Model say what was asked (for
	// housekeeping; Key already depends on them).
	PromptVersion, Provider, Model string
	// Answer is what the model said.
	Answer CachedAnswer
}
