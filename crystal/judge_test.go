package crystal

import (
	"errors"
	"testing"
)

const colourQ = "Which colour is the cube?\nA) red\nB) blue\nC) green"

func TestJudge(t *testing.T) {
	type tc struct {
		name     string
		pred     string
		gold     string
		question string
		options  []string
		correct  bool
		rule     Rule
		quirk    Quirk
	}
	seed := []tc{
		// rule 1: numeric
		{"equal numbers with units are correct", "12 cm", "12", "", nil, true, RuleNumeric, ""},
		{"an answer phrase before the number is ignored", "The answer is 42 apples.", "42", "", nil, true, RuleNumeric, ""},
		{"thousands commas are read", "1,234", "1234", "", nil, true, RuleNumeric, ""},
		{"an absolute difference of exactly 0.05 is correct", "0.25", "0.2", "", nil, true, RuleNumeric, ""},
		{"an absolute difference of 0.06 and 30 % is wrong", "0.26", "0.2", "", nil, false, RuleNumeric, ""},
		{"1.05 against 1 is correct despite binary rounding", "1.05", "1", "", nil, true, RuleNumeric, ""},
		{"exactly 10 % off is correct", "110", "100", "", nil, true, RuleNumeric, ""},
		{"just over 10 % off is wrong", "110.01", "100", "", nil, false, RuleNumeric, ""},
		{"a gold of zero allows only the absolute tolerance", "0.06", "0", "", nil, false, RuleNumeric, ""},
		{"a sign flip is wrong", "-5", "5", "", nil, false, RuleNumeric, ""},
		{"a hyphen after a word is not a minus sign", "COVID-19", "19", "", nil, true, RuleNumeric, ""},
		{"seed gives no 15 % grace to integers", "114", "100", "", nil, false, RuleNumeric, ""},
		{"seed does not round the gold", "1", "1.4", "", nil, false, RuleNumeric, ""},
		// rule 2: yes/no
		{"yes as the first word matches yes", "Yes, the cube is red.", "yes", "", nil, true, RuleYesNo, ""},
		{"true reads as yes", "True", "Yes", "", nil, true, RuleYesNo, ""},
		{"no as the first word against yes is wrong", "No.", "yes", "", nil, false, RuleYesNo, ""},
		{"false gold is read as no", "no", "False", "", nil, true, RuleYesNo, ""},
		{"incorrect is not a yes word under seed", "incorrect", "no", "", nil, false, RuleExact, ""},
		{"yes later in the sentence is found as whole words", "I think yes", "yes", "", nil, true, RuleContains, ""},
		// rule 3: multiple choice
		{"a bare letter matches", "B", "B", colourQ, nil, true, RuleChoice, ""},
		{"a parenthesised lower-case letter matches", "(c)", "C", colourQ, nil, true, RuleChoice, ""},
		{"a wrong letter is wrong", "A", "B", colourQ, nil, false, RuleChoice, ""},
		{"option text is matched to its A) line", "Blue.", "B", colourQ, nil, true, RuleChoice, ""},
		{"option text after an answer phrase is matched", "The answer is blue", "B", colourQ, nil, true, RuleChoice, ""},
		{"a gold given as option text matches a letter", "A", "red", colourQ, nil, true, RuleChoice, ""},
		{"a leading letter counts when the question has options", "B) blue", "B", colourQ, nil, true, RuleChoice, ""},
		{"option b with word boundaries counts", "I pick option b here", "B", colourQ, nil, true, RuleChoice, ""},
		{"the answer is C counts", "So the answer is C.", "C", colourQ, nil, true, RuleChoice, ""},
		{"the answer is a cat is not option A", "the answer is a cat", "A", "", nil, false, RuleExact, ""},
		{"explicit options take precedence over the question", "green", "A", colourQ, []string{"A) green", "B) red"}, true, RuleChoice, ""},
		{"without options the answer is blue is not B", "The answer is blue", "B", "", nil, false, RuleExact, ""},
		{"a leading article is not a letter without options", "A cat", "A", "", nil, false, RuleExact, ""},
		{"a single-letter gold is never found inside prose", "a bright color", "C", "", nil, false, RuleExact, ""},
		// rule 4: exact and whole-word containment
		{"case, punctuation and a leading article are ignored", "The Eiffel Tower.", "eiffel tower", "", nil, true, RuleExact, ""},
		{"the gold as whole words inside the prediction is correct", "turn left", "left", "", nil, true, RuleContains, ""},
		{"a raw substring is not enough", "leftover", "left", "", nil, false, RuleExact, ""},
		{"an empty answer is wrong", "", "B", colourQ, nil, false, RuleEmpty, ""},
		{"an answer phrase alone is empty", "The answer is:", "B", colourQ, nil, false, RuleEmpty, ""},
	}
	paper := []tc{
		{"paper: 14 % off passes for an integer prediction", "114", "100", "", nil, true, RuleNumeric, QuirkNumeric15Pct},
		{"paper: 14 % off fails with three decimals", "114.125", "100", "", nil, false, RuleNumeric, ""},
		{"paper: 1 equals the gold 1.4 rounded", "1", "1.4", "", nil, true, RuleNumeric, QuirkNumericRoundedGold},
		{"paper: rounding halves go to even (2.5 → 2)", "2", "2.5", "", nil, true, RuleNumeric, QuirkNumericRoundedGold},
		{"paper: 3 is not 2.5 rounded to even", "3", "2.5", "", nil, false, RuleNumeric, ""},
		{"paper: 10 % off passes without a quirk", "110", "100", "", nil, true, RuleNumeric, ""},
		{"paper: incorrect counts as yes", "incorrect", "yes", "", nil, true, RuleYesNo, QuirkYesNoSubstring},
		{"paper: incorrect against no is wrong", "Incorrect", "no", "", nil, false, RuleYesNo, QuirkYesNoSubstring},
		{"paper: a plain yes has no quirk", "yes", "yes", "", nil, true, RuleYesNo, ""},
		{"paper: the answer is blue reads as option B", "The answer is blue", "B", "", nil, true, RuleChoice, QuirkAnswerIsNoBoundary},
		{"paper: the answer is blue is B even when blue is option A", "The answer is blue", "A", "A) blue\nB) red", nil, false, RuleChoice, QuirkAnswerIsNoBoundary},
		{"paper: option text is matched", "green", "C", colourQ, nil, true, RuleChoice, ""},
		{"paper: gold C is found in a bright color", "a bright color", "C", "", nil, true, RuleSubstring, QuirkSubstring},
		{"paper: an empty answer matches anything", "", "B", colourQ, nil, true, RuleSubstring, QuirkEmptyAnswer},
		{"paper: turn left contains left as a substring", "turn left", "left", "", nil, true, RuleSubstring, QuirkSubstring},
		{"paper: a plain mismatch is wrong", "dog", "cat", "", nil, false, RuleExact, ""},
	}
	run := func(p Profile, cases []tc) {
		for _, tt := range cases {
			t.Run(tt.name, func(t *testing.T) {
				v, err := Judge(AnswerCase{Prediction: tt.pred, Gold: tt.gold, Question: tt.question, Options: tt.options}, p)
				if err != nil {
					t.Fatal(err)
				}
				if v.Correct != tt.correct || v.Rule != tt.rule || v.Quirk != tt.quirk || v.Profile != p {
					t.Errorf("Judge(%q, gold %q) = correct %v rule %q quirk %q profile %q (%s); want %v %q %q",
						tt.pred, tt.gold, v.Correct, v.Rule, v.Quirk, v.Profile, v.Detail, tt.correct, tt.rule, tt.quirk)
				}
			})
		}
	}
	run(ProfileSeed, seed)
	run(ProfilePaper, paper)
}

