package worldmodel

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"evident/arc/frame"
)

// Grid is the sandbox's grid built-in: a frame.Grid of colours 0..15 seen from
// Starlark, with its hot loops (fill, copy, find, compare) in Go.
//
// Starlark sees type "grid" with attributes width and height and the methods
// listed in the package doc. A Grid is mutable until frozen; every grid
// reachable from a state, and the initial frame handed to
// initial_state_reconstruction, is frozen, so copy() first to draw on it.
// Frozen grids are hashable; == compares size and cells.
type Grid struct {
	g      frame.Grid
	frozen bool
}

var (
	_ starlark.Value      = (*Grid)(nil)
	_ starlark.HasAttrs   = (*Grid)(nil)
	_ starlark.Comparable = (*Grid)(nil)
)

// NewGrid wraps g for Starlark. The Grid shares g's cells; it is frozen when
// frozen is true. Every cell of g must be 0..15.
func NewGrid(g frame.Grid, frozen bool) *Grid { return &Grid{g: g, frozen: frozen} }

// Frame returns the cells as a frame.Grid sharing the Grid's storage.
func (g *Grid) Frame() frame.Grid { return g.g }

// String returns "grid(64x64)".
func (g *Grid) String() string { return fmt.Sprintf("grid(%dx%d)", g.g.Width(), g.g.Height()) }

// Type returns "grid".
func (g *Grid) Type() string { return "grid" }

// Freeze makes the grid immutable.
func (g *Grid) Freeze() { g.frozen = true }

// Truth is always true.
func (g *Grid) Truth() starlark.Bool { return starlark.True }

// Hash hashes the size and cells of a frozen grid; a mutable grid is
// unhashable.
func (g *Grid) Hash() (uint32, error) {
	if !g.frozen {
		return 0, fmt.Errorf("unhashable: mutable grid (store it in a state, or use a tuple)")
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%dx%d:", g.g.Width(), g.g.Height())
	h.Write(g.g.Cells())
	return h.Sum32(), nil
}

// CompareSameType supports == and != (same size and cells).
func (g *Grid) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	eq := frame.Equal(g.g, y.(*Grid).g)
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("%s %s %s not supported", g.Type(), op, y.Type())
}

type gridMethod func(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

var gridMethods = map[string]gridMethod{
	"get":       gridGet,
	"set":       gridSet,
	"fill":      gridFill,
	"fill_rect": gridFillRect,
	"copy":      gridCopy,
	"crop":      gridCrop,
	"paste":     gridPaste,
	"find":      gridFind,
	"count":     gridCount,
	"bbox":      gridBBox,
	"diff":      gridDiff,
	"row":       gridRow,
}

// gridBuiltins are the unbound methods; Attr binds one to its grid.
var gridBuiltins = func() map[string]*starlark.Builtin {
	out := map[string]*starlark.Builtin{}
	for name, m := range gridMethods {
		out[name] = starlark.NewBuiltin("grid."+name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return m(b.Receiver().(*Grid), b.Name(), args, kwargs)
		})
	}
	return out
}()

// Attr returns width, height or a bound method.
func (g *Grid) Attr(name string) (starlark.Value, error) {
	switch name {
	case "width":
		return starlark.MakeInt(g.g.Width()), nil
	case "height":
		return starlark.MakeInt(g.g.Height()), nil
	}
	b, ok := gridBuiltins[name]
	if !ok {
		return nil, nil
	}
	return b.BindReceiver(g), nil
}

