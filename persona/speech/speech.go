// Package speech reads the speech style of a Korean reply: it splits the reply
// into sentences, takes each sentence's last 어절 (word) and decides by a list of
// polite endings whether the sentence is 존댓말, and the reply as a whole.
//
// It owns the speech rule of spec persona.md "The rules", item 1, and the
// speech-style profiles (ending lists). It must not touch cards, logs or
// verdicts: it takes text and returns what the text says, nothing else. Input
// text is expected in NFC (the reader normalises it); no I/O happens here
// except ReadEndings, which parses an ending list the caller opened.
//
// # Rule (seed 000, automatic check 3; spec persona.md rule 1)
//
// A reply is split at '.', '?', '!', their full-width forms '．' '？' '！' and
// '…'; text after the last mark is a sentence too and empty pieces are dropped.
// From the end of each sentence every character that is not a Hangul syllable
// (U+AC00–U+D7A3) is stripped (spaces, quotes, '~', emoji, ㅋㅋ), then the last
// whitespace-separated word is the sentence's last 어절 ("드릴게요 😊" →
// "드릴게요"). A sentence without any Hangul syllable is not counted. A
// sentence is 존댓말 when its last 어절 ends with one of the profile's endings
// and not with one of its noun exceptions; the reply is 존댓말 when at least
// one counted sentence is, 반말 when none is, and has no style when no
// sentence was counted.
//
// # Decisions
//
//   - The ending list is data (spec persona.md, Decision under rule 1). An
//     ending whose first character is a Hangul compatibility consonant (for
//     example "ㅂ니까") matches when the word ends with the rest ("니까") and
//     the syllable before it has that consonant as its final (합니까, 갑니까,
//     먹습니까 — 습 itself ends in ㅂ).
//   - Profile "seed" is the seed's list 요 죠 니다 십시오 and nothing else,
//     so "-습니까" questions and nouns such as 필요 are read literally.
//   - Profile "extended" adds ㅂ니까 and 십쇼 and the noun exceptions 필요 중요
//     주요 수요 강요 요요 개요 소요 동요, which the seed's manual review step
//     (mixed-style sample) would add.
//   - The ideographic full stop '。' is not a sentence mark (the spec lists only
//     the ASCII marks, their full-width forms and '…').
package speech

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Styles a reply can have.
const (
	Banmal    = "반말"
	Jondaemal = "존댓말"
)

// Profile is a named list of polite endings and noun exceptions.
// The zero Profile has no endings: every sentence is 반말.
type Profile struct {
	// Name is "seed", "extended", or a caller's name for a custom profile.
	Name string
	// Endings are suffixes of a sentence's last 어절 that make it 존댓말.
	// See the package doc for endings that start with a compatibility consonant.
	Endings []string
	// Exceptions are nouns; a last 어절 ending in one is not 존댓말 even when
	// it also ends in an ending (필요 ends in 요).
	Exceptions []string

	compiled []ending
}

type ending struct {
	text  string // literal suffix
	coda  int    // required final (jongseong index 1..27) of the syllable before text; 0 = none
	label string // as written in the profile
}

// Seed returns the default profile of seed 000: endings 요 죠 니다 십시오.
func Seed() *Profile {
	return compile(&Profile{Name: "seed", Endings: []string{"요", "죠", "니다", "십시오"}})
}

// Extended returns profile "extended": the seed's endings plus ㅂ니까 and 십쇼,
// and the noun exceptions listed in the package doc.
func Extended() *Profile {
	return compile(&Profile{
		Name:       "extended",
		Endings:    []string{"요", "죠", "니다", "십시오", "ㅂ니까", "십쇼"},
		Exceptions: []string{"필요", "중요", "주요", "수요", "강요", "요요", "개요", "소요", "동요"},
	})
}

