package games

import (
	"math/bits"

	"evident/arc/frame"
	"evident/arc/session"
)

// Lights is the click puzzle.
//
// An n×n board (n = 3, 4, 5) of 7×7 cells with 1-cell gaps sits at
// (ox, 20), ox = (64 − (8n − 1)) / 2, inside a one-cell gap and a one-cell
// outline of colour 2, on background 5. A cell is lit (11), dark (3) or
// blocked (13). The target pattern is shown above the board at (ox, 3) as
// 2×2 cells with 1-cell gaps: lit 11, dark 4, blocked 13. ACTION6 on a
// cell (not a gap) that is not blocked toggles it and its four neighbours
// (blocked ones excepted); any other click changes nothing but still counts.
// The level is completed when the board equals the target. Completing a
// level answers two frames: the solved board, then the next level.
var Lights = &Game{
	ID:    lightsID,
	Title: "Lights",
	Rules: "Click a lamp to flip it and its four neighbours (purple lamps never change); " +
		"make the board match the small pattern at the top. Only ACTION6 is available.",
	Baselines: []int{4, 8, 12},
	Tags:      []string{"click"},
	Actions:   []int{6},
	newLevel:  func(seed uint64, level int) Level { return newLights(seed, level) },
	solve:     solveLights,
}

// Lights geometry and colours (see Lights).
const (
	lightsID = "lights-v1"

	lightsOY      = 20
	lightsStride  = 8
	lightsCell    = 7
	lightsPreY    = 3
	lightsPreStep = 3

	lightsBG      = 5
	lightsOutline = 2
	lightsOn      = 11
	lightsOff     = 3
	lightsBlocked = 13
	lightsPreOff  = 4
)

// lightsMap is one level as drawn: the target ('#' lit, '.' dark, 'X'
// blocked) and the clicks (column, row) that lead from the target to the
// start, so the level is solvable by design in len(clicks) clicks.
type lightsMap struct {
	target []string
	clicks [][2]int
}

var lightsMaps = []lightsMap{
	{target: []string{
		"...",
		"...",
		"...",
	}, clicks: [][2]int{{1, 1}, {0, 2}}},
	{target: []string{
		"#..#",
		".##.",
		".##.",
		"#..#",
	}, clicks: [][2]int{{0, 0}, {2, 1}, {1, 3}, {3, 2}}},
	{target: []string{
		"..#..",
		".X.#.",
		"#...#",
		".#.X.",
		"..#..",
	}, clicks: [][2]int{{0, 0}, {2, 1}, {4, 2}, {1, 3}, {2, 4}, {4, 4}}},
}

// lightsBoard is a board: n×n cells row-major, 1 lit, 0 dark, −1 blocked.
type lightsBoard []int8

func parseLights(rows []string) lightsBoard {
	n := len(rows)
	b := make(lightsBoard, n*n)
	for y, r := range rows {
		for x := 0; x < n; x++ {
			switch r[x] {
			case '#':
				b[y*n+x] = 1
			case 'X':
				b[y*n+x] = -1
			}
		}
	}
	return b
}

func (b lightsBoard) format(n int) []string {
	rows := make([]string, n)
	for y := range rows {
		r := make([]byte, n)
		for x := range r {
			r[x] = "X.#"[b[y*n+x]+1]
		}
		rows[y] = string(r)
	}
	return rows
}

// toggle applies a click on cell (x, y) of an n×n board in place; it does
// nothing on a blocked cell.
func (b lightsBoard) toggle(n, x, y int) {
	if b[y*n+x] < 0 {
		return
	}
	for _, d := range [][2]int{{0, 0}, {0, -1}, {0, 1}, {-1, 0}, {1, 0}} {
		cx, cy := x+d[0], y+d[1]
		if cx >= 0 && cy >= 0 && cx < n && cy < n && b[cy*n+cx] >= 0 {
			b[cy*n+cx] ^= 1
		}
	}
}

func (b lightsBoard) equal(o lightsBoard) bool {
	for i := range b {
		if b[i] != o[i] {
			return false
		}
	}
	return true
}

type lightsLevel struct {
	n, ox         int
	board, target lightsBoard
}

func lightsOX(n int) int { return (frame.GameSide - (lightsStride*n - 1)) / 2 }

func newLights(seed uint64, level int) *lightsLevel {
	m := lightsMaps[level-1]
	n := len(m.target)
	start := parseLights(m.target)
	for _, c := range m.clicks {
		start.toggle(n, c[0], c[1])
	}
	k := symmetry(seed, lightsID, level)
	return &lightsLevel{
		n: n, ox: lightsOX(n),
		board:  parseLights(transform(start.format(n), k)),
		target: parseLights(transform(m.target, k)),
	}
}

