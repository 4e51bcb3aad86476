package cardfile

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"evident/internal/clip"
	"evident/persona/speech"
)

// proseFields are the card's prose about the character, read for what it
// says about the character's speech (package doc, "Prefill").
var proseFields = []string{"description", "personality"}

// proseTexts returns data.description and data.personality, NFC, empty
// ones left out.
func proseTexts(data map[string]any) []voiceText {
	var out []voiceText
	for _, k := range proseFields {
		if s, _ := data[k].(string); strings.TrimSpace(s) != "" {
			out = append(out, voiceText{"data." + k, nfc(s)})
		}
	}
	return out
}

// quoteRE matches speech quoted in prose: "…", “…”, 「…」 and 『…』 on one
// line (single quotes mark terms and names more often than speech).
var quoteRE = regexp.MustCompile(`"([^"\n]+)"|“([^”\n]+)”|「([^」\n]+)」|『([^』\n]+)』`)

// proseQuotes returns the quoted speech of the prose texts that has a
// Hangul syllable, as voice texts "data.description quote 1", ….
func proseQuotes(prose []voiceText) []voiceText {
	var out []voiceText
	for _, p := range prose {
		n := 0
		for _, m := range quoteRE.FindAllStringSubmatch(p.text, -1) {
			q := strings.TrimSpace(m[1] + m[2] + m[3] + m[4])
			if !strings.ContainsFunc(q, speech.IsSyllable) {
				continue
			}
			n++
			out = append(out, voiceText{fmt.Sprintf("%s quote %d", p.src, n), q})
		}
	}
	return out
}

// sentenceRE cuts prose into sentences: at line breaks and after . ! ? 。.
var sentenceRE = regexp.MustCompile(`[\n.!?。]+`)

// Words that name a speech style in a sentence of the prose.
var (
	politeWords = []string{"존댓말", "존대", "높임말", "경어", "jondaemal"}
	plainWords  = []string{"반말", "하대", "banmal"}
	// negationWords make a sentence say what the character does not do
	// ("반말을 쓰지 않는다", "반말 금지"): such a sentence is not read.
	negationWords = []string{"않", "안 ", "못 ", "말고", "대신", "없", "금지", "never", "not ", "n't"}
	// firstPersonMarkers introduce the character's first-person word
	// ("1인칭: 저"); callingMarkers introduce what it calls itself, which
	// counts only quoted or before a quotative particle ("자신을 소인이라고
	// 부른다", not "자신을 사랑한다").
	firstPersonMarkers = []string{"1인칭", "일인칭", "first person", "first-person"}
	callingMarkers     = []string{"자기 자신을", "자신을", "스스로를", "자기를"}
	quotatives         = []string{"이라고", "라고", "이라", "라"}
)

// containsAny reports whether s contains one of words (ASCII case folded).
func containsAny(s string, words []string) bool {
	ls := strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(ls, w) {
			return true
		}
	}
	return false
}

// declaredStyle returns the style the prose states ("존댓말을 쓴다",
// "말투: 반말"): every sentence that names exactly one of the two styles and
// no negation counts; when all such sentences name the same style it is
// the guess, else nothing is guessed from the prose.
func declaredStyle(prose []voiceText) (string, Guess) {
	n := map[string]int{}
	g := Guess{Field: colHonorificRule}
	var first string
	for _, p := range prose {
		hit := false
		for _, sent := range sentenceRE.Split(p.text, -1) {
			polite, plain := containsAny(sent, politeWords), containsAny(sent, plainWords)
			if polite == plain || containsAny(sent, negationWords) {
				continue
			}
			style := speech.Banmal
			if polite {
				style = speech.Jondaemal
			}
			n[style]++
			hit = true
			if first == "" {
				first = strings.TrimSpace(sent)
			}
		}
		if hit {
			g.Texts = append(g.Texts, p.src)
		}
	}
	if n[speech.Jondaemal] == 0 && n[speech.Banmal] == 0 || n[speech.Jondaemal] > 0 && n[speech.Banmal] > 0 {
		return "", g
	}
	style := speech.Banmal
	if n[speech.Jondaemal] > 0 {
		style = speech.Jondaemal
	}
	g.From = []Count{{style, n[style]}}
	g.Note = fmt.Sprintf("guessed %s: the card's prose says so (%q)", style, cut(first, 60))
	return style, g
}