// ByName returns the built-in profile "seed" or "extended"; any other name is
// an error listing the two.
func ByName(name string) (*Profile, error) {
	switch name {
	case "", "seed":
		return Seed(), nil
	case "extended":
		return Extended(), nil
	}
	return nil, fmt.Errorf("unknown speech profile %q (want seed or extended)", name)
}

// With returns a copy of p with extra endings and exceptions appended (after
// the profile's own). Empty strings are ignored.
func (p *Profile) With(endings, exceptions []string) *Profile {
	q := &Profile{Name: p.Name}
	q.Endings = appendNonEmpty(append([]string(nil), p.Endings...), endings)
	q.Exceptions = appendNonEmpty(append([]string(nil), p.Exceptions...), exceptions)
	return compile(q)
}

func appendNonEmpty(dst, src []string) []string {
	for _, s := range src {
		if s != "" {
			dst = append(dst, s)
		}
	}
	return dst
}

// ReadEndings parses an ending list: one ending a line; blank lines and lines
// starting with '#' are skipped; a line starting with '!' adds a noun exception
// instead. Surrounding spaces are trimmed. Errors name the 1-based line: a line
// with inner whitespace (an ending is part of one word), invalid UTF-8, an
// ending or noun without a Hangul syllable (a last 어절 always ends in one), or
// a final consonant alone ("ㅂ" without the rest).
func ReadEndings(r io.Reader) (endings, exceptions []string, err error) {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		s, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, nil, fmt.Errorf("line %d: %w", line, rerr)
		}
		s = strings.TrimSpace(strings.TrimPrefix(s, "\uFEFF"))
		switch {
		case s == "" || strings.HasPrefix(s, "#"):
		case !utf8.ValidString(s):
			return nil, nil, fmt.Errorf("line %d: invalid UTF-8", line)
		case strings.ContainsFunc(s, unicode.IsSpace):
			return nil, nil, fmt.Errorf("line %d: ending %q contains a space; an ending is the end of one word", line, s)
		case strings.HasPrefix(s, "!"):
			x := strings.TrimSpace(s[1:])
			if !strings.ContainsFunc(x, IsSyllable) {
				return nil, nil, fmt.Errorf("line %d: noun exception %q needs a Hangul noun after '!'", line, s)
			}
			exceptions = append(exceptions, x)
		default:
			r, n := utf8.DecodeRuneInString(s)
			switch {
			case jamoFinal(r) != 0 && n == len(s):
				return nil, nil, fmt.Errorf("line %d: ending %q needs the rest of the ending after the final consonant (e.g. ㅂ니까)", line, s)
			case !strings.ContainsFunc(s, IsSyllable):
				return nil, nil, fmt.Errorf("line %d: ending %q has no Hangul syllable, so no last 어절 can end with it", line, s)
			}
			endings = append(endings, s)
		}
		if rerr == io.EOF {
			return endings, exceptions, nil
		}
	}
}

// jamoFinal maps a Hangul compatibility consonant (ㄱ U+3131 …) to its final
// (jongseong) index 1..27, 0 when it cannot be a final.
func jamoFinal(r rune) int {
	const finals = "ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"
	i := 1
	for _, f := range finals {
		if f == r {
			return i
		}
		i++
	}
	return 0
}

func compile(p *Profile) *Profile {
	p.compiled = p.compiled[:0]
	for _, e := range p.Endings {
		r, n := utf8.DecodeRuneInString(e)
		if f := jamoFinal(r); f != 0 && n < len(e) {
			p.compiled = append(p.compiled, ending{text: e[n:], coda: f, label: e})
			continue
		}
		p.compiled = append(p.compiled, ending{text: e, label: e})
	}
	return p
}

// IsSyllable reports whether r is a precomposed Hangul syllable (U+AC00–U+D7A3).
func IsSyllable(r rune) bool { return r >= 0xAC00 && r <= 0xD7A3 }

