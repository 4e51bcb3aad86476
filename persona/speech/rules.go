package speech

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rules are the reading rules a profile applies beyond its ending lists. The
// seed profile has none (the seed's rule is the last 어절 alone); profile
// "extended" has ExtendedRules. Every list is data: the package doc gives the
// sentence that needed each rule.
type Rules struct {
	// Words are whole 어절 that make a sentence 존댓말 on their own: the
	// one-word answers 네, 예, 넵, 아뇨 ("네." is 존댓말, "했네." is not: a
	// word matches only when it is the whole 어절).
	Words []string
	// Window is how many trailing words may follow the polite predicate in
	// the same sentence (inverted order, "와 주세요 선생님"); 0 turns the rule
	// off.
	Window int
	// Trailers are the words allowed in that window: conjunctions, adverbs,
	// interjections and address nouns (그러면, 정말, 하하, 언니). A trailing
	// word also qualifies when it ends in one of Address.
	Trailers []string
	// Address are suffixes that make a trailing word a form of address
	// (선생님, 손님, 민수 씨).
	Address []string
	// Connectives are endings of a clause fragment: when a sentence's last
	// clause after a comma ends in one (and not in one of Quotatives), the
	// sentence is read by the last word before that comma ("감사합니다, 늘
	// 챙겨 주셔서"). They follow the Endings syntax: "ㄴ데" is 데 after a
	// ㄴ-final syllable (는데, 은데, 그런데).
	Connectives []string
	// Quotatives end a 반말 sentence although they end in 고 (간다고, 하라고):
	// a fragment ending in one is a whole 반말 clause, not a fragment.
	Quotatives []string
	// Asides turns on setting aside role-play asides: a bracketed span (…),
	// （…）, […] or 「…」 and narration between single asterisks *…* that
	// stands before or after a sentence's words is not read for the style
	// and is reported in Reading.Asides.
	Asides bool
	// FirstPerson maps declined first-person forms to the base form a card
	// writes (제, 제가 → 저; 내, 내가 → 나), for SameFirstPerson.
	FirstPerson map[string]string
}

// ExtendedRules returns the rules of profile "extended" (a fresh copy; see the
// package doc for why each entry is there).
func ExtendedRules() Rules {
	return Rules{
		Words:  []string{"네", "예", "넵", "옙", "아뇨"},
		Window: 2,
		Trailers: []string{
			// conjunctions and adverbs that follow a predicate in speech
			"그러면", "그럼", "그래서", "그리고", "그런데", "근데", "하지만", "그러니까",
			"정말", "정말로", "진짜", "진짜로", "참", "꼭", "좀", "제발", "얼른", "어서", "빨리",
			"먼저", "다시", "또", "지금", "이제", "곧", "벌써", "아직", "이따가", "나중에",
			"혹시", "아마", "아마도", "역시", "그냥", "같이", "함께", "많이", "너무", "오늘", "내일",
			"이렇게", "그렇게", "여기", "거기", "여기서", "거기서",
			// interjections
			"하하", "허허", "호호", "히히", "헤헤", "흐흐",
			// address nouns without an address suffix
			"여러분", "형", "형님", "언니", "오빠", "누나", "선배", "엄마", "아빠", "어머니", "아버지",
			"할머니", "할아버지", "이모", "삼촌", "당신", "자기", "여보",
		},
		Address:     []string{"님", "씨"},
		Connectives: []string{"고", "서", "면", "ㄴ데", "지만", "면서", "려고", "도록", "다가", "니까", "거나", "든지", "며"},
		Quotatives:  []string{"다고", "라고", "냐고", "자고"},
		Asides:      true,
		FirstPerson: map[string]string{"제": "저", "제가": "저", "내": "나", "내가": "나"},
	}
}

// compiledRules is Rules ready for reading: word sets and compiled endings.
type compiledRules struct {
	Rules
	words, trailers map[string]bool
	wordLen         int // the longest of Words in bytes
	connectives     []ending
	quotatives      []ending
}

func compileRules(r Rules) *compiledRules {
	c := &compiledRules{Rules: r, words: set(r.Words), trailers: set(r.Trailers)}
	for _, w := range r.Words {
		c.wordLen = max(c.wordLen, len(w))
	}
	c.connectives = compileEndings(r.Connectives)
	c.quotatives = compileEndings(r.Quotatives)
	return c
}

func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// Rules returns a copy of the reading rules p applies beyond its endings
// (zero Rules for the seed profile and custom names).
func (p *Profile) Rules() Rules {
	if p.rules == nil {
		return Rules{}
	}
	r := p.rules.Rules
	r.Words = slices.Clone(r.Words)
	r.Trailers = slices.Clone(r.Trailers)
	r.Address = slices.Clone(r.Address)
	r.Connectives = slices.Clone(r.Connectives)
	r.Quotatives = slices.Clone(r.Quotatives)
	fp := make(map[string]string, len(r.FirstPerson))
	for k, v := range r.FirstPerson {
		fp[k] = v
	}
	r.FirstPerson = fp
	return r
}

