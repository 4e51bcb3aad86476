package crystal

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"evident/crystal/embedder"
)

// Rule names the judge rule that decided a verdict (evidence; spec crystal.md
// "Answer correctness").
type Rule string

const (
	// RuleMissing: no prediction for the item (Evaluate); always wrong.
	RuleMissing Rule = "missing"
	// RuleEmpty: seed profile, the answer is empty after dropping phrases
	// such as "the answer is"; always wrong.
	RuleEmpty Rule = "empty"
	// RuleNumeric: rule 1, both answers contain a number.
	RuleNumeric Rule = "numeric"
	// RuleYesNo: rule 2, the gold is yes/no/true/false and the prediction
	// reads as yes or no.
	RuleYesNo Rule = "yes/no"
	// RuleChoice: rule 3, both gold and prediction read as an option letter.
	RuleChoice Rule = "multiple-choice"
	// RuleExact: rule 4, equality after normalisation; also the verdict
	// "wrong" when no rule matched.
	RuleExact Rule = "exact"
	// RuleContains: seed profile, the gold's words appear as a contiguous run
	// of whole words in the prediction ("turn left" contains "left").
	RuleContains Rule = "contains"
	// RuleSubstring: paper profile, last-resort raw substring test in either
	// direction (QuirkSubstring / QuirkEmptyAnswer).
	RuleSubstring Rule = "substring"
)

// Quirk names a behaviour of the reference package that the `paper` profile
// reproduces although the paper does not state it (spec crystal.md "Decision
// — quirks of the reference package"). A Verdict carries the quirk that decided
// it, whether it made the answer correct or (yes/no, "answer is") wrong.
type Quirk string

const (
	// QuirkNumeric15Pct: a prediction written with ≤ 2 decimals passes up to
	// 15 % off the gold.
	QuirkNumeric15Pct Quirk = "numeric-15pct"
	// QuirkNumericRoundedGold: a prediction with d ≤ 2 decimals passes when it
	// equals the gold rounded to d decimals ("1" for 1.4).
	QuirkNumericRoundedGold Quirk = "numeric-rounded-gold"
	// QuirkThousandsFirstDigits: a number is read up to its first thousands
	// separator ("1,200" is 1), as the package's -?\d+\.?\d* does; named on a
	// numeric verdict when either side had a separator and no other quirk
	// decided.
	QuirkThousandsFirstDigits Quirk = "numeric-thousands-first-digits"
	// QuirkOptionWordNoBoundary: the letter after "option" / "choice" is
	// taken without a word boundary ("choice of red" reads as option O).
	QuirkOptionWordNoBoundary Quirk = "option-word-without-word-boundary"
	// QuirkYesNoSubstring: yes/no read from a substring inside a longer word
	// ("incorrect" contains "correct" and counts as yes).
	QuirkYesNoSubstring Quirk = "yes/no-substring"
	// QuirkAnswerIsNoBoundary: the letter after "answer is" is taken without a
	// word boundary ("The answer is blue" reads as option B).
	QuirkAnswerIsNoBoundary Quirk = "answer-is-without-word-boundary"
	// QuirkSubstring: gold found as a raw substring of the prediction or the
	// prediction of the gold (gold "C" in "a bright color").
	QuirkSubstring Quirk = "substring"
	// QuirkEmptyAnswer: an empty prediction is a substring of any gold and so
	// matches anything.
	QuirkEmptyAnswer Quirk = "empty-answer-matches"
	// QuirkNoTokenSteps: two steps without word tokens have lexical
	// similarity 1.0 (embedder.Lexical.EmptyStepsMatch; named here for reports).
	QuirkNoTokenSteps Quirk = "no-token-steps-match"
	// QuirkEmptyReferenceDropped: an item with no reference steps is left out
	// of the step means but still counts for accuracy (Evaluate).
	QuirkEmptyReferenceDropped Quirk = "empty-reference-dropped"
)

// AnswerCase is one answer to judge.
type AnswerCase struct {
	// Prediction is the model's answer text, Gold the dataset's answer.
	Prediction string `json:"prediction"`
	Gold       string `json:"gold"`
	// Question is the question text; its option lines ("A) …" or "(A) …",
	// one per line) are read by ParseOptions.
	Question string `json:"question,omitempty"`
	// Options, when non-empty, are the item's options in letter order (A, B,
	// …) and take precedence over the question's lines; a leading "A) " on an
	// option is ignored.
	Options []string `json:"options,omitempty"`
}

