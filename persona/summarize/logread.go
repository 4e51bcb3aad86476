package summarize

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// LogTally counts a summary sidecar (the judge's --summary-log): how many
// records carry the model's summary and the rule's, and, for the rule's,
// what rejected the model's rewrite (RejectedBy values such as "check 8",
// "proper noun", "discarded: verdict differs"; "" for records whose
// summary was never offered to a model).
type LogTally struct {
	Model, Rule int
	RejectedBy  map[string]int
}

// ReadLog tallies a summary sidecar. A line that is not a LogLine is an error
// naming its 1-based line.
func ReadLog(r io.Reader) (LogTally, error) {
	t := LogTally{RejectedBy: map[string]int{}}
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return t, fmt.Errorf("line %d: %w", line, err)
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			var l LogLine
			if jerr := json.Unmarshal([]byte(s), &l); jerr != nil {
				return t, fmt.Errorf("line %d: %w", line, jerr)
			}
			switch l.SummarySource {
			case "model":
				t.Model++
			case "rule":
				t.Rule++
				if l.RejectedBy != nil {
					t.RejectedBy[*l.RejectedBy]++
				}
			default:
				return t, fmt.Errorf("line %d: summary_source %q is not rule or model", line, l.SummarySource)
			}
		}
		if err == io.EOF {
			return t, nil
		}
	}
}

// String is one line: "summaries: model 4, rule 4 (check 10 1 · proper noun 1 · discarded: verdict differs 2)".
func (t LogTally) String() string {
	keys := make([]string, 0, len(t.RejectedBy))
	for k := range t.RejectedBy {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, t.RejectedBy[k]))
	}
	s := fmt.Sprintf("summaries: model %d, rule %d", t.Model, t.Rule)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, " · ") + ")"
	}
	return s
}
