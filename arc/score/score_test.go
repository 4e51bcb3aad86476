package score

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The expected values are the toolkit's own (arcprize/ARC-AGI
// tests/test_scorecard.py) or worked by hand in the comments.
func TestLevel(t *testing.T) {
	for _, c := range []struct {
		name              string
		baseline, actions int
		completed         bool
		want              float64
	}{
		{"half the baseline is capped at 115", 10, 5, true, 115},
		{"the baseline exactly scores 100", 10, 10, true, 100},
		{"8 of 10 (156.25) is capped at 115", 10, 8, true, 115},
		{"twice the baseline scores (1/2)² · 100 = 25", 10, 20, true, 25},
		{"12 of 10 scores (10/12)² · 100", 10, 12, true, 69.44444444444444},
		{"a level not completed scores 0", 10, 15, false, 0},
		{"a level completed in 0 actions scores 0", 10, 0, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Level(c.baseline, c.actions, c.completed); !near(got, c.want) {
				t.Fatalf("Level(%d, %d, %v) = %v, want %v", c.baseline, c.actions, c.completed, got, c.want)
			}
		})
	}
}

func TestCalculator(t *testing.T) {
	t.Run("levels 100, 25, 0 weigh 1, 2, 3: (100 + 50) / 6 = 25 (test_to_score_average)", func(t *testing.T) {
		var c Calculator
		c.AddLevel(1, true, 10, 10, "")
		c.AddLevel(2, true, 20, 10, "")
		c.AddLevel(3, false, 5, 10, "")
		if !near(c.Score(), 25) || c.LevelsCompleted != 2 || c.Actions != 35 {
			t.Fatalf("score %v, %d completed, %d actions", c.Score(), c.LevelsCompleted, c.Actions)
		}
	})
	t.Run("the score is capped at the weight of the scored levels: 115/6 > 100·1/6", func(t *testing.T) {
		var c Calculator
		c.AddLevel(1, true, 5, 10, "")
		c.AddLevel(2, false, 3, 10, "")
		c.AddLevel(3, false, 0, 10, "")
		if !near(c.Score(), 100.0/6) {
			t.Fatalf("score %v, want %v", c.Score(), 100.0/6)
		}
	})
	t.Run("all levels over par score 100, not 115", func(t *testing.T) {
		var c Calculator
		c.AddLevel(1, true, 1, 10, "")
		c.AddLevel(2, true, 1, 10, "")
		if !near(c.Score(), 100) {
			t.Fatalf("score %v", c.Score())
		}
	})
	t.Run("no level scores 0", func(t *testing.T) {
		var c Calculator
		if c.Score() != 0 {
			t.Fatal(c.Score())
		}
	})
}

