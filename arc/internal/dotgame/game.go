// Package dotgame is the trivial test game of the arc packages: a dot moving
// on a 64×64 grid, played by Go code that stands in for the real game server,
// and a reference Starlark world model of it (model/*.star, embedded). Tests
// and benchmarks of evident/arc/worldmodel and evident/arc/verify record
// sessions with Play and verify them against the model.
//
// Rules. Floor is colour 0, walls 3 (a one-cell border plus each level's
// wall), lava 8, the goal 14; the dot is one cell of colour 9 (12 after
// ACTION5). ACTION1..4 move the dot up, down, left, right by one cell; a wall
// blocks the move. Stepping on lava is GAME_OVER, on the goal completes the
// level (two frames: the dot on the goal, then the next level's first frame,
// or state WIN after the last level). ACTION5 toggles the dot's colour 9↔12
// (two frames: a flash of colour 11, then the new colour). ACTION6 x y moves
// the dot to (x, y) when that cell is floor. ACTION7 does nothing. RESET
// restarts the current level (a new attempt).
//
// It must not be used outside tests and benchmarks.
package dotgame

import (
	"fmt"

	"evident/arc/frame"
	"evident/arc/session"
)

// Colours of the game.
const (
	Floor  = 0
	Wall   = 3
	Lava   = 8
	Flash  = 11
	Dot    = 9
	DotAlt = 12
	Goal   = 14
)

// Rect is a filled rectangle of cells: X, Y top-left, W×H.
type Rect struct{ X, Y, W, H int }

// Layout is one level.
type Layout struct {
	Start, Goal frame.Cell
	Walls       []Rect
	Lava        []frame.Cell
}

// Levels are the game's levels; Levels[0] is level 1. Level 1 needs a detour
// of 30 moves around a wall; two moves down from the start is lava.
var Levels = []Layout{
	{
		Start: frame.Cell{X: 10, Y: 32},
		Goal:  frame.Cell{X: 30, Y: 32},
		Walls: []Rect{{X: 20, Y: 28, W: 1, H: 9}},
		Lava:  []frame.Cell{{X: 10, Y: 34}, {X: 11, Y: 34}},
	},
	{
		Start: frame.Cell{X: 40, Y: 40},
		Goal:  frame.Cell{X: 40, Y: 20},
		Walls: []Rect{{X: 36, Y: 30, W: 27, H: 1}},
		Lava:  []frame.Cell{{X: 30, Y: 40}},
	},
}

// Background is level's frame without the dot (level 1-based).
func Background(level int) frame.Grid {
	g, _ := frame.New(frame.GameSide, frame.GameSide)
	for i := 0; i < frame.GameSide; i++ {
		g.Set(i, 0, Wall)
		g.Set(i, frame.GameSide-1, Wall)
		g.Set(0, i, Wall)
		g.Set(frame.GameSide-1, i, Wall)
	}
	l := Levels[level-1]
	for _, r := range l.Walls {
		for y := r.Y; y < r.Y+r.H; y++ {
			for x := r.X; x < r.X+r.W; x++ {
				g.Set(x, y, Wall)
			}
		}
	}
	for _, c := range l.Lava {
		g.Set(c.X, c.Y, Lava)
	}
	g.Set(l.Goal.X, l.Goal.Y, Goal)
	return g
}

// Game is the real game: its state and server-wide counters.
type Game struct {
	level, x, y     int
	color           uint8
	levelsCompleted int
	stepIndex       int
	state           string
}

// New returns a game before its first RESET.
func New() *Game { return &Game{level: 1, state: session.StateNotPlayed} }

func (g *Game) frame() frame.Grid {
	f := Background(g.level)
	f.Set(g.x, g.y, g.color)
	return f
}

func (g *Game) startLevel() {
	l := Levels[g.level-1]
	g.x, g.y, g.color = l.Start.X, l.Start.Y, Dot
	g.state = session.StateNotFinished
}

func (g *Game) response(a session.Action, frames ...frame.Grid) session.Response {
	g.stepIndex++
	in, _ := a.Input()
	return session.Response{Frames: frames, Metadata: session.Metadata{
		StepIndex:        g.stepIndex,
		State:            g.state,
		LevelsCompleted:  g.levelsCompleted,
		WinLevels:        len(Levels),
		AvailableActions: []int{1, 2, 3, 4, 5, 6, 7},
		ActionInput:      &in,
	}}
}