// Verdict is the judge's decision with its evidence.
type Verdict struct {
	Profile Profile `json:"profile"`
	Correct bool    `json:"correct"`
	Rule    Rule    `json:"rule"`
	Quirk   Quirk   `json:"quirk,omitempty"`
	// Detail is a short human-readable reason, e.g. "12.5 vs 12: off by 4.17 %".
	Detail string `json:"detail"`
}

// Option is one lettered option of a multiple-choice question.
type Option struct {
	Letter string `json:"letter"` // "A" … "Z"
	Text   string `json:"text"`
}

var optionLine = regexp.MustCompile(`(?m)^[ \t]*(?:\(([A-Z])\)|([A-Z])\))[ \t]*(.*?)[ \t\r]*$`)

// ParseOptions reads the options laid out as "A) text" or "(A) text" lines in
// a question (spec crystal.md "Data"). Letters are upper-case A–Z; the first
// line per letter wins. Nil when there are none.
func ParseOptions(question string) []Option {
	var out []Option
	seen := map[string]bool{}
	for _, m := range optionLine.FindAllStringSubmatch(question, -1) {
		l := m[1] + m[2]
		if seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, Option{Letter: l, Text: m[3]})
	}
	return out
}

func (c AnswerCase) options() []Option {
	if len(c.Options) == 0 {
		return ParseOptions(c.Question)
	}
	out := make([]Option, 0, len(c.Options))
	for k, t := range c.Options {
		if k >= 26 {
			break
		}
		l := string(rune('A' + k))
		t = strings.TrimSpace(t)
		for _, p := range []string{l + ")", "(" + l + ")"} {
			if strings.HasPrefix(t, p) {
				t = strings.TrimSpace(t[len(p):])
				break
			}
		}
		out = append(out, Option{Letter: l, Text: t})
	}
	return out
}

// Judge decides whether c.Prediction answers c.Gold, trying the paper's rules
// in order — 1 numeric, 2 yes/no, 3 multiple choice, 4 exact — and reporting
// the rule that decided. A rule decides only when it can read both sides
// (e.g. numeric needs a number in each); otherwise the next rule is tried.
//
// ProfileSeed (clean rules, spec crystal.md "Decision — quirks"):
//   - an answer empty after dropping "the answer is"-like phrases is wrong;
//   - numeric: first number of each side, correct iff |p−g| ≤ 0.05 or
//     |p−g| ≤ 10 % of |g| (Eq. 2; units ignored; edges inclusive up to a
//     1e-9 relative slack for decimal→binary error);
//   - yes/no: the first whole word of the prediction (yes/true, no/false);
//   - multiple choice: a bare letter ("B", "(b)", "B."), a leading "B …"
//     when the question has lettered options, "option/choice B" or
//     "answer is B" with word boundaries (after "answer is" the letter must be
//     upper-case or parenthesised), or the option text itself;
//   - exact match after normalisation (lower case, punctuation and symbols
//     removed, a leading article dropped, spaces collapsed);
//   - contains: the gold's words as a whole-word run inside the prediction
//     (not for one-character golds, e.g. letters); never a raw substring.
//
// ProfilePaper is the reference package's AccuracyCalculator.evaluate_single
// (crystal-metrics 0.2.0 accuracy.py, without its optional LLM judge): 1
// numeric on the first -?\d+\.?\d* of each side ("1,200" is 1), with its
// compare_numbers tolerances (≤ 0.05, ≤ 10 %, and for ≤ 2 decimals strictly
// under 15 % or the rounded gold); 2 yes/no by substrings whenever the gold
// is yes/no; 3 multiple choice by extract_choice; 4 exact on its
// normalize_text; two different single words wrong; then a substring test
// either way, which an empty answer always passes. Each behaviour the paper
// does not state is named by a Quirk in the verdict (package doc,
// "Decisions").
//
// Errors: only ErrUnknownProfile.
func Judge(c AnswerCase, p Profile) (Verdict, error) {
	p, err := p.resolve()
	if err != nil {
		return Verdict{}, err
	}
	return judgeOptions(c, p, c.options()), nil
}