// cellAt maps a click to a cell; ok is false on gaps and outside the board.
func (l *lightsLevel) cellAt(x, y int) (cx, cy int, ok bool) {
	dx, dy := x-l.ox, y-lightsOY
	if dx < 0 || dy < 0 || dx%lightsStride >= lightsCell || dy%lightsStride >= lightsCell {
		return 0, 0, false
	}
	cx, cy = dx/lightsStride, dy/lightsStride
	return cx, cy, cx < l.n && cy < l.n
}

func (l *lightsLevel) Frame() frame.Grid {
	g := newFrame(frame.GameSide, frame.GameSide, lightsBG)
	side := lightsStride*l.n + 3
	fillRect(g, l.ox-2, lightsOY-2, side, side, lightsOutline)
	fillRect(g, l.ox-1, lightsOY-1, side-2, side-2, lightsBG)
	for i, v := range l.board {
		c := []uint8{lightsBlocked, lightsOff, lightsOn}[v+1]
		fillRect(g, l.ox+(i%l.n)*lightsStride, lightsOY+(i/l.n)*lightsStride, lightsCell, lightsCell, c)
	}
	for i, v := range l.target {
		c := []uint8{lightsBlocked, lightsPreOff, lightsOn}[v+1]
		fillRect(g, l.ox+(i%l.n)*lightsPreStep, lightsPreY+(i/l.n)*lightsPreStep, 2, 2, c)
	}
	return g
}

func (l *lightsLevel) FullFrame() (frame.Grid, bool) { return frame.Grid{}, false }

func (l *lightsLevel) Act(a session.Action) ([]frame.Grid, Outcome) {
	if a.Name == "ACTION6" {
		if x, y, ok := l.cellAt(a.X, a.Y); ok {
			l.board.toggle(l.n, x, y)
		}
	}
	out := Playing
	if l.board.equal(l.target) {
		out = Completed
	}
	return []frame.Grid{l.Frame()}, out
}

// solveLights solves board + A·x = target over GF(2) by elimination and
// returns a solution of fewest clicks (the free variables are enumerated),
// each click at its cell's centre, row-major.
func solveLights(seed uint64, level int) []session.Action {
	l := newLights(seed, level)
	n := l.n
	var vars []int // cell index of each variable (non-blocked cells)
	for i, v := range l.board {
		if v >= 0 {
			vars = append(vars, i)
		}
	}
	// One equation per non-blocked cell: a bit mask of the variables that
	// flip it, and the needed parity.
	var rows []uint64
	var rhs []uint64
	for _, c := range vars {
		var m uint64
		for j, v := range vars {
			b := make(lightsBoard, n*n)
			copy(b, l.board)
			for i := range b {
				if b[i] > 0 {
					b[i] = 0
				}
			}
			b.toggle(n, v%n, v/n)
			if b[c] == 1 {
				m |= 1 << j
			}
		}
		rows = append(rows, m)
		rhs = append(rhs, uint64(l.board[c]^l.target[c]))
	}
	var pivots []int
	r := 0
	for col := 0; col < len(vars) && r < len(rows); col++ {
		p := -1
		for i := r; i < len(rows); i++ {
			if rows[i]>>col&1 == 1 {
				p = i
				break
			}
		}
		if p < 0 {
			continue
		}
		rows[r], rows[p] = rows[p], rows[r]
		rhs[r], rhs[p] = rhs[p], rhs[r]
		for i := range rows {
			if i != r && rows[i]>>col&1 == 1 {
				rows[i] ^= rows[r]
				rhs[i] ^= rhs[r]
			}
		}
		pivots = append(pivots, col)
		r++
	}
	for i := r; i < len(rows); i++ {
		if rhs[i] != 0 {
			return nil
		}
	}
	isPivot := map[int]bool{}
	for _, c := range pivots {
		isPivot[c] = true
	}
	var free []int
	for c := range vars {
		if !isPivot[c] {
			free = append(free, c)
		}
	}
	best, bestN := uint64(0), -1
	for f := uint64(0); f < 1<<len(free); f++ {
		var x uint64
		for i, c := range free {
			if f>>i&1 == 1 {
				x |= 1 << c
			}
		}
		for i, c := range pivots {
			// Row i: x_c + Σ_{free in row} x_free = rhs.
			v := rhs[i] ^ uint64(bits.OnesCount64(rows[i]&x&^(1<<c))&1)
			x |= v << c
		}
		if cnt := bits.OnesCount64(x); bestN < 0 || cnt < bestN {
			best, bestN = x, cnt
		}
	}
	var plan []session.Action
	for j, c := range vars {
		if best>>j&1 == 1 {
			plan = append(plan, session.Action{Name: "ACTION6",
				X: l.ox + (c%n)*lightsStride + lightsCell/2, Y: lightsOY + (c/n)*lightsStride + lightsCell/2})
		}
	}
	return plan
}