// Final returns the final consonant index (0 = none, 1..27 = ㄱ..ㅎ in Unicode
// jongseong order; 8 = ㄹ, 17 = ㅂ) of Hangul syllable r; 0 for other runes.
func Final(r rune) int {
	if !IsSyllable(r) {
		return 0
	}
	return int(r-0xAC00) % 28
}

// isMark reports whether r ends a sentence.
func isMark(r rune) bool {
	switch r {
	case '.', '?', '!', '．', '？', '！', '…':
		return true
	}
	return false
}

// Split returns the non-empty pieces of text between sentence marks, in order,
// each trimmed of surrounding white space. Text after the last mark is a piece
// too. Pieces are substrings of text (no copy).
func Split(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if isMark(r) {
			if s := strings.TrimSpace(text[start:i]); s != "" {
				out = append(out, s)
			}
			start = i + utf8.RuneLen(r)
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// LastWord returns a sentence's last 어절 by the rule: strip every trailing rune
// that is not a Hangul syllable, then take the last whitespace-separated word.
// It returns "" when the sentence has no Hangul syllable.
func LastWord(sentence string) string {
	end := len(sentence)
	for end > 0 {
		r, n := utf8.DecodeLastRuneInString(sentence[:end])
		if IsSyllable(r) {
			break
		}
		end -= n
	}
	s := sentence[:end]
	if i := strings.LastIndexFunc(s, unicode.IsSpace); i >= 0 {
		_, n := utf8.DecodeRuneInString(s[i:])
		s = s[i+n:]
	}
	return s
}

// Ending returns the profile ending (as written in the profile) that makes word
// 존댓말, or "" when word is not 존댓말: when no ending matches or when word
// ends with one of the noun exceptions. Endings are tried in profile order.
func (p *Profile) Ending(word string) string {
	if word == "" {
		return ""
	}
	for _, x := range p.Exceptions {
		if strings.HasSuffix(word, x) {
			return ""
		}
	}
	for _, e := range p.compiled {
		if !strings.HasSuffix(word, e.text) {
			continue
		}
		if e.coda == 0 {
			return e.label
		}
		before, _ := utf8.DecodeLastRuneInString(word[:len(word)-len(e.text)])
		if Final(before) == e.coda {
			return e.label
		}
	}
	return ""
}

// Sentence is one counted sentence of a reply: its text (a substring of the
// reply, trimmed), its last 어절, and the profile ending that made it 존댓말
// ("" for 반말).
type Sentence struct {
	Text     string
	LastWord string
	Ending   string
}

// Polite reports whether the sentence is 존댓말.
func (s Sentence) Polite() bool { return s.Ending != "" }

// Reading is what the speech rule reads from one reply.
type Reading struct {
	// Sentences are the counted sentences (those with a Hangul syllable) in order.
	Sentences []Sentence
	// Polite is the number of 존댓말 sentences.
	Polite int
}

// Style is Jondaemal when at least one counted sentence is 존댓말, Banmal when
// sentences were counted and none is, and "" when no sentence was counted
// (the speech check is then skipped).
func (r Reading) Style() string {
	switch {
	case len(r.Sentences) == 0:
		return ""
	case r.Polite > 0:
		return Jondaemal
	}
	return Banmal
}

// Read applies the speech rule to text with profile p.
func (p *Profile) Read(text string) Reading {
	var rd Reading
	for _, s := range Split(text) {
		w := LastWord(s)
		if w == "" {
			continue
		}
		e := p.Ending(w)
		if e != "" {
			rd.Polite++
		}
		rd.Sentences = append(rd.Sentences, Sentence{Text: s, LastWord: w, Ending: e})
	}
	return rd
}

// Count returns the number of sentences Read would count in text, without
// building the Reading. It is the value of an evidence row with agg "count"
// on a text column.
func Count(text string) int {
	n := 0
	for _, s := range Split(text) {
		if LastWord(s) != "" {
			n++
		}
	}
	return n
}