func TestCard(t *testing.T) {
	reset := func(full bool, lc int) Update {
		return Update{GUID: "g", Action: 0, FullReset: full, State: StateNotFinished, LevelsCompleted: lc}
	}
	act := func(state string, lc int) Update {
		return Update{GUID: "g", Action: 3, State: state, LevelsCompleted: lc}
	}
	t.Run("a full RESET opens a run and is no action; a level RESET is an action and a reset", func(t *testing.T) {
		var c Card
		c.Update(reset(true, 0))
		c.Update(act(StateNotFinished, 0))
		c.Update(reset(false, 0))
		c.Update(act(StateNotFinished, 0))
		c.Update(act(StateNotFinished, 1)) // completes level 1 at action 4
		c.Update(act(StateNotFinished, 1))
		want := []Run{{GUID: "g", LevelsCompleted: 1, State: StateNotFinished, Actions: 5, Resets: 1, Marks: []Mark{{1, 4}}}}
		if !reflect.DeepEqual(c.Runs, want) {
			t.Fatalf("runs %+v", c.Runs)
		}
		// Level 1: 4 actions against 2 → (2/4)²·100 = 25; level 2: 1 action,
		// not completed; level 3: 0. Score (25·1)/6, under the cap 100/6.
		rs := ScoreRun(c.Runs[0], []int{2, 3, 4})
		if !near(rs.Score, 25.0/6) || !reflect.DeepEqual(rs.LevelActions, []int{4, 1, 0}) ||
			!reflect.DeepEqual(rs.LevelScores, []float64{25, 0, 0}) || rs.LevelsCompleted != 1 || rs.Actions != 5 || rs.Completed {
			t.Fatalf("score %+v", rs)
		}
	})
	t.Run("a run stays GAME_OVER after a level RESET until it is won", func(t *testing.T) {
		var c Card
		c.Update(reset(true, 0))
		c.Update(act(StateGameOver, 0))
		c.Update(reset(false, 0))
		if c.Runs[0].State != StateGameOver {
			t.Fatalf("state %s", c.Runs[0].State)
		}
		c.Update(act(StateWin, 1))
		if c.Runs[0].State != StateWin {
			t.Fatalf("state %s", c.Runs[0].State)
		}
	})
	t.Run("the environment takes the best run; tags take the run with the most levels", func(t *testing.T) {
		var c Card
		c.GameID = "g1"
		c.Update(reset(true, 0))
		for i := 0; i < 4; i++ {
			c.Update(act(StateNotFinished, 0))
		}
		c.Update(act(StateNotFinished, 1)) // level 1 in 5 actions, baseline 5: 100
		c.Update(reset(true, 0))           // new run, same guid
		c.Update(act(StateNotFinished, 1)) // level 1 in 1 action: 115
		e, ok := Environment(c, []int{5, 5})
		// Run 1: (100·1 + 0·2)/3 = 33.33, cap 100/3. Run 2: 115/3 = 38.33
		// capped at 33.33. Both 33.33; the first is the best for tags.
		if !ok || len(e.Runs) != 2 || !near(e.Score, 100.0/3) || e.Actions != 6 || e.LevelsCompleted != 1 || e.Best != 0 || e.LevelCount != 2 {
			t.Fatalf("environment %+v", e)
		}
		var tags Tags
		tags.Add([]string{"keyboard"}, e, []int{5, 5})
		tags.Add([]string{"keyboard"}, EnvironmentScore{ID: "g2", Best: 0, Runs: []RunScore{ScoreRun(Run{Actions: 2, Marks: []Mark{{1, 2}}, LevelsCompleted: 1}, []int{2})}}, []int{2})
		got := tags.Scores()
		// Levels 100 (w1), 0 (w2), 100 (w1): 200/4 = 50, cap 2/4·100 = 50.
		if len(got) != 1 || got[0].ID != "keyboard" || !near(got[0].Score, 50) || got[0].NumberOfLevels != 3 || got[0].NumberOfEnvironments != 2 || got[0].LevelsCompleted != 2 || got[0].Actions != 7 {
			t.Fatalf("tags %+v", got)
		}
	})
	t.Run("a card without runs is left out", func(t *testing.T) {
		if _, ok := Environment(Card{GameID: "x"}, []int{1}); ok {
			t.Fatal("ok")
		}
	})
	t.Run("more marks than baselines scores 0 with the raw levels", func(t *testing.T) {
		rs := ScoreRun(Run{Actions: 7, Marks: []Mark{{1, 3}, {2, 5}}, LevelsCompleted: 2, State: StateNotFinished}, []int{3})
		if rs.Score != 0 || rs.Message != MessageSizeMismatch || !reflect.DeepEqual(rs.LevelActions, []int{3, 2, 2}) ||
			!reflect.DeepEqual(rs.LevelBaselineActions, []int{-1, -1, -1}) {
			t.Fatalf("score %+v", rs)
		}
		if rs := ScoreRun(Run{Actions: 1}, nil); rs.Message != MessageNoBaselines {
			t.Fatalf("message %q", rs.Message)
		}
	})
	t.Run("the scorecard's score is the mean of its environments", func(t *testing.T) {
		if got := Mean([]EnvironmentScore{{Score: 10}, {Score: 40}}); got != 25 || Mean(nil) != 0 {
			t.Fatal(got)
		}
	})
}

func TestParseBaselines(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []int
		err      string
	}{
		{"a JSON list", "[18, 52, 44]\n", []int{18, 52, 44}, ""},
		{"an EnvironmentInfo object", `{"game_id":"trek-v1","baseline_actions":[1,2]}`, []int{1, 2}, ""},
		{"an object without baseline_actions", `{"game_id":"x"}`, nil, "no baseline_actions"},
		{"an empty list", `[]`, nil, "empty"},
		{"a zero count", `[3, 0]`, nil, "level 2: want an integer ≥ 1, got 0"},
		{"a float", `[1.5]`, nil, "level 1"},
		{"not JSON", `hello`, nil, "want a JSON list"},
		{"nothing", ``, nil, "empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseBaselines([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%v %v", got, err)
			}
		})
	}
}

func FuzzParseBaselines(f *testing.F) {
	for _, s := range []string{"[1,2,3]", `{"baseline_actions":[4]}`, "[]", "{", "[-1]", `{"baseline_actions":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseBaselines(b)
		if err == nil {
			if len(got) == 0 {
				t.Fatal("no error and no baseline")
			}
			for _, n := range got {
				if n < 1 {
					t.Fatalf("baseline %d accepted", n)
				}
			}
		}
	})
}
