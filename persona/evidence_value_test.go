package persona

import (
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestSameEvidenceValue(t *testing.T) {
	nfd := norm.NFD.String("검술원")
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"equal strings are the same", "검술원", "검술원", true},
		{"a decomposed copy of a string is the same text", nfd, "검술원", true},
		{"it is symmetric in normalisation", "검술원", nfd, true},
		{"different strings differ", "검술원", "아카데미", false},
		{"null is null", nil, nil, true},
		{"null is not the empty string", nil, "", false},
		{"booleans compare as booleans", true, true, true},
		{"true is not false", true, false, false},
		{"an int and a float64 of the same number are the same", 3, 3.0, true},
		{"an int64 and an int are the same number", int64(7), 7, true},
		{"different numbers differ", 3, 4.0, false},
		{"a number is not its string", 1, "1", false},
		{"a string is not a number", "1", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SameEvidenceValue(tt.a, tt.b); got != tt.want {
				t.Fatalf("SameEvidenceValue(%#v, %#v) = %v", tt.a, tt.b, got)
			}
		})
	}
}

func TestCheckIDsMatchTheSeedNumbers(t *testing.T) {
	ids := []CheckID{CheckVerdict, CheckRequired, CheckStyle, CheckOffCanon, CheckTouched, CheckRecall, CheckNulls,
		CheckEvidenceField, CheckEvidenceValue, CheckSummary}
	for i, id := range ids {
		if int(id) != i+1 || id.Name() != CheckNames[i] {
			t.Fatalf("check %d: id %d, name %q", i+1, id, id.Name())
		}
	}
	if CheckEvidenceField.Label() != "check 8" || CheckSummary.Name() != "summary 가 존댓말 한 문장" {
		t.Fatalf("labels: %q, %q", CheckEvidenceField.Label(), CheckSummary.Name())
	}
}
