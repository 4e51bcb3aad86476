package persona

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// naiveDistinct is the straightforward quadratic de-duplication the rules
// used before issue 15.
func naiveDistinct(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func TestDistinct(t *testing.T) {
	long := make([]string, 0, 100)
	for i := range 100 {
		long = append(long, fmt.Sprintf("n%d", i%37)) // 37 distinct, repeated
	}
	tests := []struct {
		name string
		list []string
		want []string
	}{
		{"an empty list yields nothing", nil, nil},
		{"a short list keeps first occurrences in order", []string{"리안", "검술원", "리안", "아카데미", "검술원"}, []string{"리안", "검술원", "아카데미"}},
		{"the empty string is a value like any other", []string{"", "a", ""}, []string{"", "a"}},
		{"a list longer than the scan limit gives the same as the naive loop", long, naiveDistinct(long)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var idx []int
			Distinct(tt.list, func(i int, s string) bool {
				got = append(got, s)
				idx = append(idx, i)
				return true
			})
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for k, i := range idx {
				if tt.list[i] != got[k] || slices.Index(tt.list, got[k]) != i {
					t.Fatalf("index %d for %q is not its first occurrence", i, got[k])
				}
			}
		})
	}
	t.Run("yield returning false stops the walk", func(t *testing.T) {
		n := 0
		Distinct(long, func(int, string) bool { n++; return n < 3 })
		if n != 3 {
			t.Fatalf("yield called %d times, want 3", n)
		}
	})
}

// TestOffCanonOfAHugeRow judges one row with 200,000 named_entities (1,000
// distinct, the rest repeats; half of them canon): the off-canon list is the
// distinct non-canon names in first-occurrence order. The quadratic loop this
// replaced took seconds on such a row (issue 15); see BenchmarkOffCanonByRowSize.
func TestOffCanonOfAHugeRow(t *testing.T) {
	card := benchCard
	card.CanonEntities = nil
	var names, want []string
	for i := range 200_000 {
		names = append(names, fmt.Sprintf("이름%d", i%1000))
	}
	for i := range 1000 {
		if i%2 == 0 {
			card.CanonEntities = append(card.CanonEntities, fmt.Sprintf("이름%d", i))
		} else {
			want = append(want, fmt.Sprintf("이름%d", i))
		}
	}
	j, err := NewJudge([]Card{card}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn := Turn{TurnID: "T-1", SessionID: "S-1", CharacterID: card.CharacterID, ModelID: "m",
		ReplyText: sp("이름을 부르면 대답해."), NamedEntities: names}
	rec, err := j.Judge(&turn, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != OffCanon || !slices.Equal(rec.OffCanonEntities, want) {
		t.Fatalf("verdict %q, %d off-canon names (first %q), want %q with %d", rec.Verdict,
			len(rec.OffCanonEntities), strings.Join(rec.OffCanonEntities[:min(3, len(rec.OffCanonEntities))], ","), OffCanon, len(want))
	}
}

// BenchmarkOffCanonByRowSize is rule 2 over rows of growing size: ns/op
// divided by the name count stays flat (linear), where the old
// slices.Contains loop grew with the row.
func BenchmarkOffCanonByRowSize(b *testing.B) {
	card := benchCard
	j, err := NewJudge([]Card{card}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 16_000, 128_000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("이름%d", i)
		}
		turn := Turn{TurnID: "T-1", SessionID: "S-1", CharacterID: card.CharacterID, ModelID: "m",
			ReplyText: sp("이름을 부르면 대답해."), NamedEntities: names}
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := j.Judge(&turn, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/name")
		})
	}
}

// BenchmarkJudgeByReplySize is rules 1 (sentences and speech style), 3
// (lexicon terms) and the evidence over replies of growing length, built
// from the bench replies repeated: ns/byte stays flat when every rule is
// linear in the reply.
func BenchmarkJudgeByReplySize(b *testing.B) {
	j := benchJudge(b)
	base := strings.Join(benchReplies, " ")
	for _, size := range []int{1 << 10, 1 << 14, 1 << 18, 1 << 20} {
		var sb strings.Builder
		for sb.Len() < size {
			sb.WriteString(base)
			sb.WriteByte(' ')
		}
		reply := sb.String()
		turn := Turn{TurnID: "T-1", SessionID: "S-1", CharacterID: benchCard.CharacterID, ModelID: "m",
			ReplyText: &reply, NamedEntities: []string{"흑조", "석주"}, FirstPerson: sp("나")}
		b.Run(fmt.Sprintf("bytes=%d", len(reply)), func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := j.Judge(&turn, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
