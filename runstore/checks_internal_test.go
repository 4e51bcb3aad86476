package runstore

import (
	"context"
	"testing"

	"evident/persona"
	"evident/persona/batch"
)

// inlineModel is a summarizer that says it never waits.
type inlineModel struct{ batch.SummarizerFunc }

func (inlineModel) Inline() bool { return true }

// The store's checks run in the worker (batch.Inline) unless the summarizer
// they wrap may wait on a model.
func TestTheChecksRunInlineUnlessAModelMayWait(t *testing.T) {
	model := batch.SummarizerFunc(func(context.Context, *persona.Record, persona.Context) persona.Summary {
		return persona.Summary{Source: persona.SummaryRule}
	})
	for _, c := range []struct {
		name  string
		inner batch.Summarizer
		want  bool
	}{
		{"rules only", nil, true},
		{"a model client", model, false},
		{"an inner summarizer that is inline itself", inlineModel{model}, true},
	} {
		if got := newChecker(nil, c.inner).Inline(); got != c.want {
			t.Errorf("%s: Inline %v, want %v", c.name, got, c.want)
		}
	}
}