// judgeOptions is Judge of c under a resolved profile, with c's options
// already read (c.options(): the same for every model's answer to an item).
func judgeOptions(c AnswerCase, p Profile, opts []Option) Verdict {
	v := judge{c: c, p: p, opts: opts}.run()
	v.Profile = p
	return v
}

type judge struct {
	c    AnswerCase
	p    Profile
	opts []Option
}

func (j judge) seed() bool { return j.p == ProfileSeed }

func (j judge) run() Verdict {
	if !j.seed() {
		return j.runPaper()
	}
	pred, gold := j.c.Prediction, j.c.Gold
	predClean := dropAnswerPhrases(pred)
	if normSeed(predClean) == "" {
		return Verdict{Rule: RuleEmpty, Detail: "empty answer"}
	}
	if v, ok := j.numeric(predClean, dropAnswerPhrases(gold)); ok {
		return v
	}
	if v, ok := j.yesNo(predClean, gold); ok {
		return v
	}
	if v, ok := j.choice(pred, gold); ok {
		return v
	}
	pn, gn := normSeed(predClean), normSeed(gold)
	if pn == gn {
		return Verdict{Correct: true, Rule: RuleExact, Detail: fmt.Sprintf("%q equals %q", pn, gn)}
	}
	if containsWords(pn, gn) {
		return Verdict{Correct: true, Rule: RuleContains, Detail: fmt.Sprintf("%q contains the words %q", pn, gn)}
	}
	return Verdict{Rule: RuleExact, Detail: fmt.Sprintf("%q does not match %q", pn, gn)}
}

// --- rule 1: numeric -------------------------------------------------------