// declaredFirstPerson returns the first-person word the prose states
// ("1인칭: 저", "1인칭은 '소인'", "자신을 본좌라고 부른다", "first person: 나"):
// the word after "1인칭", "일인칭" or "first person", in quotes or up to the
// next space with a trailing particle (이라고, 라고, 이라, 라, 으로, 로,
// 이다, 다, 을, 를) cut; or after "자신을", "스스로를", "자기를" in quotes
// or before a quotative (이라고, 라고, 이라, 라). The word has 1 to 4 Hangul
// syllables; 제가/내가 and the other counted forms map to 저/나; a sentence
// with a negation (see negationWords) is not read. When all such
// statements agree the word is the guess.
func declaredFirstPerson(prose []voiceText) (string, Guess) {
	g := Guess{Field: colFirstPerson}
	n := map[string]int{}
	var order []string
	var first string
	for _, p := range prose {
		hit := false
		for _, sent := range sentenceRE.Split(p.text, -1) {
			w := firstPersonAfterMarker(sent)
			if w == "" {
				continue
			}
			if n[w] == 0 {
				order = append(order, w)
			}
			n[w]++
			hit = true
			if first == "" {
				first = strings.TrimSpace(sent)
			}
		}
		if hit {
			g.Texts = append(g.Texts, p.src)
		}
	}
	if len(order) != 1 {
		return "", g
	}
	w := order[0]
	g.From = []Count{{w, n[w]}}
	g.Note = fmt.Sprintf("guessed %s: the card's prose says so (%q)", w, cut(first, 60))
	return w, g
}

// Quote pairs around a declared first-person word.
var quotePairs = map[rune]rune{'\'': '\'', '"': '"', '‘': '’', '“': '”', '「': '」', '『': '』', '(': ')', '[': ']'}

// particles are cut from the end of an unquoted first-person word, longest first.
var particles = []string{"이라고", "라고", "이라", "으로", "이다", "라", "로", "다", "을", "를"}

// firstPersonAfterMarker returns the first-person word a sentence declares,
// or "".
func firstPersonAfterMarker(sent string) string {
	ls := strings.ToLower(sent)
	if containsAny(sent, negationWords) {
		return ""
	}
	at, calling := -1, false
	for i, ms := range [][]string{firstPersonMarkers, callingMarkers} {
		for _, m := range ms {
			if j := strings.Index(ls, m); j >= 0 {
				at, calling = j+len(m), i == 1
				break
			}
		}
		if at >= 0 {
			break
		}
	}
	if at < 0 {
		return ""
	}
	// ToLower keeps the byte length of Hangul and ASCII; cut sent there
	// when it did.
	if len(ls) != len(sent) {
		return ""
	}
	rest := strings.TrimLeft(sent[at:], " \t:：-=–—")
	for _, topic := range []string{"은 ", "는 ", "은:", "는:", "으로 ", "로 ", "is ", "as "} {
		if strings.HasPrefix(rest, topic) {
			rest = strings.TrimLeft(rest[len(topic):], " \t:：-=–—")
			break
		}
	}
	var w string
	r, size := utf8.DecodeRuneInString(rest)
	if closer, ok := quotePairs[r]; ok {
		end := strings.IndexRune(rest[size:], closer)
		if end < 0 {
			return ""
		}
		w = strings.TrimSpace(rest[size : size+end])
	} else {
		w, _, _ = strings.Cut(rest, " ")
		w = strings.TrimRightFunc(w, func(r rune) bool { return !speech.IsSyllable(r) })
		cutFrom := particles
		if calling {
			cutFrom = quotatives
		}
		found := false
		for _, p := range cutFrom {
			if strings.HasSuffix(w, p) && utf8.RuneCountInString(w) > utf8.RuneCountInString(p) {
				w, found = strings.TrimSuffix(w, p), true
				break
			}
		}
		if calling && !found {
			return ""
		}
	}
	if c := utf8.RuneCountInString(w); c < 1 || c > 4 || strings.ContainsFunc(w, func(r rune) bool { return !speech.IsSyllable(r) && r != ' ' }) {
		return ""
	}
	if fp, ok := firstPersonForms[w]; ok {
		return fp
	}
	return w
}

// cut returns s cut to at most n runes between two grapheme clusters
// (internal/clip), with "…" when cut.
func cut(s string, n int) string {
	if c := clip.Runes(s, n); c < len(s) {
		return s[:c] + "…"
	}
	return s
}