// AttrNames lists the attributes, sorted.
func (g *Grid) AttrNames() []string {
	names := []string{"width", "height"}
	for n := range gridMethods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (g *Grid) mutable(fn string) error {
	if g.frozen {
		return fmt.Errorf("%s: grid is frozen (grids in states and the initial frame are read-only; use copy())", fn)
	}
	return nil
}

func (g *Grid) inside(x, y int) bool { return x >= 0 && y >= 0 && x < g.g.Width() && y < g.g.Height() }

func checkColor(fn string, c int) error {
	if c < 0 || c >= frame.NumColors {
		return fmt.Errorf("%s: colour %d, want 0..15", fn, c)
	}
	return nil
}

// smallInts returns args as ints when they are exactly n small Ints (the
// fast path of get and set, which renderers call per cell).
func smallInts(args starlark.Tuple, kwargs []starlark.Tuple, n int) ([3]int, bool) {
	var out [3]int
	if len(kwargs) != 0 || len(args) != n {
		return out, false
	}
	for i, a := range args {
		v, ok := a.(starlark.Int)
		if !ok {
			return out, false
		}
		i64, ok := v.Int64()
		if !ok || i64 < -1<<31 || i64 >= 1<<31 {
			return out, false
		}
		out[i] = int(i64)
	}
	return out, true
}

func gridGet(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if a, ok := smallInts(args, kwargs, 2); ok && g.inside(a[0], a[1]) {
		return starlark.MakeInt(int(g.g.At(a[0], a[1]))), nil
	}
	var x, y int
	var def starlark.Value
	if err := starlark.UnpackArgs(fn, args, kwargs, "x", &x, "y", &y, "default?", &def); err != nil {
		return nil, err
	}
	if !g.inside(x, y) {
		if def != nil {
			return def, nil
		}
		return nil, fmt.Errorf("%s: (%d, %d) outside the %dx%d grid (pass a default to allow it)", fn, x, y, g.g.Width(), g.g.Height())
	}
	return starlark.MakeInt(int(g.g.At(x, y))), nil
}

func gridSet(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if a, ok := smallInts(args, kwargs, 3); ok && !g.frozen && g.inside(a[0], a[1]) && a[2] >= 0 && a[2] < frame.NumColors {
		g.g.Set(a[0], a[1], uint8(a[2]))
		return starlark.None, nil
	}
	var x, y, c int
	if err := starlark.UnpackArgs(fn, args, kwargs, "x", &x, "y", &y, "color", &c); err != nil {
		return nil, err
	}
	if err := g.mutable(fn); err != nil {
		return nil, err
	}
	if err := checkColor(fn, c); err != nil {
		return nil, err
	}
	if !g.inside(x, y) {
		return nil, fmt.Errorf("%s: (%d, %d) outside the %dx%d grid", fn, x, y, g.g.Width(), g.g.Height())
	}
	g.g.Set(x, y, uint8(c))
	return starlark.None, nil
}

func gridFill(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var c int
	if err := starlark.UnpackArgs(fn, args, kwargs, "color", &c); err != nil {
		return nil, err
	}
	if err := g.mutable(fn); err != nil {
		return nil, err
	}
	if err := checkColor(fn, c); err != nil {
		return nil, err
	}
	cells := g.g.Cells()
	for i := range cells {
		cells[i] = uint8(c)
	}
	return starlark.None, nil
}

// clip intersects the rectangle (x, y, w, h) with the grid and returns the
// clipped bounds [x0, x1) × [y0, y1).
func (g *Grid) clip(x, y, w, h int) (x0, y0, x1, y1 int) {
	x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x+w, g.g.Width()), min(y+h, g.g.Height())
	if x1 < x0 {
		x1 = x0
	}
	if y1 < y0 {
		y1 = y0
	}
	return
}

func gridFillRect(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y, w, h, c int
	if err := starlark.UnpackArgs(fn, args, kwargs, "x", &x, "y", &y, "width", &w, "height", &h, "color", &c); err != nil {
		return nil, err
	}
	if err := g.mutable(fn); err != nil {
		return nil, err
	}
	if err := checkColor(fn, c); err != nil {
		return nil, err
	}
	if w < 0 || h < 0 {
		return nil, fmt.Errorf("%s: negative size %dx%d", fn, w, h)
	}
	x0, y0, x1, y1 := g.clip(x, y, w, h)
	for yy := y0; yy < y1; yy++ {
		row := g.g.Row(yy)[x0:x1]
		for i := range row {
			row[i] = uint8(c)
		}
	}
	return starlark.None, nil
}

func gridCopy(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(fn, args, kwargs); err != nil {
		return nil, err
	}
	return &Grid{g: g.g.Clone()}, nil
}

func gridCrop(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y, w, h int
	if err := starlark.UnpackArgs(fn, args, kwargs, "x", &x, "y", &y, "width", &w, "height", &h); err != nil {
		return nil, err
	}
	if w < 1 || h < 1 || x < 0 || y < 0 || x+w > g.g.Width() || y+h > g.g.Height() {
		return nil, fmt.Errorf("%s: rectangle (%d, %d) %dx%d not inside the %dx%d grid", fn, x, y, w, h, g.g.Width(), g.g.Height())
	}
	out, err := frame.New(w, h)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	for yy := 0; yy < h; yy++ {
		copy(out.Row(yy), g.g.Row(y + yy)[x:x+w])
	}
	return &Grid{g: out}, nil
}

func gridPaste(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var src *Grid
	var x, y int
	transparent := -1
	if err := starlark.UnpackArgs(fn, args, kwargs, "src", &src, "x", &x, "y", &y, "transparent?", &transparent); err != nil {
		return nil, err
	}
	if err := g.mutable(fn); err != nil {
		return nil, err
	}
	x0, y0, x1, y1 := g.clip(x, y, src.g.Width(), src.g.Height())
	for yy := y0; yy < y1; yy++ {
		dst := g.g.Row(yy)[x0:x1]
		s := src.g.Row(yy - y)[x0-x : x1-x]
		if transparent < 0 {
			copy(dst, s)
			continue
		}
		for i, v := range s {
			if int(v) != transparent {
				dst[i] = v
			}
		}
	}
	return starlark.None, nil
}

