package persona

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"evident/persona/speech"
)

// Particle forms chosen by the last sound of the word before them
// (spec persona.md "Evidence, summary, hedge": 하늘이 / 리안이 / 아카데미가).
type particle struct{ afterConsonant, afterVowel, afterRieul string }

var (
	iGa     = particle{"이", "가", "이"}
	eulReul = particle{"을", "를", "을"}
	gwaWa   = particle{"과", "와", "과"}
	euro    = particle{"으로", "로", "로"} // ㄹ takes 로: 서울로
)

// coda reports how a Korean reader would end word aloud: with a final
// consonant (batchim) and whether that final is ㄹ. Hangul syllables are read
// directly; digits as Sino-Korean numbers (1 일, 3 삼, 6 육, 7 칠, 8 팔, 0 영);
// Latin letters by their English names (L 엘, M 엠, N 엔, R 알). Trailing
// characters that are none of these (quotes, brackets) are skipped; a word
// with nothing readable counts as ending in a vowel.
func coda(word string) (batchim, rieul bool) {
	for word != "" {
		r, n := utf8.DecodeLastRuneInString(word)
		word = word[:len(word)-n]
		switch {
		case speech.IsSyllable(r):
			f := speech.Final(r)
			return f != 0, f == 8
		case r >= '0' && r <= '9':
			switch r {
			case '1', '7', '8':
				return true, true
			case '0', '3', '6':
				return true, false
			}
			return false, false
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			switch r | 0x20 {
			case 'l', 'r':
				return true, true
			case 'm', 'n':
				return true, false
			}
			return false, false
		}
	}
	return false, false
}

// after returns the form of p that follows word.
func (p particle) after(word string) string {
	b, l := coda(word)
	switch {
	case l:
		return p.afterRieul
	case b:
		return p.afterConsonant
	}
	return p.afterVowel
}

// with appends the right form of p to word.
func (p particle) with(word string) string { return word + p.after(word) }

// quote wraps s in 「」 as the seed's summaries quote words. A word that
// brings corner brackets of its own (the last word of a reply wrapped in
// 「」, 「좋아요」 or 「좋아요) loses the ones at its edges, and all of them
// when they do not pair up, so the summary never holds 「「좋아요」 — a
// bracket left open would hide the rest of the sentence from check 10
// (issue 14 item 3). Evidence rows keep the verbatim text.
func quote(s string) string { return "「" + bare(s) + "」" }

// bare is s as quote puts it between its brackets.
func bare(s string) string {
	t := strings.TrimSuffix(strings.TrimPrefix(s, "「"), "」")
	if strings.Count(t, "「") != strings.Count(t, "」") || strings.Index(t, "」") < strings.Index(t, "「") {
		t = strings.NewReplacer("「", "", "」", "").Replace(t)
	}
	if t == "" {
		return s
	}
	return t
}

// quoteWith quotes s and adds particle p chosen by the last sound of what
// is quoted.
func quoteWith(s string, p particle) string { return quote(s) + p.after(bare(s)) }

// countSentences returns "n 문장" in the native Korean counting the seed uses ("두
// 문장"); from 11 on it writes the digits ("11개 문장").
func countSentences(n int) string {
	if n >= 1 && n <= 10 {
		return nativeSentences[n] // spelt out once: no allocation per summary (issue 18)
	}
	return strconv.Itoa(n) + "개 문장"
}

var nativeSentences = [...]string{"", "한 문장", "두 문장", "세 문장", "네 문장", "다섯 문장", "여섯 문장",
	"일곱 문장", "여덟 문장", "아홉 문장", "열 문장"}

// quoteList quotes names and joins them the way the seed does: 「리안」과
// 「아카데미」 for two, 「A」·「B」·「C」 for more; the particle p follows the
// last name.
func quoteList(names []string, p particle) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return quoteWith(names[0], p)
	case 2:
		return quoteWith(names[0], gwaWa) + " " + quoteWith(names[1], p)
	}
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString("·")
		}
		if i == len(names)-1 {
			b.WriteString(quoteWith(n, p))
		} else {
			b.WriteString(quote(n))
		}
	}
	return b.String()
}
