package games

import (
	"fmt"
	"testing"

	"evident/arc/frame"
	"evident/arc/session"
)

// play runs actions on a fresh level and returns every frame and the last
// outcome, failing when the level ends before the last action.
func playLevel(t *testing.T, g *Game, seed uint64, level int, actions []session.Action) ([]frame.Grid, Outcome) {
	t.Helper()
	lv := g.NewLevel(seed, level)
	frames := []frame.Grid{lv.Frame()}
	out := Playing
	for i, a := range actions {
		if out != Playing {
			t.Fatalf("%s level %d: action %d (%s) after the level ended", g.ID, level, i+1, a)
		}
		var fs []frame.Grid
		fs, out = lv.Act(a)
		if len(fs) == 0 {
			t.Fatalf("%s level %d: action %d answered no frame", g.ID, level, i+1)
		}
		for _, f := range fs {
			if f.Width() != frame.GameSide || f.Height() != frame.GameSide || !f.InPalette() {
				t.Fatalf("%s level %d: action %d: frame %dx%d in palette %v", g.ID, level, i+1, f.Width(), f.Height(), f.InPalette())
			}
		}
		frames = append(frames, fs...)
	}
	return frames, out
}

func TestLevels(t *testing.T) {
	t.Run("every game has three levels, a baseline per level and available actions", func(t *testing.T) {
		for _, g := range All() {
			if g.Levels() < 3 || len(g.Actions) == 0 || Lookup(g.ID) != g {
				t.Errorf("%s: %d levels, actions %v", g.ID, g.Levels(), g.Actions)
			}
		}
		if Lookup("nope") != nil {
			t.Error("Lookup of an unknown id")
		}
	})
	t.Run("every level is solved by its solution within the human baseline, for many seeds", func(t *testing.T) {
		for _, g := range All() {
			for seed := uint64(0); seed < 16; seed++ {
				for l := 1; l <= g.Levels(); l++ {
					plan := g.Solution(seed, l)
					if _, out := playLevel(t, g, seed, l, plan); out != Completed || len(plan) == 0 {
						t.Fatalf("%s seed %d level %d: outcome %d after %d actions", g.ID, seed, l, out, len(plan))
					}
					if len(plan) > g.Baselines[l-1] {
						t.Errorf("%s seed %d level %d: optimum %d above baseline %d", g.ID, seed, l, len(plan), g.Baselines[l-1])
					}
				}
			}
		}
	})
	t.Run("the optimum does not depend on the seed", func(t *testing.T) {
		for _, g := range All() {
			for l := 1; l <= g.Levels(); l++ {
				want := len(g.Solution(0, l))
				for seed := uint64(1); seed < 16; seed++ {
					if n := len(g.Solution(seed, l)); n != want {
						t.Errorf("%s level %d: seed %d optimum %d, seed 0 %d", g.ID, l, seed, n, want)
					}
				}
			}
		}
	})
	t.Run("NewLevel and Solution panic on a level that does not exist", func(t *testing.T) {
		for _, f := range []func(){func() { Trek.NewLevel(0, 0) }, func() { Trek.Solution(0, 4) }} {
			func() {
				defer func() {
					if recover() == nil {
						t.Error("no panic")
					}
				}()
				f()
			}()
		}
	})
}

func TestDeterminism(t *testing.T) {
	t.Run("the same seed gives the same frames for the same actions", func(t *testing.T) {
		for _, g := range All() {
			for l := 1; l <= g.Levels(); l++ {
				script := append(append([]session.Action{}, moveActions...), g.Solution(3, l)...)
				if g == Lights {
					script = g.Solution(3, l)
				}
				a := g.NewLevel(3, l)
				b := g.NewLevel(3, l)
				for i, act := range script {
					fa, oa := a.Act(act)
					fb, ob := b.Act(act)
					if oa != ob || len(fa) != len(fb) {
						t.Fatalf("%s level %d action %d: outcomes %d %d, %d and %d frames", g.ID, l, i+1, oa, ob, len(fa), len(fb))
					}
					for j := range fa {
						if !frame.Equal(fa[j], fb[j]) {
							t.Fatalf("%s level %d action %d frame %d differs", g.ID, l, i+1, j)
						}
					}
					if oa != Playing {
						break
					}
				}
			}
		}
	})
	t.Run("seed 0 is the drawing and other seeds change some level", func(t *testing.T) {
		for _, g := range All() {
			differs := false
			for seed := uint64(1); seed < 8 && !differs; seed++ {
				for l := 1; l <= g.Levels(); l++ {
					if symmetry(seed, g.ID, l) != 0 && !frame.Equal(g.NewLevel(0, l).Frame(), g.NewLevel(seed, l).Frame()) {
						differs = true
					}
				}
			}
			if !differs {
				t.Errorf("%s: seeds 1..7 all give the drawn levels", g.ID)
			}
			for l := 1; l <= g.Levels(); l++ {
				if symmetry(0, g.ID, l) != 0 {
					t.Errorf("%s level %d: seed 0 is not the drawing", g.ID, l)
				}
			}
		}
	})
	t.Run("the eight symmetries are distinct and keep the map's cells", func(t *testing.T) {
		rows := []string{"abc", "def"}
		seen := map[string]bool{}
		for k := 0; k < 8; k++ {
			out := transform(rows, k)
			key := fmt.Sprint(out)
			if seen[key] {
				t.Errorf("symmetry %d repeats %v", k, out)
			}
			seen[key] = true
		}
		if fmt.Sprint(transform(rows, 0)) != fmt.Sprint(rows) || fmt.Sprint(transform(rows, 4)) != "[ad be cf]" {
			t.Errorf("identity %v, transpose %v", transform(rows, 0), transform(rows, 4))
		}
	})
}

