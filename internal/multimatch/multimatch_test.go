package multimatch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func mustNew(t testing.TB, patterns []string) *Matcher {
	t.Helper()
	m, err := New(len(patterns), func(i int) string { return patterns[i] })
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withDense returns a copy of m with its dense table (nil for nil).
func withDense(t testing.TB, m *Matcher) *Matcher {
	t.Helper()
	if m == nil {
		return nil
	}
	d := *m
	d.Dense(1 << 20)
	if d.dense == nil {
		t.Fatal("no dense table within 1 Mi entries")
	}
	return &d
}

// occurring is what one strings.Contains per pattern says: the indices of
// the non-empty patterns that occur in text, in order.
func occurring(patterns []string, text string) []int {
	var out []int
	for i, p := range patterns {
		if p != "" && strings.Contains(text, p) {
			out = append(out, i)
		}
	}
	return out
}

// TestHandCheckedPatterns: the three questions on small cases whose answers
// are read off by hand, on the sparse and the dense automaton.
func TestHandCheckedPatterns(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		text     string
		earliest int   // -1: none
		even     int   // EarliestWhere with pred "index is even"; -1: none
		each     []int // sorted
	}{
		{"the earliest in list order, not in the text", []string{"스승", "동생"}, "동생과 스승", 0, 0, []int{0, 1}},
		{"a pattern inside a longer one is found through the failure chain", []string{"he", "she", "hers"}, "ushers", 0, 0, []int{0, 1, 2}},
		{"a pattern after a longer one fails mid-way", []string{"동생이름", "생이"}, "동생이 있어", 1, -1, []int{1}},
		{"repeated strings are each reported; the first is the earliest", []string{"x", "ab", "ab", "ab"}, "zabz", 1, 2, []int{1, 2, 3}},
		{"an empty pattern never occurs", []string{"", "a"}, "a", 1, -1, []int{1}},
		{"nothing occurs", []string{"가나", "다"}, "라마", -1, -1, nil},
		{"an empty text holds nothing", []string{"a"}, "", -1, -1, nil},
		{"a pattern at the very end is found", []string{"zz", "끝"}, "이것이 끝", 1, -1, []int{1}},
		{"overlapping occurrences of one pattern count once", []string{"aa"}, "aaaa", 0, 0, []int{0}},
	}
	for _, tt := range tests {
		sparse := mustNew(t, tt.patterns)
		for _, m := range []*Matcher{sparse, withDense(t, sparse)} {
			name := tt.name
			if m != nil && m.dense != nil {
				name += " (dense)"
			}
			t.Run(name, func(t *testing.T) {
				got, ok := m.Earliest(tt.text)
				if !ok {
					got = -1
				}
				if got != tt.earliest {
					t.Errorf("Earliest = %d, want %d", got, tt.earliest)
				}
				first, even := m.EarliestWhere(tt.text, func(i int) bool { return i%2 == 0 })
				if first != tt.earliest || even != tt.even {
					t.Errorf("EarliestWhere = (%d, %d), want (%d, %d)", first, even, tt.earliest, tt.even)
				}
				var each []int
				m.Each(tt.text, func(i int) bool { each = append(each, i); return true })
				slices.Sort(each)
				if !slices.Equal(each, tt.each) {
					t.Errorf("Each = %v, want %v", each, tt.each)
				}
			})
		}
	}
}

// TestAgreesWithContainsPerPattern holds the automaton to one
// strings.Contains per pattern on random pattern lists and texts over a small
// alphabet (prefixes, suffixes, repeats and overlaps are common), sparse and
// dense: Earliest, EarliestWhere with a random predicate (asked at most once
// per pattern) and Each (each occurring index exactly once), and the work
// bound of Scan. The seed is fixed.
func TestAgreesWithContainsPerPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 3))
	pieces := []string{"a", "b", "ab", "가", "나", "가나", ""}
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	for iter := range 3000 {
		patterns := make([]string, 1+rng.IntN(12))
		pass := make([]bool, len(patterns))
		for i := range patterns {
			patterns[i] = word(rng.IntN(4))
			pass[i] = rng.IntN(3) == 0
		}
		text := word(rng.IntN(20))
		want := occurring(patterns, text)
		wantFirst, wantPass := -1, -1
		for _, i := range want {
			if wantFirst < 0 {
				wantFirst = i
			}
			if pass[i] && wantPass < 0 {
				wantPass = i
			}
		}
		sparse := mustNew(t, patterns)
		for _, m := range []*Matcher{sparse, withDense(t, sparse)} {
			fail := func(format string, a ...any) {
				t.Helper()
				t.Fatalf("iteration %d: patterns %q text %q (dense %v): "+format,
					append([]any{iter, patterns, text, m != nil && m.dense != nil}, a...)...)
			}
			if got, moves := m.Scan(text); got != wantFirst || moves > 2*len(text) {
				fail("Scan = (%d, %d moves), want (%d, at most %d)", got, moves, wantFirst, 2*len(text))
			}
			asked := map[int]int{}
			first, firstPass := m.EarliestWhere(text, func(i int) bool { asked[i]++; return pass[i] })
			if first != wantFirst || firstPass != wantPass {
				fail("EarliestWhere = (%d, %d), want (%d, %d)", first, firstPass, wantFirst, wantPass)
			}
			for i, n := range asked {
				if n != 1 || !slices.Contains(want, i) {
					fail("pred asked about %d %d times (occurring: %v)", i, n, want)
				}
			}
			var each []int
			m.Each(text, func(i int) bool { each = append(each, i); return true })
			slices.Sort(each)
			if !slices.Equal(each, want) {
				fail("Each = %v, want %v", each, want)
			}
		}
	}
}

// TestEachStopsWhenToldTo: yield returning false ends Each at once.
func TestEachStopsWhenToldTo(t *testing.T) {
	m := mustNew(t, []string{"a", "b", "c"})
	var got []int
	m.Each("abc", func(i int) bool { got = append(got, i); return false })
	if !slices.Equal(got, []int{0}) {
		t.Errorf("Each reported %v after stopping, want [0]", got)
	}
}

// TestNewRefusesMoreThanMaxBytes: patterns over MaxBytes in all are an
// error naming the limit, found before any state is built (one 64 MiB string
// named 33 times is 2 GiB + 64 MiB of patterns and no more memory).
func TestNewRefusesMoreThanMaxBytes(t *testing.T) {
	big := strings.Repeat("a", 64<<20)
	_, err := New(33, func(int) string { return big })
	if err == nil || !strings.Contains(err.Error(), "2147483646 bytes") {
		t.Errorf("New of 2 GiB + 64 MiB of patterns: err %v, want one naming the limit of 2147483646 bytes", err)
	}
	if m, err := New(3, func(int) string { return "" }); m != nil || err != nil {
		t.Errorf("New of empty patterns = %v, %v; want nil, nil", m, err)
	}
	var none *Matcher
	if _, ok := none.Earliest("abc"); ok {
		t.Error("a nil Matcher found a pattern")
	}
}
