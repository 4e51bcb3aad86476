package persona

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// matcher finds which of a list of patterns occur in a text as byte
// substrings (strings.Contains of each, together): an Aho–Corasick automaton
// (Aho and Corasick, "Efficient string matching", CACM 1975) over the bytes of
// the patterns, built once (the lexicon's terms, a card's entity_roles roles)
// and read by any number of goroutines.
//
// Each state knows the smallest pattern index that ends there or at any state
// on its failure chain (least), so the earliest row that occurs anywhere in
// a text is one transition and one comparison per byte: a scan costs
// O(len(text)) whatever the number of patterns, where one strings.Contains
// per pattern cost O(len(text) × patterns). The rules need the earliest
// occurring row (spec persona.md rules 3 and 4), never the matches
// themselves; the Aho–Corasick packages in Go report matches (leftmost-first
// or every overlapping one, whose number is not linear in the text), which is
// why the rules keep their own.
//
// States are numbered in breadth-first order (0 is the root); the children of
// state s are the states kids[s] .. kids[s+1]-1, sorted by the byte on their
// edge. A text byte costs at most one child lookup (a binary search in at most
// 256 labels) plus the failure moves, of which a whole scan makes at most
// len(text) (each one shortens the matched suffix, which grows by at most one
// byte per byte of text).
type matcher struct {
	label []byte  // label[s]: the byte on the edge into s (s > 0)
	kids  []int32 // len(states)+1 offsets: the children of s are kids[s]..kids[s+1]-1
	fail  []int32 // the state of the longest proper suffix of s's string that is a state
	least []int32 // smallest pattern index ending at s or on its failure chain; none when none
	own   []int32 // smallest pattern index whose string is exactly s's; none when none
	out   []int32 // the nearest state on s's failure chain, s included, with own >= 0; none when none
	same  []int32 // same[p]: the next larger pattern index with pattern p's string; none when none
	dense *denseTable
}

// denseTable is a matcher's transition table as one array (makeDense): each
// state is a row of width classes+1 at offset state×width, whose entry 0 is
// the state's least and entry 1+class[b] the offset of the state after byte
// b, plus 1 (where that state's transitions start; the root's start at 1).
// Every byte that occurs in some pattern has its own class; class 0 is every
// other byte, which leads to the root from anywhere. One table read per byte
// instead of a child search and failure moves.
type denseTable struct {
	d     []int32
	width int
	class [256]uint8
}

const none = math.MaxInt32

// maxMatcherBytes is the most pattern bytes one matcher indexes: its states
// are numbered in int32. Over it, newMatcher returns an error naming the limit.
const maxMatcherBytes = math.MaxInt32 - 1

