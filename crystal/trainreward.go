package crystal

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"evident/crystal/embedder"
)

// TrainWeights are the weights of the reference package's training reward
// (crystal-metrics 0.2.0 rewards.causal_process_reward defaults: answer 0.6,
// step 0.4, and the fixed 0.3 for a wrong answer).
var TrainWeights = RewardWeights{Answer: 0.6, Step: 0.4, Lambda: 0.3}

// TrainThreshold is the word-overlap threshold of the package's training
// reward step F1 (rewards._step_alignment_f1: 0.3, compared with >).
const TrainThreshold = 0.3

// TrainScore is the reference package's training reward for one reply
// (spec crystal.md "CPR": "the reference package's reward instead uses a
// word-overlap step F1"), reported beside CPR: Correct from the package's own
// answer check (PackageAnswerMatch, not the judge), StepF1 from word overlap
// (embedder.Lexical with the no-token quirk, > 0.3, greedy 1:1), Reward =
// 0.6 + 0.4·StepF1 when correct, else 0.4·StepF1·0.3; all in [0, 1].
type TrainScore struct {
	Correct bool    `json:"correct"`
	StepF1  float64 `json:"step_f1"`
	Reward  float64 `json:"reward"`
}

// TrainReward computes the package's training reward
// (rewards._lightweight_causal_reward) of predicted steps and answer against
// the reference steps and gold answer. Reference steps are trimmed and empty
// ones dropped, as causal_process_reward does; predicted steps are used as
// given. Either list empty gives a step F1 of 0.
func TrainReward(steps []string, answer string, ref []string, gold string) TrainScore {
	var refs []string
	for _, r := range ref {
		if t := strings.TrimFunc(r, unicode.IsSpace); t != "" {
			refs = append(refs, t)
		}
	}
	return trainScore(steps, answer, refs, gold, nil)
}

// trainLexical is the training reward's word overlap (the no-token quirk on).
var trainLexical = embedder.Lexical{EmptyStepsMatch: true}

// trainScore is TrainReward on reference steps already trimmed (refs), with
// their tokens prepared by trainLexical.Prepare(refs) when prep is not nil.
func trainScore(steps []string, answer string, refs []string, gold string, prep embedder.PreparedRef) TrainScore {
	s := TrainScore{Correct: PackageAnswerMatch(answer, gold)}
	if len(steps) > 0 && len(refs) > 0 {
		var m [][]float64
		if prep != nil {
			m, _ = prep.Similarities(context.Background(), steps)
		} else {
			m, _ = trainLexical.Similarities(context.Background(), steps, refs)
		}
		if res, err := MatchMatrix(m, len(steps), len(refs), MatchConfig{Profile: ProfilePaper, Threshold: TrainThreshold}); err == nil {
			s.StepF1 = res.F1
		}
	}
	s.Reward = CPR(s.Correct, s.StepF1, TrainWeights)
	return s
}

var (
	trainNumber = regexp.MustCompile(`[-+]?[0-9]*\.?[0-9]+`)
	trainYes    = map[string]bool{"yes": true, "true": true, "correct": true, "1": true}
	trainNo     = map[string]bool{"no": true, "false": true, "incorrect": true, "0": true}
)

// PackageAnswerMatch is the reference package's training-time answer check
// (rewards.check_answer_match), which differs from its evaluation judge: an
// empty side is wrong; equal after trim and lower case; both starting with a
// letter a–d followed by a word boundary compare that letter; both yes/no
// words (yes/true/correct/1, no/false/incorrect/0) compare the reading; both
// with a number compare the first numbers (under 1 % of a gold above 1 in
// magnitude, else under 0.01 apart); a gold longer than 10 characters
// matches as a substring either way; otherwise wrong.
func PackageAnswerMatch(pred, gold string) bool {
	if pred == "" || gold == "" {
		return false
	}
	p := strings.ToLower(strings.TrimFunc(pred, unicode.IsSpace))
	g := strings.ToLower(strings.TrimFunc(gold, unicode.IsSpace))
	if p == g {
		return true
	}
	if pl, ok := leadingAD(p); ok {
		if gl, ok := leadingAD(g); ok {
			return pl == gl
		}
	}
	if (trainYes[p] || trainNo[p]) && (trainYes[g] || trainNo[g]) {
		return trainYes[p] == trainYes[g]
	}
	pn, gn := trainNumber.FindString(p), trainNumber.FindString(g)
	if pn != "" && gn != "" {
		pv, err1 := strconv.ParseFloat(pn, 64)
		gv, err2 := strconv.ParseFloat(gn, 64)
		if (err1 == nil || math.IsInf(pv, 0)) && (err2 == nil || math.IsInf(gv, 0)) {
			if math.Abs(gv) > 1 {
				return math.Abs(pv-gv)/math.Abs(gv) < 0.01
			}
			return math.Abs(pv-gv) < 0.01
		}
	}
	if utf8.RuneCountInString(g) > 10 {
		return strings.Contains(p, g) || strings.Contains(g, p)
	}
	return false
}

// leadingAD is ^([a-d])\b on lower-cased text (Python's Unicode \b).
func leadingAD(s string) (byte, bool) {
	if s == "" || s[0] < 'a' || s[0] > 'd' {
		return 0, false
	}
	if len(s) > 1 {
		if r, _ := utf8.DecodeRuneInString(s[1:]); isPyWord(r) {
			return 0, false
		}
	}
	return s[0], true
}
