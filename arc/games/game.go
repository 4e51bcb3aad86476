package games

import (
	"fmt"
	"hash/fnv"

	"evident/arc/frame"
	"evident/arc/session"
)

// Outcome is what one action did to a level.
type Outcome int

// Outcomes of Level.Act.
const (
	// Playing: the level goes on (API state NOT_FINISHED).
	Playing Outcome = iota
	// Completed: the level is solved (levels_completed grows by one).
	Completed
	// Lost: the attempt is over (API state GAME_OVER; only RESET helps).
	Lost
)

// Level is one level being played. It is not safe for concurrent use; the
// server serialises calls.
type Level interface {
	// Frame is the 64×64 frame the player sees now.
	Frame() frame.Grid
	// FullFrame is the level's initial full frame (the whole map at the
	// start, spec arc.md load_initial_full_frame) when it is larger than
	// the view; ok is false for a level that fits the view.
	FullFrame() (g frame.Grid, ok bool)
	// Act applies one action (ACTION1..ACTION7, never RESET) and returns
	// the frames of the response in order, the last one settled (at least
	// one), and the outcome. Actions the game does not offer change
	// nothing and return the current frame.
	Act(a session.Action) ([]frame.Grid, Outcome)
}

// Game is one built-in game: its identity, rules and levels. Levels are a
// pure function of (seed, level): seed 0 gives the levels as drawn in the
// source, any other seed one of the eight symmetries of the square per level
// (chosen by a hash of game, level and seed), which keeps every optimum, so
// the baselines hold for every seed.
type Game struct {
	// ID is the game_id of the API; Title its title.
	ID, Title string
	// Rules describes the game for people (not for agents: the agent must
	// discover them).
	Rules string
	// Baselines[l-1] is the human baseline action count of level l: the
	// actions a careful first-time player needs, RESETs included (spec
	// arc.md "Scoring (RHAE)"). It is at least the level's optimum.
	Baselines []int
	// Actions are the available_actions of every response (API numbers).
	Actions []int
	// Tags are the EnvironmentInfo tags (how the game is played: "keyboard"
	// for ACTION1..4, "click" for ACTION6); the scorecard's tags_scores
	// group levels by them (arc_agi scorecard.py).
	Tags []string

	newLevel func(seed uint64, level int) Level
	solve    func(seed uint64, level int) []session.Action
}

// Levels is the number of levels (win_levels).
func (g *Game) Levels() int { return len(g.Baselines) }

// NewLevel returns level (1-based, ≤ Levels) of the game in its initial
// state for seed.
func (g *Game) NewLevel(seed uint64, level int) Level {
	if level < 1 || level > g.Levels() {
		panic(fmt.Sprintf("games: %s has no level %d", g.ID, level))
	}
	return g.newLevel(seed, level)
}

// Solution returns a shortest known action sequence that completes level
// (1-based) from its initial state for seed, for tests and demos; its
// length never exceeds the level's baseline.
func (g *Game) Solution(seed uint64, level int) []session.Action {
	if level < 1 || level > g.Levels() {
		panic(fmt.Sprintf("games: %s has no level %d", g.ID, level))
	}
	return g.solve(seed, level)
}

// All returns the built-in games in a fixed order: trek, lights, vista.
func All() []*Game { return []*Game{Trek, Lights, Vista} }

// Lookup returns the built-in game with the given game_id, or nil.
func Lookup(id string) *Game {
	for _, g := range All() {
		if g.ID == id {
			return g
		}
	}
	return nil
}

// symmetry picks the symmetry (0..7) of a level for seed: 0 (as drawn) for
// seed 0, else a hash of game, level and seed.
func symmetry(seed uint64, game string, level int) int {
	if seed == 0 {
		return 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", game, level, seed)
	return int(h.Sum64() % 8)
}

// symPoint maps cell (x, y) of a w×h map through symmetry k: bit 2
// transposes, then bit 0 mirrors left–right and bit 1 top–bottom (of the
// transposed map). It returns the new cell and the new map's size.
func symPoint(k, w, h, x, y int) (nx, ny, nw, nh int) {
	nx, ny, nw, nh = x, y, w, h
	if k&4 != 0 {
		nx, ny, nw, nh = y, x, h, w
	}
	if k&1 != 0 {
		nx = nw - 1 - nx
	}
	if k&2 != 0 {
		ny = nh - 1 - ny
	}
	return nx, ny, nw, nh
}

// transform returns the map rows (all of one length) under symmetry k.
func transform(rows []string, k int) []string {
	h, w := len(rows), len(rows[0])
	_, _, nw, nh := symPoint(k, w, h, 0, 0)
	out := make([][]byte, nh)
	for y := range out {
		out[y] = make([]byte, nw)
	}
	for y, r := range rows {
		for x := 0; x < w; x++ {
			nx, ny, _, _ := symPoint(k, w, h, x, y)
			out[ny][nx] = r[x]
		}
	}
	res := make([]string, nh)
	for y, r := range out {
		res[y] = string(r)
	}
	return res
}

// newFrame returns a w×h grid filled with colour c.
func newFrame(w, h int, c uint8) frame.Grid {
	g, err := frame.New(w, h)
	if err != nil {
		panic(err)
	}
	if c != 0 {
		fillRect(g, 0, 0, w, h, c)
	}
	return g
}

// fillRect fills the w×h rectangle at (x, y) with c, clipped to g.
func fillRect(g frame.Grid, x, y, w, h int, c uint8) {
	for yy := max(y, 0); yy < min(y+h, g.Height()); yy++ {
		row := g.Row(yy)
		for xx := max(x, 0); xx < min(x+w, g.Width()); xx++ {
			row[xx] = c
		}
	}
}

// crop returns a copy of the w×h rectangle of g at (x, y), which must lie
// inside g.
func crop(g frame.Grid, x, y, w, h int) frame.Grid {
	out := newFrame(w, h, 0)
	for yy := 0; yy < h; yy++ {
		copy(out.Row(yy), g.Row(y + yy)[x:x+w])
	}
	return out
}

// moves are the directions of ACTION1..ACTION4: up, down, left, right.
var moves = map[string][2]int{
	"ACTION1": {0, -1},
	"ACTION2": {0, 1},
	"ACTION3": {-1, 0},
	"ACTION4": {1, 0},
}

// moveActions are ACTION1..ACTION4 in order.
var moveActions = []session.Action{{Name: "ACTION1"}, {Name: "ACTION2"}, {Name: "ACTION3"}, {Name: "ACTION4"}}

// bfs finds a shortest action sequence from start to a state where done
// holds. next gives the successor of a state under an action (ok false: do
// not keep it); states are deduplicated by key. It returns nil when there is
// none.
func bfs[S any, K comparable](start S, actions []session.Action, next func(S, session.Action) (S, bool), done func(S) bool, key func(S) K) []session.Action {
	type node struct {
		prev int
		act  session.Action
		s    S
	}
	nodes := []node{{prev: -1, s: start}}
	seen := map[K]bool{key(start): true}
	for i := 0; i < len(nodes); i++ {
		for _, a := range actions {
			n, ok := next(nodes[i].s, a)
			if !ok || seen[key(n)] {
				continue
			}
			seen[key(n)] = true
			nodes = append(nodes, node{prev: i, act: a, s: n})
			if done(n) {
				var plan []session.Action
				for j := len(nodes) - 1; j > 0; j = nodes[j].prev {
					plan = append(plan, nodes[j].act)
				}
				for l, r := 0, len(plan)-1; l < r; l, r = l+1, r-1 {
					plan[l], plan[r] = plan[r], plan[l]
				}
				return plan
			}
		}
	}
	return nil
}
