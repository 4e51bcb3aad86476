package games

import (
	"evident/arc/frame"
	"evident/arc/session"
)

// Vista is the sliding game with a scrolling camera and animated responses.
//
// The world is W×H tiles of 4×4 cells, larger than the 16×16-tile view:
// walls 3, ice 10, sand 11, holes 5, the goal 14 and the player, a tile of
// 12. The view is the 64×64 window at tile (cx, cy), cx = clamp(px − 8, 0,
// W − 16) and likewise cy, so the camera follows the player and stops at
// the world's edges. ACTION1..4 slide the player up, down, left, right
// until a wall is next (the player stops in front of it), it enters sand
// (it stops there), the goal (level completed) or a hole (GAME_OVER). A
// response holds one frame per tile moved, the camera following (one
// unchanged frame when the player cannot move); completing a level adds the
// next level's first frame. The initial full frame of a level is the whole
// world with the player at the start.
var Vista = &Game{
	ID:    vistaID,
	Title: "Vista",
	Rules: "Slide the orange block over the ice to the green exit; it stops before walls and on sand, " +
		"and falls into black holes (GAME_OVER). The map is larger than the screen and scrolls.",
	Baselines: []int{9, 11, 15},
	Tags:      []string{"keyboard"},
	Actions:   []int{1, 2, 3, 4},
	newLevel:  func(seed uint64, level int) Level { return newVista(seed, level) },
	solve:     solveVista,
}

// Vista geometry and colours (see Vista).
const (
	vistaID = "vista-v1"

	vistaTile = 4
	vistaView = frame.GameSide / vistaTile // tiles per view side

	vistaWall   = 3
	vistaIce    = 10
	vistaSand   = 11
	vistaHole   = 5
	vistaGoal   = 14
	vistaPlayer = 12
)

// vistaMaps are the levels as drawn: '#' wall, '.' ice, ':' sand, 'O' hole,
// 'G' goal, 'S' start (on ice). Every map is at least 16 tiles each way and
// larger than 16 in one direction at least.
var vistaMaps = [][]string{
	{
		"########################",
		"#.......:...O.#........#",
		"#.O....................#",
		"#........#.............#",
		"#...#.......#..G..#..#.#",
		"#.....#................#",
		"#.#...............O....#",
		"#............:.....#...#",
		"#...#.#................#",
		"#......................#",
		"##....#..:...S........##",
		"#....#.#.............#.#",
		"#........#...........#.#",
		"#..............#.......#",
		"#........#.........O#..#",
		"########################",
	},
	{
		"################",
		"#..............#",
		"#..............#",
		"#..#.........#.#",
		"#.......#......#",
		"#..........#...#",
		"#..#...#.......#",
		"#...#..........#",
		"#............#.#",
		"#.S.#..........#",
		"#..............#",
		"#....#.........#",
		"#..............#",
		"#.........#....#",
		"##....#....#...#",
		"#.....:........#",
		"#.......G......#",
		"#..........#...#",
		"#........#.....#",
		"#.....O........#",
		"#..........#...#",
		"#.#.#..........#",
		"##.............#",
		"#.O............#",
		"#..#..O:.##..:.#",
		"#..O#..O.......#",
		"#.#......#.....#",
		"################",
	},
	{
		"############################",
		"#.##.:.....................#",
		"#.......:.#..##...O........#",
		"#.........................##",
		"#.........:.............#..#",
		"#..........................#",
		"#.......................#.##",
		"#........................#.#",
		"#......#........#...#.#O...#",
		"#........:.#......O.......##",
		"#..#......O......#.##......#",
		"#................#.........#",
		"#.........O......#.....OG..#",
		"##.....................#...#",
		"#..###...................#.#",
		"#.....#...........O........#",
		"#..............#...........#",
		"#.................#......#.#",
		"#....#.....................#",
		"#.....#........#...........#",
		"#....................#.....#",
		"#..........................#",
		"#................#.....#...#",
		"#...:...#.#............#...#",
		"#........S.................#",
		"#....#.........#....O..#..##",
		"#..........................#",
		"############################",
	},
}

// vistaStatic is the unchanging part of a level.
type vistaStatic struct {
	w, h   int
	sx, sy int // the start tile
	tiles  [][]byte
	world  frame.Grid // the whole world without the player
}

