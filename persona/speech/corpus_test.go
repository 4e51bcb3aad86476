package speech

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// columnStyle is the style each column of testdata/styles.tsv is written in.
var columnStyle = map[string]string{
	"하십시오체":   Jondaemal,
	"해요체":     Jondaemal,
	"롤플레이존댓말": Jondaemal,
	"해체":      Banmal,
	"해라체":     Banmal,
	"롤플레이반말":  Banmal,
}

type corpusLine struct {
	line                int
	column, kind, reply string
	needs               bool // the seed reads it wrong
}

func readCorpus(t *testing.T) []corpusLine {
	t.Helper()
	f, err := os.Open("testdata/styles.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		s := sc.Text()
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		parts := strings.SplitN(s, "\t", 4)
		if len(parts) != 4 || columnStyle[parts[0]] == "" || (parts[2] != "+" && parts[2] != "-") {
			t.Fatalf("testdata/styles.tsv:%d: want column<TAB>kind<TAB>+|-<TAB>reply with a known column, got %q", n, s)
		}
		out = append(out, corpusLine{n, parts[0], parts[1], parts[3], parts[2] == "+"})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpus is the speech benchmark of issue 14: accuracy per style column
// for seed and extended on testdata/styles.tsv, and per kind how many lines
// there are and how many of them the seed reads wrong. Run with -v to see
// the tables. It fails when extended is below 99.5 % on any column, or when
// the seed reads a line otherwise than the line's hand-checked "needs" mark
// (so the seed's rule cannot drift either).
func TestCorpus(t *testing.T) {
	lines := readCorpus(t)
	type score struct{ n, seed, ext int }
	cols, kinds := map[string]*score{}, map[string]*score{}
	get := func(m map[string]*score, k string) *score {
		if m[k] == nil {
			m[k] = &score{}
		}
		return m[k]
	}
	seed, ext := Seed(), Extended()
	for _, l := range lines {
		want := columnStyle[l.column]
		sOK := seed.Read(l.reply).Style() == want
		eOK := ext.Read(l.reply).Style() == want
		for _, s := range []*score{get(cols, l.column), get(kinds, l.column+" · "+l.kind)} {
			s.n++
			if sOK {
				s.seed++
			}
			if eOK {
				s.ext++
			}
		}
		if sOK == l.needs {
			t.Errorf("styles.tsv:%d %s %q: seed reads %q, but the line is marked needs=%v", l.line, l.column, l.reply, seed.Read(l.reply).Style(), l.needs)
		}
		if !eOK {
			t.Errorf("styles.tsv:%d %s (%s) %q: extended reads %q, want %q", l.line, l.column, l.kind, l.reply, ext.Read(l.reply).Style(), want)
		}
	}
	pct := func(k, n int) float64 { return 100 * float64(k) / float64(n) }
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-16s %5s %8s %8s\n", "column", "n", "seed %", "ext %")
	for _, c := range slices.Sorted(mapKeys(cols)) {
		s := cols[c]
		fmt.Fprintf(&b, "%-16s %5d %8.1f %8.1f\n", c, s.n, pct(s.seed, s.n), pct(s.ext, s.n))
		if pct(s.ext, s.n) < 99.5 {
			t.Errorf("column %s: extended %.1f %% < 99.5 %%", c, pct(s.ext, s.n))
		}
	}
	fmt.Fprintf(&b, "\n%-24s %5s %10s %10s\n", "column · kind", "n", "seed ok", "ext ok")
	for _, k := range slices.Sorted(mapKeys(kinds)) {
		s := kinds[k]
		fmt.Fprintf(&b, "%-24s %5d %10d %10d\n", k, s.n, s.seed, s.ext)
	}
	t.Log(b.String())
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
