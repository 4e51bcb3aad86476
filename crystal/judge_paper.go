package crystal

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The paper profile's answer judge: the rule order and the exact string
// handling of the reference package's AccuracyCalculator.evaluate_single
// (crystal-metrics 0.2.0, src/crystal_metrics/accuracy.py, repository
// waybarrios/crystal), re-implemented here without its code. Where Python and
// Go differ (Unicode digits, \s), see the package doc's decisions.

// pySpace is Python's \s on str, as far as a character class can say it.
const pySpace = `[\t\n\v\f\r \x1c-\x1f\x85\p{Z}]`

var (
	// extract_number drops these phrases, in this order, before reading
	// the first number.
	paperNumberPhrases = []*regexp.Regexp{
		regexp.MustCompile(`the answer is:?` + pySpace + `*`),
		regexp.MustCompile(`the result is:?` + pySpace + `*`),
		regexp.MustCompile(`answer:?` + pySpace + `*`),
		regexp.MustCompile(`result:?` + pySpace + `*`),
		regexp.MustCompile(`approximately:?` + pySpace + `*`),
		regexp.MustCompile(`about:?` + pySpace + `*`),
	}
	// paperNumber is extract_number's -?\d+\.?\d* (ASCII digits here).
	paperNumber = regexp.MustCompile(`-?[0-9]+\.?[0-9]*`)
	// paperChoicePatterns are extract_choice's patterns, tried in order on
	// the normalised text.
	paperChoicePatterns = []struct {
		re  *regexp.Regexp
		how string
		q   Quirk // the quirk when the letter runs on into a word
	}{
		{regexp.MustCompile(`^([a-z])\)`), "leading letter", ""},
		{regexp.MustCompile(`^\(([a-z])\)`), "leading letter", ""},
		{regexp.MustCompile(`^([a-z])\.`), "leading letter", ""},
		{regexp.MustCompile(`option\s+([a-z])`), "option word", QuirkOptionWordNoBoundary},
		{regexp.MustCompile(`choice\s+([a-z])`), "choice word", QuirkOptionWordNoBoundary},
		{regexp.MustCompile(`answer\s+is\s+([a-z])`), `"answer is" letter`, QuirkAnswerIsNoBoundary},
		{regexp.MustCompile(`\(([a-z])\)`), "parenthesised letter", ""},
		{regexp.MustCompile(`\b([a-z])\)`), "letter and parenthesis", ""},
	}
	// paperOptionLine is match_answer_to_option's ([A-Z])\)\s*([^\n]+),
	// searched anywhere in the question.
	paperOptionLine = regexp.MustCompile(`([A-Z])\)` + pySpace + `*([^\n]+)`)
	paperThousands  = regexp.MustCompile(`^,[0-9]{3}`)
	smartQuotes     = strings.NewReplacer("‘", "'", "’", "'", "“", `"`, "”", `"`, "`", "'")
	// paperPhraseWords are the words that start a phrase of
	// paperNumberPhrases; a text without any skips the six regexps.
	paperPhraseWords = []string{"answer", "result", "approximately", "about"}
)