func unpackColor(fn string, args starlark.Tuple, kwargs []starlark.Tuple) (uint8, error) {
	var c int
	if err := starlark.UnpackArgs(fn, args, kwargs, "color", &c); err != nil {
		return 0, err
	}
	if err := checkColor(fn, c); err != nil {
		return 0, err
	}
	return uint8(c), nil
}

func cellTuple(x, y int) starlark.Tuple {
	return starlark.Tuple{starlark.MakeInt(x), starlark.MakeInt(y)}
}

func gridFind(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	c, err := unpackColor(fn, args, kwargs)
	if err != nil {
		return nil, err
	}
	var out []starlark.Value
	w := g.g.Width()
	for i, v := range g.g.Cells() {
		if v == c {
			out = append(out, cellTuple(i%w, i/w))
		}
	}
	return starlark.NewList(out), nil
}

func gridCount(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	c, err := unpackColor(fn, args, kwargs)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, v := range g.g.Cells() {
		if v == c {
			n++
		}
	}
	return starlark.MakeInt(n), nil
}

func gridBBox(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	c, err := unpackColor(fn, args, kwargs)
	if err != nil {
		return nil, err
	}
	w := g.g.Width()
	x0, y0, x1, y1 := w, g.g.Height(), -1, -1
	for i, v := range g.g.Cells() {
		if v == c {
			x, y := i%w, i/w
			x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
		}
	}
	if x1 < 0 {
		return starlark.None, nil
	}
	return starlark.Tuple{starlark.MakeInt(x0), starlark.MakeInt(y0), starlark.MakeInt(x1 - x0 + 1), starlark.MakeInt(y1 - y0 + 1)}, nil
}

func gridDiff(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var o *Grid
	if err := starlark.UnpackArgs(fn, args, kwargs, "other", &o); err != nil {
		return nil, err
	}
	cells := frame.Mismatches(g.g, o.g)
	out := make([]starlark.Value, len(cells))
	for i, c := range cells {
		out[i] = cellTuple(c.X, c.Y)
	}
	return starlark.NewList(out), nil
}

func gridRow(g *Grid, fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var y int
	if err := starlark.UnpackArgs(fn, args, kwargs, "y", &y); err != nil {
		return nil, err
	}
	if y < 0 || y >= g.g.Height() {
		return nil, fmt.Errorf("%s: row %d outside the %dx%d grid", fn, y, g.g.Width(), g.g.Height())
	}
	row := g.g.Row(y)
	out := make([]starlark.Value, len(row))
	for i, v := range row {
		out[i] = starlark.MakeInt(int(v))
	}
	return starlark.NewList(out), nil
}

// builtinGrid is grid(width, height, color=0).
func builtinGrid(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var w, h, c int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "width", &w, "height", &h, "color?", &c); err != nil {
		return nil, err
	}
	if err := checkColor(b.Name(), c); err != nil {
		return nil, err
	}
	g, err := frame.New(w, h)
	if err != nil {
		return nil, fmt.Errorf("%s: size %dx%d, want 1..%d each", b.Name(), w, h, frame.MaxSide)
	}
	if c != 0 {
		cells := g.Cells()
		for i := range cells {
			cells[i] = uint8(c)
		}
	}
	return &Grid{g: g}, nil
}

// builtinGridFromRows is grid_from_rows(rows): rows is a list (or tuple) of
// hex strings ("0F3...") or of lists of ints 0..15, all of one length.
func builtinGridFromRows(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var rows starlark.Indexable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "rows", &rows); err != nil {
		return nil, err
	}
	n := rows.Len()
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows", b.Name())
	}
	if s, ok := rows.Index(0).(starlark.String); ok {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			r, ok := rows.Index(i).(starlark.String)
			if !ok || len(r) != len(s) {
				return nil, fmt.Errorf("%s: row %d: want a hex string of length %d", b.Name(), i, len(s))
			}
			sb.WriteString(string(r))
			sb.WriteByte('\n')
		}
		g, err := frame.ParseASCII([]byte(sb.String()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		return &Grid{g: g}, nil
	}
	var width int
	var cells []uint8
	for i := 0; i < n; i++ {
		r, ok := rows.Index(i).(starlark.Indexable)
		if !ok {
			return nil, fmt.Errorf("%s: row %d is a %s, want a list of ints or a hex string", b.Name(), i, rows.Index(i).Type())
		}
		if i == 0 {
			width = r.Len()
		}
		if r.Len() != width {
			return nil, fmt.Errorf("%s: row %d has %d cells, row 0 has %d", b.Name(), i, r.Len(), width)
		}
		for x := 0; x < width; x++ {
			v, err := starlark.AsInt32(r.Index(x))
			if err != nil || v < 0 || v >= frame.NumColors {
				return nil, fmt.Errorf("%s: cell (%d, %d) = %s, want an int 0..15", b.Name(), x, i, r.Index(x))
			}
			cells = append(cells, uint8(v))
		}
	}
	g, err := frame.FromCells(width, n, cells)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return &Grid{g: g}, nil
}