// FirstPersonBase returns the base form of first-person word w under p: under
// "extended" 제 and 제가 give 저, 내 and 내가 give 나; any other word, and
// every word under seed, is returned as is.
func (p *Profile) FirstPersonBase(w string) string {
	if p.rules != nil {
		if b, ok := p.rules.FirstPerson[w]; ok {
			return b
		}
	}
	return w
}

// SameFirstPerson reports whether the first person logged in a turn agrees
// with the card's first person (spec persona.md rule 1, mismatch "first_person
// non-null and differs from the card"). Under seed it is plain equality, the
// seed's rule. Under "extended" the declined forms compare equal
// (FirstPersonBase: the log's 제가 agrees with a card's 저, 내 with 나), and so
// does any of declensions, the card's own declined forms where the card lists
// them (a card whose first person is 소인 may list 소인이).
func (p *Profile) SameFirstPerson(logged, card string, declensions ...string) bool {
	if logged == card {
		return true
	}
	if p.rules == nil {
		return false
	}
	return slices.Contains(declensions, logged) || p.FirstPersonBase(logged) == p.FirstPersonBase(card)
}

// Ways a sentence can be read as 존댓말 (Sentence.Via).
const (
	ViaEnding   = "ending"   // its last 어절 ends in an ending (the seed's rule)
	ViaWord     = "word"     // its last 어절 is a one-word answer (Rules.Words)
	ViaInverted = "inverted" // a polite predicate followed by trailers (Rules.Window)
	ViaFragment = "fragment" // a clause fragment after a comma (Rules.Connectives)
)

// Kinds of set-aside text (Aside.Kind).
const (
	AsideBracket   = "bracket"   // (…), （…）, […] or 「…」
	AsideNarration = "narration" // *…*
)

// Aside is a span of a reply that was not read for the style: a role-play
// aside in brackets or narration in asterisks (Rules.Asides). Text is the
// span as written, brackets included (a substring of the reply).
type Aside struct {
	Kind string
	Text string
}

// word returns an inner word stripped of non-syllable runes at both ends
// ("주세요," → 주세요, "'선생님'" → 선생님); "" when it has no syllable.
func word(w string) string {
	return strings.TrimFunc(w, func(r rune) bool { return !IsSyllable(r) })
}

// trailer reports whether w may follow the polite predicate (Rules.Trailers,
// Rules.Address).
func (c *compiledRules) trailer(w string) bool {
	if c.trailers[w] {
		return true
	}
	for _, a := range c.Address {
		if strings.HasSuffix(w, a) {
			return true
		}
	}
	return false
}

// inverted looks back from the end of sentence s over at most Window trailing
// trailers and returns the polite predicate before them and its ending; ""
// when there is none. last is s's last 어절 stripped (Sentence.Word). It
// walks the words from the end without splitting s.
func (p *Profile) inverted(s, last string) (w, e string) {
	c := p.rules
	if c.Window == 0 || !c.trailer(last) {
		return "", ""
	}
	n, end := 0, len(s)
	prevAddress := false
	for end > 0 {
		f, start := prevField(s, end)
		end = start
		f = word(f)
		if f == "" {
			continue // emoji, ㅋㅋ, a lone mark
		}
		if prevAddress {
			prevAddress = false
			continue // "민수 씨": a name and its spaced address suffix are one trailer
		}
		if n > 0 {
			if e := p.Ending(f); e != "" {
				return f, e
			}
		}
		if n == c.Window || !c.trailer(f) {
			return "", ""
		}
		prevAddress = slices.Contains(c.Address, f)
		n++
	}
	return "", ""
}

// prevField returns the whitespace-separated field of s that ends at or
// before end, and the byte offset where it starts ("" at the start of s).
func prevField(s string, end int) (string, int) {
	for end > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= n
	}
	start := end
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:start])
		if unicode.IsSpace(r) {
			break
		}
		start -= n
	}
	return s[start:end], start
}

// fragment reads sentence s by the clause before its last comma when the
// clause after the comma is a fragment (ends in a connective, not a
// quotative); it returns that clause's last word and its ending, "" when the
// rule does not apply.
func (p *Profile) fragment(s, last string) (w, e string) {
	c := p.rules
	i := lastComma(s)
	if i < 0 || !matchAny(c.connectives, last) || matchAny(c.quotatives, last) {
		return "", ""
	}
	w = LastWord(s[:i])
	if e = p.Ending(w); e == "" {
		return "", ""
	}
	return word(w), e
}

// lastComma returns the byte offset of the last ',' '，' or '、' in s, -1
// when none (a byte scan: most sentences have no comma).
func lastComma(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ',':
			return i
		case 0x8C: // '，' is EF BC 8C
			if i >= 2 && s[i-2:i+1] == "，" {
				return i - 2
			}
		case 0x81: // '、' is E3 80 81
			if i >= 2 && s[i-2:i+1] == "、" {
				return i - 2
			}
		}
	}
	return -1
}

