package web

import (
	"testing"

	"evident/persona"
	"evident/store"
)

func TestSummarySource(t *testing.T) {
	tests := []struct {
		name string
		e    store.Entry
		want string
	}{
		{"a model's summary that passed is named as the model's", store.Entry{SummarySource: persona.SummaryModel},
			"모델이 고쳐 쓰고 검사를 통과한 문장"},
		{"a rule sentence after a rejected rewrite says what rejected it", store.Entry{SummarySource: persona.SummaryRule, SummaryRejectedBy: "check 10"},
			"규칙이 쓴 기본 문장 (모델 요약은 「check 10」에서 걸려 되돌림)"},
		{"a rule sentence with no model asked is the rule's", store.Entry{SummarySource: persona.SummaryRule}, "규칙이 쓴 기본 문장"},
		{"a record without a sidecar says nothing", store.Entry{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarySource(tt.e); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
