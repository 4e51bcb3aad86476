package review

import (
	"reflect"
	"testing"
)

func TestForms(t *testing.T) {
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"준비되셨습니까", []string{"ㅂ니까", "니까", "까"}}, // 습 ends in ㅂ, 니 in none
		{"갑시다", []string{"ㅂ시다", "시다", "다"}},
		{"있소", []string{"있소", "ㅆ소", "소"}},
		{"봐", []string{"봐"}},
		{"「좋아", []string{"좋아", "ㅎ아", "아"}}, // no final before 좋아: 「 is no syllable; 좋 ends in ㅎ
		{"", nil},
	} {
		t.Run("the word "+tc.word+" gives its tails", func(t *testing.T) {
			if got := forms(tc.word); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("forms(%q) = %v, want %v", tc.word, got, tc.want)
			}
		})
	}
}