func TestTrek(t *testing.T) {
	t.Run("every move costs one from the bar, and an empty bar is GAME_OVER", func(t *testing.T) {
		lv := Trek.NewLevel(0, 1)
		start := lv.Frame().Clone()
		bar := func(f frame.Grid) int {
			n := 0
			for x := 0; x < frame.GameSide; x++ {
				if f.At(x, trekBarY) == trekBar {
					n++
				}
			}
			return n
		}
		if bar(start) != trekMaps[0].budget {
			t.Fatalf("bar %d, budget %d", bar(start), trekMaps[0].budget)
		}
		for i := 1; i < trekMaps[0].budget; i++ {
			fs, out := lv.Act(session.Action{Name: "ACTION3"}) // into the wall after one step
			if out != Playing || bar(fs[0]) != trekMaps[0].budget-i {
				t.Fatalf("move %d: outcome %d, bar %d", i, out, bar(fs[0]))
			}
		}
		if _, out := lv.Act(session.Action{Name: "ACTION3"}); out != Lost {
			t.Fatalf("last move: outcome %d, want Lost", out)
		}
	})
	t.Run("level 3 cannot be done without fuel", func(t *testing.T) {
		if n := len(Trek.Solution(0, 3)); n <= trekMaps[2].budget {
			t.Errorf("optimum %d fits the budget %d without fuel", n, trekMaps[2].budget)
		}
	})
	t.Run("actions the game does not offer change nothing", func(t *testing.T) {
		lv := Trek.NewLevel(0, 1)
		before := lv.Frame()
		fs, out := lv.Act(session.Action{Name: "ACTION5"})
		if out != Playing || !frame.Equal(fs[0], before) {
			t.Error("ACTION5 changed the level")
		}
	})
}

func TestLights(t *testing.T) {
	t.Run("no level starts solved", func(t *testing.T) {
		for l := 1; l <= Lights.Levels(); l++ {
			lv := newLights(0, l)
			if lv.board.equal(lv.target) {
				t.Errorf("level %d starts solved", l)
			}
		}
	})
	t.Run("clicks on gaps, outside the board and on blocked cells change nothing", func(t *testing.T) {
		lv := newLights(0, 3)
		before := lv.Frame()
		blocked := 0
		for i, v := range lv.board {
			if v < 0 {
				blocked = i
			}
		}
		for _, p := range [][2]int{{lv.ox + 7, lightsOY}, {0, 0}, {63, 63}, {lv.ox - 1, lightsOY + 3},
			{lv.ox + (blocked%lv.n)*lightsStride + 3, lightsOY + (blocked/lv.n)*lightsStride + 3}} {
			fs, out := lv.Act(session.Action{Name: "ACTION6", X: p[0], Y: p[1]})
			if out != Playing || !frame.Equal(fs[0], before) {
				t.Errorf("click %v changed the board", p)
			}
		}
	})
	t.Run("a click flips the cell and its neighbours, twice restores", func(t *testing.T) {
		lv := newLights(0, 2)
		before := lv.Frame()
		c := session.Action{Name: "ACTION6", X: lv.ox + lightsStride + 3, Y: lightsOY + lightsStride + 3}
		fs, _ := lv.Act(c)
		if n := frame.CountMismatches(before, fs[0]); n != 5*lightsCell*lightsCell {
			t.Errorf("one click changed %d cells, want 5 lamps", n)
		}
		fs, _ = lv.Act(c)
		if !frame.Equal(before, fs[0]) {
			t.Error("two clicks did not restore the board")
		}
	})
}

func TestVista(t *testing.T) {
	t.Run("every level is larger than the view and has a full frame with the player at the start", func(t *testing.T) {
		for l := 1; l <= Vista.Levels(); l++ {
			lv := newVista(0, l)
			g, ok := lv.FullFrame()
			if !ok || (g.Width() <= frame.GameSide && g.Height() <= frame.GameSide) {
				t.Fatalf("level %d: full frame %v %dx%d", l, ok, g.Width(), g.Height())
			}
			lv.Act(moveActions[1])
			lv.Act(moveActions[3])
			g2, _ := lv.FullFrame()
			if !frame.Equal(g, g2) {
				t.Errorf("level %d: the full frame follows the player", l)
			}
		}
	})
	t.Run("a slide answers one frame per tile and the camera follows", func(t *testing.T) {
		lv := newVista(0, 3)
		for _, a := range Vista.Solution(0, 3) {
			x, y := lv.px, lv.py
			fs, _ := lv.Act(a)
			if n := abs(lv.px-x) + abs(lv.py-y); n != len(fs) {
				t.Fatalf("%s moved %d tiles in %d frames", a, n, len(fs))
			}
		}
	})
	t.Run("the trek and lights levels fit the view", func(t *testing.T) {
		for _, g := range []*Game{Trek, Lights} {
			if _, ok := g.NewLevel(0, 1).FullFrame(); ok {
				t.Errorf("%s has a full frame", g.ID)
			}
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