// newMatcher builds the matcher of patterns 0..n-1 (pattern(i) gives
// pattern i; an empty pattern never occurs, as the rules skip it). It returns
// nil when no pattern is non-empty, and an error when the patterns hold more
// than maxMatcherBytes bytes. Building costs O(total bytes × log patterns)
// time (one sort) and O(total bytes) memory.
func newMatcher(n int, pattern func(i int) string) (*matcher, error) {
	if n > maxMatcherBytes {
		return nil, fmt.Errorf("%d patterns, over the %d one matcher indexes", n, maxMatcherBytes)
	}
	total := 0
	order := make([]int32, 0, n)
	for i := range n {
		if p := pattern(i); p != "" {
			total += len(p)
			if total > maxMatcherBytes {
				return nil, fmt.Errorf("patterns of more than %d bytes in all, over what one matcher indexes", maxMatcherBytes)
			}
			order = append(order, int32(i))
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	// Sorted by bytes (ties by index), a pattern's trie path shares its
	// first lcp bytes with the previous pattern's and adds the rest as
	// children after every child there: children come in byte order.
	slices.SortFunc(order, func(a, b int32) int {
		if c := strings.Compare(pattern(int(a)), pattern(int(b))); c != 0 {
			return c
		}
		return int(a - b)
	})

	// The trie in insertion order, as first-child/next-sibling lists.
	type tnode struct {
		first, last, next int32 // first and last child, next sibling; -1 when none
		own               int32
		label             byte
	}
	tr := make([]tnode, 1, total/2+1)
	tr[0] = tnode{first: -1, last: -1, next: -1, own: none}
	same := make([]int32, n)
	for i := range same {
		same[i] = none
	}
	path := make([]int32, 1, 64) // path[d]: the node of the previous pattern's first d bytes
	prev, prevIdx := "", int32(-1)
	for _, pi := range order {
		p := pattern(int(pi))
		l := 0
		for l < len(p) && l < len(prev) && p[l] == prev[l] {
			l++
		}
		path = path[:l+1]
		for d := l; d < len(p); d++ {
			parent := path[d]
			id := int32(len(tr))
			tr = append(tr, tnode{first: -1, last: -1, next: -1, own: none, label: p[d]})
			if tr[parent].last < 0 {
				tr[parent].first = id
			} else {
				tr[tr[parent].last].next = id
			}
			tr[parent].last = id
			path = append(path, id)
		}
		end := path[len(p)]
		if tr[end].own == none {
			tr[end].own = pi
		} else {
			// The same string as the previous pattern (equal strings
			// are adjacent in order), with a larger index.
			same[prevIdx] = pi
		}
		prev, prevIdx = p, pi
	}

	// Breadth-first renumbering: the children of each state are contiguous.
	states := len(tr)
	m := &matcher{
		label: make([]byte, states),
		kids:  make([]int32, states+1),
		fail:  make([]int32, states),
		least: make([]int32, states),
		own:   make([]int32, states),
		out:   make([]int32, states),
		same:  same,
	}
	bfs := make([]int32, 1, states) // bfs[s]: the trie node of state s
	for s := 0; s < len(bfs); s++ {
		t := &tr[bfs[s]]
		m.own[s] = t.own
		m.label[s] = t.label
		m.kids[s] = int32(len(bfs))
		for c := t.first; c >= 0; c = tr[c].next {
			bfs = append(bfs, c)
		}
	}
	m.kids[states] = int32(states)
	tr = nil

	// Failure links, least and out, parents before children (BFS order).
	m.least[0], m.out[0] = none, none
	for s := int32(0); s < int32(states); s++ {
		for c := m.kids[s]; c < m.kids[s+1]; c++ {
			f := int32(0)
			if s != 0 {
				f = m.step(m.fail[s], m.label[c])
			}
			m.fail[c] = f
			m.least[c] = min(m.own[c], m.least[f])
			if m.own[c] != none {
				m.out[c] = c
			} else {
				m.out[c] = m.out[f]
			}
		}
	}
	return m, nil
}

// makeDense builds m's dense transition table when it has at most budget
// entries (states × (byte classes + 1)); else m keeps its sparse one.
// Building costs one write per entry.
func (m *matcher) makeDense(budget int) {
	if m == nil {
		return
	}
	var used [256]bool
	for _, b := range m.label[1:] {
		used[b] = true
	}
	var class [256]uint8
	k := 1
	for b, u := range used {
		if u {
			if k == 256 {
				return // 256 classes do not fit a byte: every byte value is used
			}
			class[b] = uint8(k)
			k++
		}
	}
	w := k + 1
	states := len(m.label)
	if states > budget/w {
		return
	}
	d := make([]int32, states*w)
	for c := range d[1 : 1+k] {
		d[1+c] = 1 // to the root, unless the root has a child for the class
	}
	// Parents before children (breadth-first order): a state's row is its
	// failure state's row with its own children written over it.
	for s := range states {
		if s > 0 {
			f := int(m.fail[s])
			copy(d[s*w+1:(s+1)*w], d[f*w+1:(f+1)*w])
		}
		for c := m.kids[s]; c < m.kids[s+1]; c++ {
			d[s*w+1+int(class[m.label[c]])] = c*int32(w) + 1
		}
		d[s*w] = m.least[s]
	}
	m.dense = &denseTable{d: d, width: w, class: class}
}

// step is the state after reading byte b in state s.
func (m *matcher) step(s int32, b byte) int32 {
	for {
		if c, ok := m.child(s, b); ok {
			return c
		}
		if s == 0 {
			return 0
		}
		s = m.fail[s]
	}
}

// child is s's child by byte b.
func (m *matcher) child(s int32, b byte) (int32, bool) {
	lo, hi := m.kids[s], m.kids[s+1]
	if hi-lo == 1 {
		return lo, m.label[lo] == b
	}
	i, ok := slices.BinarySearch(m.label[lo:hi], b)
	return lo + int32(i), ok
}

// earliest returns the smallest index of a pattern that occurs in text, and
// whether one does. It stops at pattern 0 (nothing is earlier).
func (m *matcher) earliest(text string) (int, bool) {
	best, _ := m.scan(text)
	return int(best), best != none
}

// scan is earliest with the work it did: best is the smallest pattern index
// that occurs (none when none does), and moves counts the states it stood in
// while reading (one per byte read plus one per failure move; one per byte
// with the dense table), at most 2×len(text) by construction; the tests hold
// it to that.
func (m *matcher) scan(text string) (best int32, moves int) {
	best = none
	if m == nil {
		return best, 0
	}
	s := int32(0)
	if t := m.dense; t != nil {
		d, cls := t.d, &t.class
		o := 1
		for i := 0; i < len(text); i++ {
			o = int(d[o+int(cls[text[i]])])
			if l := d[o-1]; l < best {
				if best = l; best == 0 {
					return best, i + 1
				}
			}
		}
		return best, len(text)
	}
	for i := 0; i < len(text); i++ {
		b := text[i]
		for {
			moves++
			if c, ok := m.child(s, b); ok {
				s = c
				break
			}
			if s == 0 {
				break
			}
			s = m.fail[s]
		}
		if l := m.least[s]; l < best {
			if best = l; best == 0 {
				break
			}
		}
	}
	return best, moves
}