// Act plays one command (RESET included) and returns the server's response.
func (g *Game) Act(a session.Action) (session.Response, error) {
	if a.Name == "RESET" {
		if g.state == session.StateWin {
			g.level, g.levelsCompleted = 1, 0
		}
		g.startLevel()
		return g.response(a, g.frame()), nil
	}
	if g.state != session.StateNotFinished {
		return session.Response{}, fmt.Errorf("dotgame: %s in state %s; RESET first", a.Name, g.state)
	}
	bg := Background(g.level)
	move := func(dx, dy int) (session.Response, error) {
		nx, ny := g.x+dx, g.y+dy
		switch bg.At(nx, ny) {
		case Wall:
			return g.response(a, g.frame()), nil
		case Lava:
			g.x, g.y = nx, ny
			g.state = session.StateGameOver
			return g.response(a, g.frame()), nil
		case Goal:
			g.x, g.y = nx, ny
			onGoal := g.frame()
			g.levelsCompleted++
			if g.level == len(Levels) {
				g.state = session.StateWin
				return g.response(a, onGoal), nil
			}
			g.level++
			g.startLevel()
			return g.response(a, onGoal, g.frame()), nil
		}
		g.x, g.y = nx, ny
		return g.response(a, g.frame()), nil
	}
	switch a.Name {
	case "ACTION1":
		return move(0, -1)
	case "ACTION2":
		return move(0, 1)
	case "ACTION3":
		return move(-1, 0)
	case "ACTION4":
		return move(1, 0)
	case "ACTION5":
		flash := g.frame()
		flash.Set(g.x, g.y, Flash)
		if g.color == Dot {
			g.color = DotAlt
		} else {
			g.color = Dot
		}
		return g.response(a, flash, g.frame()), nil
	case "ACTION6":
		if bg.At(a.X, a.Y) == Floor {
			g.x, g.y = a.X, a.Y
		}
		return g.response(a, g.frame()), nil
	case "ACTION7":
		return g.response(a, g.frame()), nil
	}
	return session.Response{}, fmt.Errorf("dotgame: unknown action %q", a.Name)
}

// Play plays script (RESET first) on a new game and records every response
// under root (normally <workspace>/client/session) with session.Recorder.
func Play(root string, script []session.Action) error {
	rec, err := session.OpenRecorder(root)
	if err != nil {
		return err
	}
	g := New()
	for i, a := range script {
		resp, err := g.Act(a)
		if err != nil {
			return fmt.Errorf("script action %d: %w", i+1, err)
		}
		if a.Name == "RESET" {
			_, err = rec.Reset(resp)
		} else {
			_, err = rec.Step(resp)
		}
		if err != nil {
			return fmt.Errorf("script action %d: %w", i+1, err)
		}
	}
	return nil
}

// Actions parses a script such as "RESET 4 4 1 6:15,47 5": RESET, or an
// action number n for ACTIONn, or 6:x,y for ACTION6.
func Actions(script string) []session.Action {
	var out []session.Action
	var tok string
	for _, r := range script + " " {
		if r != ' ' {
			tok += string(r)
			continue
		}
		if tok == "" {
			continue
		}
		var a session.Action
		switch {
		case tok == "RESET":
			a.Name = "RESET"
		case len(tok) > 2 && tok[:2] == "6:":
			a.Name = "ACTION6"
			fmt.Sscanf(tok[2:], "%d,%d", &a.X, &a.Y)
		default:
			a.Name = "ACTION" + tok
		}
		out = append(out, a)
		tok = ""
	}
	return out
}

// ShortestPath is the length of a shortest move sequence (ACTION1..4) from
// level's start to its goal avoiding walls and lava, computed in Go; -1 when
// there is none.
func ShortestPath(level int) int {
	bg := Background(level)
	l := Levels[level-1]
	dist := map[frame.Cell]int{l.Start: 0}
	queue := []frame.Cell{l.Start}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		for _, d := range []frame.Cell{{X: 0, Y: -1}, {X: 0, Y: 1}, {X: -1, Y: 0}, {X: 1, Y: 0}} {
			n := frame.Cell{X: c.X + d.X, Y: c.Y + d.Y}
			v := bg.At(n.X, n.Y)
			if _, seen := dist[n]; seen || v == Wall || v == Lava || v == frame.Invalid {
				continue
			}
			dist[n] = dist[c] + 1
			if v == Goal {
				return dist[n]
			}
			queue = append(queue, n)
		}
	}
	return -1
}