type vistaLevel struct {
	st     *vistaStatic
	px, py int
}

func vistaSetup(seed uint64, level int) (*vistaStatic, int, int) {
	rows := transform(vistaMaps[level-1], symmetry(seed, vistaID, level))
	st := &vistaStatic{w: len(rows[0]), h: len(rows)}
	st.world = newFrame(st.w*vistaTile, st.h*vistaTile, 0)
	px, py := 0, 0
	for y, r := range rows {
		st.tiles = append(st.tiles, []byte(r))
		for x := 0; x < st.w; x++ {
			c := uint8(vistaIce)
			switch r[x] {
			case '#':
				c = vistaWall
			case ':':
				c = vistaSand
			case 'O':
				c = vistaHole
			case 'G':
				c = vistaGoal
			case 'S':
				px, py = x, y
			}
			fillRect(st.world, x*vistaTile, y*vistaTile, vistaTile, vistaTile, c)
		}
	}
	st.sx, st.sy = px, py
	return st, px, py
}

func newVista(seed uint64, level int) *vistaLevel {
	st, px, py := vistaSetup(seed, level)
	return &vistaLevel{st: st, px: px, py: py}
}

func (st *vistaStatic) tile(x, y int) byte {
	if x < 0 || y < 0 || x >= st.w || y >= st.h {
		return '#'
	}
	return st.tiles[y][x]
}

// slide moves from (x, y) in direction d and returns every tile entered in
// order and the outcome.
func (st *vistaStatic) slide(x, y int, d [2]int) ([][2]int, Outcome) {
	var path [][2]int
	for {
		nx, ny := x+d[0], y+d[1]
		t := st.tile(nx, ny)
		if t == '#' {
			return path, Playing
		}
		x, y = nx, ny
		path = append(path, [2]int{x, y})
		switch t {
		case 'O':
			return path, Lost
		case 'G':
			return path, Completed
		case ':':
			return path, Playing
		}
	}
}

// view renders the 64×64 window with the player at (px, py).
func (st *vistaStatic) view(px, py int) frame.Grid {
	cx := min(max(px-vistaView/2, 0), st.w-vistaView)
	cy := min(max(py-vistaView/2, 0), st.h-vistaView)
	g := crop(st.world, cx*vistaTile, cy*vistaTile, frame.GameSide, frame.GameSide)
	fillRect(g, (px-cx)*vistaTile, (py-cy)*vistaTile, vistaTile, vistaTile, vistaPlayer)
	return g
}

func (l *vistaLevel) Frame() frame.Grid { return l.st.view(l.px, l.py) }

func (l *vistaLevel) FullFrame() (frame.Grid, bool) {
	if l.st.w <= vistaView && l.st.h <= vistaView {
		return frame.Grid{}, false
	}
	g := l.st.world.Clone()
	fillRect(g, l.st.sx*vistaTile, l.st.sy*vistaTile, vistaTile, vistaTile, vistaPlayer)
	return g, true
}

func (l *vistaLevel) Act(a session.Action) ([]frame.Grid, Outcome) {
	d, ok := moves[a.Name]
	if !ok {
		return []frame.Grid{l.Frame()}, Playing
	}
	path, out := l.st.slide(l.px, l.py, d)
	if len(path) == 0 {
		return []frame.Grid{l.Frame()}, out
	}
	frames := make([]frame.Grid, 0, len(path))
	for _, p := range path {
		l.px, l.py = p[0], p[1]
		frames = append(frames, l.Frame())
	}
	return frames, out
}

// solveVista searches the player's tile breadth-first.
func solveVista(seed uint64, level int) []session.Action {
	st, px, py := vistaSetup(seed, level)
	type node struct {
		x, y int
		done bool
	}
	return bfs(node{x: px, y: py}, moveActions,
		func(n node, a session.Action) (node, bool) {
			path, out := st.slide(n.x, n.y, moves[a.Name])
			if len(path) == 0 {
				return n, false
			}
			p := path[len(path)-1]
			return node{p[0], p[1], out == Completed}, out != Lost
		},
		func(n node) bool { return n.done },
		func(n node) [2]int { return [2]int{n.x, n.y} })
}