func TestJudgeRefusesAnUnknownProfile(t *testing.T) {
	if _, err := Judge(AnswerCase{Prediction: "a", Gold: "a"}, "lenient"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("err = %v, want ErrUnknownProfile", err)
	}
}

func TestParseOptions(t *testing.T) {
	got := ParseOptions("Pick one.\nA) red\n (B) dark blue \nC) green\nA) again\nnot an option")
	want := []Option{{"A", "red"}, {"B", "dark blue"}, {"C", "green"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("option %d = %v, want %v", k, got[k], want[k])
		}
	}
}

func FuzzJudge(f *testing.F) {
	f.Add("The answer is blue", "B", colourQ)
	f.Add("1,234.5 cm", "-1234", "")
	f.Add("incorrect", "yes", "")
	f.Add("", "", "(A) x\nB) y")
	f.Fuzz(func(t *testing.T, pred, gold, question string) {
		for _, p := range []Profile{ProfileSeed, ProfilePaper} {
			v, err := Judge(AnswerCase{Prediction: pred, Gold: gold, Question: question}, p)
			if err != nil || v.Rule == "" || v.Profile != p {
				t.Fatalf("Judge(%q, %q) under %s = %+v, %v", pred, gold, p, v, err)
			}
			if p == ProfileSeed && v.Quirk != "" {
				t.Fatalf("seed verdict carries quirk %q", v.Quirk)
			}
		}
	})
}