// paperNormalize is the package's normalize_text: strip, lower case, ASCII
// quotes for smart ones, drop periods that have no digit on either side,
// drop , ( ) " [ ] { } ' and collapse whitespace runs to one space (not
// trimmed again, so "a )" becomes "a ").
func paperNormalize(s string) string {
	s = strings.ToLower(strings.TrimFunc(s, unicode.IsSpace))
	s = smartQuotes.Replace(s)
	rs := []rune(s)
	var b strings.Builder
	space := false
	for k, r := range rs {
		if r == '.' {
			prevDigit := k > 0 && unicode.IsDigit(rs[k-1])
			nextDigit := k+1 < len(rs) && unicode.IsDigit(rs[k+1])
			if !prevDigit && !nextDigit {
				continue
			}
		}
		if strings.ContainsRune(`,()"[]{}'`, r) {
			continue
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

// paperExtractNumber is extract_number: the first -?\d+\.?\d* after the
// answer phrases are dropped, with the literal read (for evidence) and
// whether a thousands group (",200") followed it.
func paperExtractNumber(s string) (v float64, lit string, thousands, ok bool) {
	s = strings.ToLower(strings.TrimFunc(s, unicode.IsSpace))
	for _, w := range paperPhraseWords {
		if strings.Contains(s, w) {
			for _, re := range paperNumberPhrases {
				s = re.ReplaceAllString(s, "")
			}
			break
		}
	}
	loc := paperNumber.FindStringIndex(s)
	if loc == nil {
		return 0, "", false, false
	}
	lit = s[loc[0]:loc[1]]
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(v, 0) { // Python's float() gives inf for huge literals
		return 0, "", false, false
	}
	return v, lit, paperThousands.MatchString(s[loc[1]:]), true
}

// pyReprDecimals is compare_numbers' count of decimals: Python's str(x),
// trailing "0"s then "." stripped, then the length after the ".". str(x) is
// the shortest round-trip repr, in exponent form when the exponent is below
// −4 or at least 16 ("1e-05" has no ".", so 0 decimals).
func pyReprDecimals(x float64) int {
	var s string
	switch e := strconv.FormatFloat(x, 'e', -1, 64); {
	case math.IsInf(x, 0) || math.IsNaN(x):
		return 0
	default:
		exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		if exp < -4 || exp >= 16 {
			s = e
		} else {
			s = strconv.FormatFloat(x, 'f', -1, 64)
			if !strings.Contains(s, ".") {
				s += ".0"
			}
		}
	}
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	k := strings.IndexByte(s, '.')
	if k < 0 {
		return 0
	}
	return utf8.RuneCountInString(s[k+1:])
}

// paperCompareNumbers is compare_numbers with the package's defaults
// (relative 0.1, absolute 0.05, δ 1e-10): equal; |p−g| ≤ 0.05; |p−g| ÷
// max(|g|, δ) ≤ 0.1; |p−g| < 0.01; and, for a non-zero gold and a prediction
// whose repr has ≤ 2 decimals, strictly under 15 % off (QuirkNumeric15Pct) or
// within 1e-6 of the gold rounded to that many decimals
// (QuirkNumericRoundedGold).
func paperCompareNumbers(p, g float64) (bool, Quirk, string) {
	if p == g {
		return true, "", "equal"
	}
	d := math.Abs(p - g)
	if d <= 0.05 {
		return true, "", "within 0.05"
	}
	rel := d / math.Max(math.Abs(g), 1e-10)
	if rel <= 0.1 {
		return true, "", "within 10 %"
	}
	if d < 0.01 {
		return true, "", "within 0.01"
	}
	if g != 0 {
		if dec := pyReprDecimals(p); dec <= 2 {
			if rel < 0.15 {
				return true, QuirkNumeric15Pct, fmt.Sprintf("%d decimals and under 15 %% off", dec)
			}
			if math.Abs(p-roundTo(g, dec)) < 1e-6 {
				return true, QuirkNumericRoundedGold, fmt.Sprintf("gold rounded to %d decimals is %v", dec, roundTo(g, dec))
			}
		}
	}
	return false, "", "out of tolerance"
}

var (
	paperYesWords = []string{"yes", "true", "correct", "affirmative"}
	paperNoWords  = []string{"no", "false", "incorrect", "negative"}
)

// paperYesNo is normalize_yes_no: "yes" when a yes word is a substring of
// the normalised text, else "no" for a no word, else the normalised text;
// with the word that decided.
func paperYesNo(s string) (reading, word string) {
	n := paperNormalize(s)
	for _, w := range paperYesWords {
		if strings.Contains(n, w) {
			return "yes", w
		}
	}
	for _, w := range paperNoWords {
		if strings.Contains(n, w) {
			return "no", w
		}
	}
	return n, ""
}

// paperMatchOption is match_answer_to_option: the letter of the first
// "X) text" in question whose normalised text equals the normalised answer,
// or contains it (or is contained in it) with a length ratio ≥ 0.8.
func paperMatchOption(answer, question string) (string, bool) {
	a := paperNormalize(answer)
	for _, m := range paperOptionLine.FindAllStringSubmatch(question, -1) {
		o := paperNormalize(m[2])
		if a == o {
			return m[1], true
		}
		if strings.Contains(o, a) || strings.Contains(a, o) {
			la, lo := utf8.RuneCountInString(a), utf8.RuneCountInString(o)
			if longer := max(la, lo); longer > 0 && float64(min(la, lo))/float64(longer) >= 0.8 {
				return m[1], true
			}
		}
	}
	return "", false
}

// paperExtractChoice is extract_choice: a lone letter, one of the patterns,
// else the option text; with how it was read and the quirk when the letter
// of "answer is x" / "option x" runs on into a word ("answer is blue").
func paperExtractChoice(text, question string) (letter, how string, q Quirk, ok bool) {
	n := paperNormalize(text)
	if utf8.RuneCountInString(n) <= 3 && len(n) == 1 && n[0] >= 'a' && n[0] <= 'z' {
		return strings.ToUpper(n), "bare letter", "", true
	}
	for _, p := range paperChoicePatterns {
		if loc := p.re.FindStringSubmatchIndex(n); loc != nil {
			var quirk Quirk
			if end := loc[3]; p.q != "" && end < len(n) {
				if r, _ := utf8.DecodeRuneInString(n[end:]); isPyWord(r) {
					quirk = p.q
				}
			}
			return strings.ToUpper(n[loc[2]:loc[3]]), p.how, quirk, true
		}
	}
	if question != "" {
		if l, ok := paperMatchOption(text, question); ok {
			return l, "option text", "", true
		}
	}
	return "", "", "", false
}

// isPyWord is Python's \w on str: letters, numbers and '_'.
func isPyWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

// paperQuestion is the question as the package sees it: explicit options are
// laid out as "A) …" lines after it (spec crystal.md "Data").
func (j judge) paperQuestion() string {
	if len(j.c.Options) == 0 {
		return j.c.Question
	}
	var b strings.Builder
	b.WriteString(j.c.Question)
	for _, o := range j.opts {
		fmt.Fprintf(&b, "\n%s) %s", o.Letter, o.Text)
	}
	return b.String()
}

// runPaper is evaluate_single without the LLM judge: 1 numeric, 2 yes/no,
// 3 multiple choice, 4 exact, 5 two different single words are wrong,
// 7 substring either way.
func (j judge) runPaper() Verdict {
	pred, gold := j.c.Prediction, j.c.Gold
	question := j.paperQuestion()

	pv, plit, pThousands, okP := paperExtractNumber(pred)
	gv, glit, gThousands, okG := paperExtractNumber(gold)
	if okP && okG {
		ok, q, why := paperCompareNumbers(pv, gv)
		v := Verdict{Rule: RuleNumeric, Correct: ok, Quirk: q,
			Detail: fmt.Sprintf("%s vs %s: %s", plit, glit, why)}
		if pThousands || gThousands {
			v.Detail += "; a thousands separator ends the number (the package reads the first digits: 1,200 is 1)"
			if v.Quirk == "" {
				v.Quirk = QuirkThousandsFirstDigits
			}
		}
		return v
	}

	predN, goldN := paperNormalize(pred), paperNormalize(gold)
	switch paperNormalize(goldN) {
	case "yes", "no", "true", "false":
		py, word := paperYesNo(pred)
		gy, _ := paperYesNo(gold)
		v := Verdict{Rule: RuleYesNo, Correct: py == gy}
		switch {
		case word == "":
			v.Detail = fmt.Sprintf("%q reads as neither yes nor no, gold %s", predN, gy)
		default:
			v.Detail = fmt.Sprintf("contains %q: reads as %s, gold %s", word, py, gy)
			if !containsWords(predN, word) {
				v.Quirk = QuirkYesNoSubstring
				v.Detail += " (inside a longer word)"
			}
		}
		return v
	}

	pl, how, q, okPL := paperExtractChoice(pred, question)
	gl, _, _, okGL := paperExtractChoice(gold, question)
	if okPL && okGL {
		return Verdict{Rule: RuleChoice, Correct: pl == gl, Quirk: q,
			Detail: fmt.Sprintf("prediction reads as %s (%s), gold %s", pl, how, gl)}
	}

	if predN == goldN {
		return Verdict{Correct: true, Rule: RuleExact, Detail: fmt.Sprintf("%q equals %q", predN, goldN)}
	}
	if len(strings.Fields(goldN)) == 1 && len(strings.Fields(predN)) == 1 {
		return Verdict{Rule: RuleExact, Detail: fmt.Sprintf("single words %q and %q differ", predN, goldN)}
	}
	switch {
	case predN == "":
		return Verdict{Correct: true, Rule: RuleSubstring, Quirk: QuirkEmptyAnswer, Detail: "empty answer is a substring of any gold"}
	case strings.Contains(goldN, predN):
		return Verdict{Correct: true, Rule: RuleSubstring, Quirk: QuirkSubstring, Detail: fmt.Sprintf("%q is a substring of gold %q", predN, goldN)}
	case strings.Contains(predN, goldN):
		return Verdict{Correct: true, Rule: RuleSubstring, Quirk: QuirkSubstring, Detail: fmt.Sprintf("gold %q is a substring of %q", goldN, predN)}
	}
	return Verdict{Rule: RuleExact, Detail: fmt.Sprintf("%q does not match %q", predN, goldN)}
}