func matchAny(es []ending, w string) bool {
	for _, e := range es {
		if e.match(w) {
			return true
		}
	}
	return false
}

// span is a set-aside candidate: bytes [start, end) of the text.
type span struct {
	start, end int
	kind       string
}

// hasOpener reports whether text has an aside opener ( （ [ 「 or *; a byte
// scan, cheaper than strings.ContainsAny with non-ASCII runes.
func hasOpener(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '(', '[', '*':
			return true
		case 0xEF: // （ is EF BC 88
			if strings.HasPrefix(text[i:], "（") {
				return true
			}
		case 0xE3: // 「 is E3 80 8C
			if strings.HasPrefix(text[i:], "「") {
				return true
			}
		}
	}
	return false
}

// closer returns the closing bracket of an aside opener r, 0 for other runes.
func closer(r rune) rune {
	switch r {
	case '(':
		return ')'
	case '（':
		return '）'
	case '[':
		return ']'
	case '「':
		return '」'
	}
	return 0
}

// findAsides returns the bracketed and asterisk spans of text in order,
// outermost only. A bracket opens a span that its matching closer (same kind,
// nested pairs counted) ends; a single '*' (not part of "**", which is
// emphasis) opens narration that the next single '*' ends. An opener without
// its closer opens nothing.
func findAsides(text string) []span {
	var out []span
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if cl := closer(r); cl != 0 {
			if j := closeBracket(text, i+n, r, cl); j >= 0 {
				out = append(out, span{i, j, AsideBracket})
				i = j
				continue
			}
		} else if r == '*' && singleStar(text, i) {
			if j := closeStar(text, i+1); j >= 0 {
				out = append(out, span{i, j, AsideNarration})
				i = j
				continue
			}
		}
		i += n
	}
	return out
}

// closeBracket returns the byte offset just past the closer matching an opener
// whose content starts at from; -1 when none.
func closeBracket(text string, from int, op, cl rune) int {
	depth := 1
	for k, r := range text[from:] {
		switch r {
		case op:
			depth++
		case cl:
			if depth--; depth == 0 {
				return from + k + utf8.RuneLen(r)
			}
		}
	}
	return -1
}

func singleStar(text string, i int) bool {
	return (i == 0 || text[i-1] != '*') && (i+1 >= len(text) || text[i+1] != '*')
}

func closeStar(text string, from int) int {
	for k := from; k < len(text); k++ {
		if text[k] == '*' && singleStar(text, k) {
			return k + 1
		}
	}
	return -1
}

// piece is a sentence piece of the text: bytes [start, end).
type piece struct{ start, end int }

// splitOutside splits text at sentence marks that lie outside spans.
func splitOutside(text string, spans []span) []piece {
	var out []piece
	start, k := 0, 0
	for i := 0; i < len(text); {
		if k < len(spans) && i == spans[k].start {
			i = spans[k].end
			k++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if isMark(r) {
			out = append(out, piece{start, i})
			start = i + n
		}
		i += n
	}
	return append(out, piece{start, len(text)})
}

// hasSyllable reports whether s has a Hangul syllable.
func hasSyllable(s string) bool { return strings.ContainsFunc(s, IsSyllable) }

// readAsides is Read under Rules.Asides for a text that has spans: sentences
// split outside the spans, each stripped of the spans before its first and
// after its last syllable outside spans; a piece with no syllable outside
// spans is set aside whole. ok is false when nothing would be left to read
// (the caller then reads the text with nothing set aside: a reply wrapped in
// 「」 is read as what it says).
func (p *Profile) readAsides(text string, spans []span) (rd Reading, ok bool) {
	k := 0
	for _, pc := range splitOutside(text, spans) {
		// the spans inside this piece (a span never crosses a split point)
		k0 := k
		for k < len(spans) && spans[k].start < pc.end {
			k++
		}
		in := spans[k0:k]
		from, to := pc.start, pc.end
		lo, hi := 0, len(in) // in[lo:hi] stay in the sentence
		// leading: spans with only non-syllables before them
		for lo < hi && !hasSyllable(text[from:in[lo].start]) {
			from = in[lo].end
			lo++
		}
		for hi > lo && !hasSyllable(text[in[hi-1].end:to]) {
			to = in[hi-1].start
			hi--
		}
		for _, s := range in[:lo] {
			rd.Asides = append(rd.Asides, Aside{Kind: s.kind, Text: text[s.start:s.end]})
		}
		if lo == hi && !hasSyllable(text[from:max(from, to)]) {
			// nothing but asides (and marks) in this piece
			for _, s := range in[lo:] {
				rd.Asides = append(rd.Asides, Aside{Kind: s.kind, Text: text[s.start:s.end]})
			}
			continue
		}
		s := strings.TrimSpace(text[from:to])
		p.appendSentence(&rd, s)
		for _, s := range in[hi:] {
			rd.Asides = append(rd.Asides, Aside{Kind: s.kind, Text: text[s.start:s.end]})
		}
	}
	return rd, len(rd.Sentences) > 0
}