var numberRe = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)`)

// firstNumber returns the first number in s, its count of decimals and
// whether there was one. Thousands commas ("1,234") are read; a sign directly
// after a letter or digit ("COVID-19", "3-4") is not a sign.
func firstNumber(s string) (v float64, decimals int, ok bool) {
	loc := numberRe.FindStringIndex(s)
	if loc == nil {
		return 0, 0, false
	}
	lit := s[loc[0]:loc[1]]
	if (lit[0] == '-' || lit[0] == '+') && loc[0] > 0 {
		if r := lastRune(s[:loc[0]]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			lit = lit[1:]
		}
	}
	lit = strings.ReplaceAll(lit, ",", "")
	if k := strings.IndexByte(lit, '.'); k >= 0 {
		decimals = len(lit) - k - 1
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, 0, false
	}
	return v, decimals, true
}

func lastRune(s string) rune {
	rs := []rune(s)
	return rs[len(rs)-1]
}

// leq is a ≤ b with a relative slack of 1e-9 for decimal→binary error.
func leq(a, b float64) bool { return a <= b+1e-9*math.Max(1, math.Abs(b)) }

func (j judge) numeric(pred, gold string) (Verdict, bool) {
	g, _, okG := firstNumber(gold)
	pv, _, okP := firstNumber(pred)
	if !okG || !okP {
		return Verdict{}, false
	}
	diff := math.Abs(pv - g)
	rel := "gold is 0"
	if g != 0 {
		rel = fmt.Sprintf("%.4g %% of gold", 100*diff/math.Abs(g))
	}
	detail := fmt.Sprintf("%v vs %v: off by %.4g (%s)", pv, g, diff, rel)
	v := Verdict{Rule: RuleNumeric, Detail: detail}
	v.Correct = leq(diff, 0.05) || (g != 0 && leq(diff, 0.10*math.Abs(g)))
	return v, true
}

// roundTo rounds x to d decimals, halves to even on the exact binary value,
// as Python's round(x, d).
func roundTo(x float64, d int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', d, 64), 64)
	if err != nil {
		return math.NaN()
	}
	return r
}

// --- rule 2: yes/no --------------------------------------------------------

func yesNoValue(word string) (yes, ok bool) {
	switch word {
	case "yes", "true":
		return true, true
	case "no", "false":
		return false, true
	}
	return false, false
}

func (j judge) yesNo(predClean, gold string) (Verdict, bool) {
	gy, ok := yesNoValue(normSeed(gold))
	if !ok {
		return Verdict{}, false
	}
	v := Verdict{Rule: RuleYesNo}
	toks := embedder.Tokens(predClean)
	if len(toks) == 0 {
		return Verdict{}, false
	}
	py, ok := yesNoValue(toks[0])
	if !ok {
		return Verdict{}, false
	}
	v.Detail = fmt.Sprintf("first word %q", toks[0])
	v.Correct = py == gy
	v.Detail += fmt.Sprintf(" reads as %s, gold %s", yesNoWord(py), yesNoWord(gy))
	return v, true
}

func yesNoWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// --- rule 3: multiple choice -----------------------------------------------

var (
	bareLetter = regexp.MustCompile(`^\(?([A-Za-z])\)?[.:]?$`)
	// seed: leading upper-case letter then ')', '.', ':' or space.
	leadLetter = regexp.MustCompile(`^\(?([A-Z])(?:[).:]|\s)`)
	// seed: "option b", "choice (B)" with word boundaries, any case.
	seedOptionWord = regexp.MustCompile(`(?i)\b(?:option|choice)(?:\s+\(?|\s*\()([a-z])\)?(?:\W|$)`)
	// seed: "answer is B", "answer: (b)": upper-case or parenthesised letter.
	seedAnswerIs = regexp.MustCompile(`(?i:\banswer\s*(?:is|:)\s*:?\s*)(?:\(([A-Za-z])\)|([A-Z]))(?:\W|$)`)
)

// goldLetter reads the gold as an option letter: a bare letter, or the text of
// one of the options.
func (j judge) goldLetter(gold string) (string, bool) {
	if m := bareLetter.FindStringSubmatch(strings.TrimSpace(gold)); m != nil {
		return strings.ToUpper(m[1]), true
	}
	return j.optionByText(gold)
}

func (j judge) optionByText(s string) (string, bool) {
	n := normSeed(s)
	if n == "" {
		return "", false
	}
	for _, o := range j.opts {
		if normSeed(o.Text) == n {
			return o.Letter, true
		}
	}
	return "", false
}

func (j judge) hasOption(l string) bool {
	for _, o := range j.opts {
		if o.Letter == l {
			return true
		}
	}
	return false
}

// predLetter reads the prediction as an option letter, reporting how.
func (j judge) predLetter(pred string) (letter, how string, q Quirk, ok bool) {
	t := strings.TrimSpace(pred)
	if m := bareLetter.FindStringSubmatch(t); m != nil {
		return strings.ToUpper(m[1]), "bare letter", "", true
	}
	if l, ok := j.optionByText(dropAnswerPhrases(t)); ok {
		return l, "option text", "", true
	}
	if m := seedOptionWord.FindStringSubmatch(t); m != nil {
		return strings.ToUpper(m[1]), "option/choice word", "", true
	}
	if m := seedAnswerIs.FindStringSubmatch(t); m != nil {
		return strings.ToUpper(m[1] + m[2]), `"answer is" letter`, "", true
	}
	if m := leadLetter.FindStringSubmatch(t); m != nil && j.hasOption(m[1]) {
		return m[1], "leading letter", "", true
	}
	return "", "", "", false
}

func (j judge) choice(pred, gold string) (Verdict, bool) {
	gl, ok := j.goldLetter(gold)
	if !ok {
		return Verdict{}, false
	}
	pl, how, q, ok := j.predLetter(pred)
	if !ok {
		return Verdict{}, false
	}
	v := Verdict{Rule: RuleChoice, Correct: pl == gl, Quirk: q,
		Detail: fmt.Sprintf("prediction reads as %s (%s), gold %s", pl, how, gl)}
	return v, true
}

// --- normalisation ---------------------------------------------------------

var seedAnswerPhrase = regexp.MustCompile(`(?i)\b(?:the\s+)?(?:final\s+)?answer\s*(?:is\b|:)\s*:?`)

// dropAnswerPhrases removes "the answer is", "final answer:" and the like
// (seed profile).
func dropAnswerPhrases(s string) string {
	return strings.TrimSpace(seedAnswerPhrase.ReplaceAllString(s, " "))
}

// normSeed lower-cases, deletes punctuation and symbols, collapses spaces and
// drops one leading article (a, an, the).
func normSeed(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
	f := strings.Fields(s)
	if len(f) > 1 && (f[0] == "a" || f[0] == "an" || f[0] == "the") {
		f = f[1:]
	}
	return strings.Join(f, " ")
}

// containsWords reports whether the space-separated words of sub occur as a
// contiguous run in s. One-character subs (letters, digits) never match.
func containsWords(s, sub string) bool {
	if len([]rune(sub)) < 2 {
		return false
	}
	return strings.Contains(" "+s+" ", " "+sub+" ")
}
