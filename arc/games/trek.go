package games

import (
	"evident/arc/frame"
	"evident/arc/session"
)

// Trek is the movement game with a move budget.
//
// The board is 15×15 tiles of 4×4 cells at (2, 4); outside it, and on walls,
// the colour is 4. Floor is 0, the goal 14, the player a 9 tile, fuel a 2×2
// dot of 11 in the middle of a floor tile. The budget is the bar of colour
// 12 at rows 1–2 from column 2, one cell per move left (clipped at 60).
// ACTION1..4 move the player one tile up, down, left, right; walls and the
// board's edge block. Every move costs one from the budget, blocked or not.
// Reaching the goal completes the level; stepping on fuel collects it
// (+10); a budget of 0 off the goal is GAME_OVER. Completing a level
// answers two frames: the player on the goal, then the next level.
var Trek = &Game{
	ID:    trekID,
	Title: "Trek",
	Rules: "Walk to the green exit before the orange move bar runs out; yellow fuel dots refill it by 10. " +
		"ACTION1-4 move one tile; every move costs one, blocked or not; an empty bar is GAME_OVER.",
	Baselines: []int{18, 52, 44},
	Tags:      []string{"keyboard"},
	Actions:   []int{1, 2, 3, 4},
	newLevel:  func(seed uint64, level int) Level { return newTrek(seed, level) },
	solve:     solveTrek,
}

// Trek geometry and colours (see Trek).
const (
	trekID = "trek-v1"

	trekOX, trekOY = 2, 4
	trekTile       = 4
	trekSide       = 15
	trekBarX       = 2
	trekBarY       = 1
	trekBarMax     = 60
	trekGain       = 10

	trekFloor  = 0
	trekWall   = 4
	trekPlayer = 9
	trekGoal   = 14
	trekFuel   = 11
	trekBar    = 12
)

// trekMap is one level as drawn: '#' wall, '.' floor, 'S' start, 'G' goal,
// 'F' fuel; budget is the starting move budget.
type trekMap struct {
	rows   []string
	budget int
}

var trekMaps = []trekMap{
	{budget: 24, rows: []string{
		"###############",
		"#.............#",
		"#.............#",
		"#.....#.......#",
		"#.....#.......#",
		"#.S...#...G...#",
		"#.....#.......#",
		"#.....#.......#",
		"#.............#",
		"#.............#",
		"#.............#",
		"#.............#",
		"#.............#",
		"#.............#",
		"###############",
	}},
	{budget: 44, rows: []string{
		"###############",
		"#S....#.......#",
		"#.###.#.#####.#",
		"#.#...#.#...#.#",
		"#.#.###.#.#.#.#",
		"#.#.....#.#...#",
		"#.#######.###.#",
		"#.......#...#.#",
		"#######.###.#.#",
		"#.....#...#.#.#",
		"#.###.###.#.#.#",
		"#...#.....#...#",
		"###.#######.###",
		"#.........#..G#",
		"###############",
	}},
	{budget: 26, rows: []string{
		"###############",
		"#S.....#......#",
		"#.####.#.####.#",
		"#.#F.#...#..#.#",
		"#.#..#####..#.#",
		"#.#.........#.#",
		"#.#####.#####.#",
		"#.....#.#.....#",
		"#####.#.#.#####",
		"#F....#.#....F#",
		"#.#####.#####.#",
		"#.............#",
		"#.###########.#",
		"#............G#",
		"###############",
	}},
}

// trekStatic is the unchanging part of a level.
type trekStatic struct {
	wall   [trekSide][trekSide]bool
	goal   [2]int
	fuelAt map[[2]int]int // tile → fuel index
	bg     frame.Grid     // the frame without bar, fuel and player
}

// trekState is the changing part: player tile, budget, fuel collected (bit
// i: fuel i is gone).
type trekState struct {
	x, y, budget int
	taken        uint32
}

type trekLevel struct {
	st *trekStatic
	s  trekState
}

func trekSetup(seed uint64, level int) (*trekStatic, trekState) {
	m := trekMaps[level-1]
	rows := transform(m.rows, symmetry(seed, trekID, level))
	st := &trekStatic{fuelAt: map[[2]int]int{}, bg: newFrame(frame.GameSide, frame.GameSide, trekWall)}
	s := trekState{budget: m.budget}
	for y, r := range rows {
		for x := 0; x < trekSide; x++ {
			c := uint8(trekFloor)
			switch r[x] {
			case '#':
				st.wall[y][x] = true
				c = trekWall
			case 'S':
				s.x, s.y = x, y
			case 'G':
				st.goal = [2]int{x, y}
				c = trekGoal
			case 'F':
				st.fuelAt[[2]int{x, y}] = len(st.fuelAt)
			}
			fillRect(st.bg, trekOX+x*trekTile, trekOY+y*trekTile, trekTile, trekTile, c)
		}
	}
	return st, s
}

func newTrek(seed uint64, level int) *trekLevel {
	st, s := trekSetup(seed, level)
	return &trekLevel{st: st, s: s}
}

// step is the rule of one move.
func (st *trekStatic) step(s trekState, a session.Action) (trekState, Outcome) {
	d, ok := moves[a.Name]
	if !ok {
		return s, Playing
	}
	s.budget--
	nx, ny := s.x+d[0], s.y+d[1]
	if nx >= 0 && ny >= 0 && nx < trekSide && ny < trekSide && !st.wall[ny][nx] {
		s.x, s.y = nx, ny
	}
	if [2]int{s.x, s.y} == st.goal {
		return s, Completed
	}
	if i, ok := st.fuelAt[[2]int{s.x, s.y}]; ok && s.taken&(1<<i) == 0 {
		s.taken |= 1 << i
		s.budget += trekGain
	}
	if s.budget <= 0 {
		return s, Lost
	}
	return s, Playing
}

func (st *trekStatic) render(s trekState) frame.Grid {
	g := st.bg.Clone()
	fillRect(g, trekBarX, trekBarY, min(max(s.budget, 0), trekBarMax), 2, trekBar)
	for t, i := range st.fuelAt {
		if s.taken&(1<<i) == 0 {
			fillRect(g, trekOX+t[0]*trekTile+1, trekOY+t[1]*trekTile+1, 2, 2, trekFuel)
		}
	}
	fillRect(g, trekOX+s.x*trekTile, trekOY+s.y*trekTile, trekTile, trekTile, trekPlayer)
	return g
}

func (l *trekLevel) Frame() frame.Grid { return l.st.render(l.s) }

func (l *trekLevel) FullFrame() (frame.Grid, bool) { return frame.Grid{}, false }

func (l *trekLevel) Act(a session.Action) ([]frame.Grid, Outcome) {
	var out Outcome
	l.s, out = l.st.step(l.s, a)
	return []frame.Grid{l.Frame()}, out
}

// solveTrek searches (tile, fuel taken) breadth-first: the first visit of
// such a pair has the fewest moves and so the largest budget (no cap), so
// later visits are dominated.
func solveTrek(seed uint64, level int) []session.Action {
	st, s := trekSetup(seed, level)
	type node struct {
		s    trekState
		done bool
	}
	type key struct {
		x, y  int
		taken uint32
	}
	return bfs(node{s: s}, moveActions,
		func(n node, a session.Action) (node, bool) {
			s, out := st.step(n.s, a)
			return node{s, out == Completed}, out != Lost
		},
		func(n node) bool { return n.done },
		func(n node) key { return key{n.s.x, n.s.y, n.s.taken} })
}
