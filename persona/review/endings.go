package review

import (
	"slices"
	"strings"
	"unicode/utf8"

	"evident/persona/speech"
)

// politeTails are the tails a proposed ending must end in (PoliteShape).
// The seed's four endings 요 죠 니다 십시오 (seed 000, automatic check 3);
// the tails of the endings profile "extended" adds — 니까 (ㅂ니까), 십쇼, 시다
// (ㅂ시다), 디다 (ㅂ디다); and the 하오체 endings 오 and 소 (하시오, 있소), which
// are polite but in no built-in profile.
var politeTails = []string{"요", "죠", "니다", "십시오", "니까", "십쇼", "시다", "디다", "오", "소"}

// PoliteTails returns the tails of polite shape (a fresh copy): 요 죠 니다
// 십시오 니까 십쇼 시다 디다 오 소. See PoliteShape.
func PoliteTails() []string { return slices.Clone(politeTails) }

// PoliteShape reports whether ending e, written in the profile's ending
// syntax (a leading compatibility consonant such as the ㅂ of ㅂ니까 is a
// final on the syllable before; package speech), ends in one of
// PoliteTails. Only such endings are proposed by the endings queue: a
// fragment of a 반말 word (름이 of 이름이, 어 of 싫어) is never one, so it
// cannot be added by a click and flip dozens of real 반말 replies.
func PoliteShape(e string) bool {
	if r, n := utf8.DecodeRuneInString(e); r >= 'ㄱ' && r <= 'ㅎ' {
		e = e[n:]
	}
	if !strings.ContainsFunc(e, speech.IsSyllable) {
		return false
	}
	for _, t := range politeTails {
		if strings.HasSuffix(e, t) {
			return true
		}
	}
	return false
}

// plainEndings are 반말 endings that PlainFinal's vowel rule does not
// cover: 해체/해라체 finals ending in a vowel other than the -아/-어 ones or in
// a final consonant (했지, 할게, 했네, 없는데, 했니, 밝고 · 없다고, 할걸,
// 하는군, 있거든, 하렴).
var plainEndings = []string{"지", "게", "네", "데", "니", "고", "걸", "군", "든", "렴"}

// plainWords are one-word 반말 answers that end in a final consonant.
var plainWords = []string{"응"}

// infinitiveVowels are the medial (jungseong) indexes of the vowels the
// 해체 infinitive -아/-어 leaves on a syllable without a final, contracted or
// not (가 와 봐 해 돼 써 줘 뭐 려 져 — and 야 of 이야, 다 and 라 of 해라체, 자,
// 나, 냐, 대, 래, 마): ㅏ ㅐ ㅑ ㅓ ㅕ ㅘ ㅙ ㅝ.
var infinitiveVowels = [21]bool{0: true, 1: true, 2: true, 4: true, 6: true, 9: true, 10: true, 14: true}

// PlainFinal reports whether word w (a last 어절) ends in a known 반말
// final, so that a reply read 반말 because of it is believable without a
// look: its last syllable has no final consonant and one of the vowels
// ㅏ ㅐ ㅑ ㅓ ㅕ ㅘ ㅙ ㅝ (the infinitive -아/-어 of 해체 and its contractions,
// 이야, 해라체 -다 and -라), or it ends in one of 지 게 네 데 니 고 걸 군 든 렴, or
// it is 응. A word ending in 니까 is never a known final: a reason clause
// (험하니까), an insistence (나비라니까) and the polite question -ㅂ니까 the
// seed's four endings misread (확인하셨습니까) end alike, so a person reads
// it. Nouns (낮잠, 마을, 영감) and a noun exception (필요) are not known
// finals either. The rule is this package's (spec persona.md "Evaluation
// runner and manual review" is silent on which 반말 replies to show).
func PlainFinal(w string) bool {
	if w == "" || strings.HasSuffix(w, "니까") {
		return false
	}
	if slices.Contains(plainWords, w) {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(w)
	if speech.IsSyllable(r) && speech.Final(r) == 0 && infinitiveVowels[(r-0xAC00)/28%21] {
		return true
	}
	for _, e := range plainEndings {
		if strings.HasSuffix(w, e) {
			return true
		}
	}
	return false
}

// finalJamo are the Hangul compatibility consonants by final (jongseong)
// index 1..27, as speech.Final numbers them.
const finalJamo = "ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"

// forms are the ending forms a last 어절 w gives (Candidate): for its last
// two syllables and then its last syllable, the tail with the final of the
// syllable before it in front (when it has one), then the tail itself.
// "준비되셨습니까" gives ㅂ니까, 니까, 까. Runes that are not Hangul syllables
// end the word (a tail is syllables only).
func forms(w string) []string {
	var out []string
	for k := 2; k >= 1; k-- {
		start := len(w)
		ok := true
		for range k {
			r, n := utf8.DecodeLastRuneInString(w[:start])
			if !speech.IsSyllable(r) {
				ok = false
				break
			}
			start -= n
		}
		if !ok {
			continue
		}
		tail := w[start:]
		if before, _ := utf8.DecodeLastRuneInString(w[:start]); speech.IsSyllable(before) {
			if f := speech.Final(before); f > 0 {
				out = append(out, string([]rune(finalJamo)[f-1])+tail)
			}
		}
		out = append(out, tail)
	}
	return out
}

// SeenKey is the store.Decision key (queue ending) that marks the
// unknown-final reply of turnID seen (value EndingSeen): "turn:" and the
// turn_id. An ending key never starts so (an ending has no ':').
func SeenKey(turnID string) string { return seenPrefix + turnID }

const seenPrefix = "turn:"

// SeenTurn returns the turn_id of a SeenKey and true, or "" and false for
// any other key (an ending).
func SeenTurn(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, seenPrefix)
	return id, ok && id != ""
}
