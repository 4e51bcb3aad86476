package frame

import (
	"errors"
	"fmt"
)

// Sizes and special values of a frame (spec arc.md "What it is for",
// "Vocabulary and contracts").
const (
	// GameSide is the width and height, in cells, of every frame the game
	// sends.
	GameSide = 64
	// MaxSide is the largest width or height, in cells, any constructor or
	// reader accepts (a level's initial full frame may exceed GameSide).
	MaxSide = 4096
	// NumColors is the number of game colours; cell values 0..NumColors-1.
	NumColors = 16
	// Invalid is the cell value constructors store for an input value outside
	// 0..15, and what At returns outside the grid. It renders black.
	Invalid uint8 = 0xFF
)

// ErrSize reports a width or height outside 1..MaxSide, or rows of unequal
// length.
var ErrSize = errors.New("frame: bad size")

// Grid is a Width×Height frame of colour indices, stored row-major (cell (x, y)
// at index y*Width+x, x the column and y the row, origin top-left). The zero
// Grid has size 0×0 and stands for "no frame" (see IsZero). Values 0..15 are
// game colours; anything else is out of palette (see the package doc).
//
// A Grid is a small header over a cell slice: copying a Grid shares the cells.
// Use Clone for an independent copy.
type Grid struct {
	w, h  int
	cells []uint8
}

// New returns a width×height grid of colour 0. It fails with ErrSize unless
// 1 ≤ width, height ≤ MaxSide.
func New(width, height int) (Grid, error) {
	if err := checkSize(width, height); err != nil {
		return Grid{}, err
	}
	return Grid{w: width, h: height, cells: make([]uint8, width*height)}, nil
}

func checkSize(width, height int) error {
	if width < 1 || height < 1 || width > MaxSide || height > MaxSide {
		return fmt.Errorf("%w: %d×%d cells, want 1..%d on each side", ErrSize, width, height, MaxSide)
	}
	return nil
}

// FromCells returns a width×height grid holding a copy of cells (row-major,
// len width*height). Values are kept as given, out-of-palette ones included.
// It fails with ErrSize on a bad size or a length that does not match.
func FromCells(width, height int, cells []uint8) (Grid, error) {
	if err := checkSize(width, height); err != nil {
		return Grid{}, err
	}
	if len(cells) != width*height {
		return Grid{}, fmt.Errorf("%w: %d cells for %d×%d", ErrSize, len(cells), width, height)
	}
	c := make([]uint8, len(cells))
	copy(c, cells)
	return Grid{w: width, h: height, cells: c}, nil
}

// Integer is any integer type a world model may render a frame in.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// FromRows returns the grid whose row y is rows[y]; every value outside 0..15
// is stored as Invalid. It fails with ErrSize when there are no rows, rows
// differ in length (the error names the first bad row, 0-based) or a side
// exceeds MaxSide.
func FromRows[T Integer](rows [][]T) (Grid, error) {
	if len(rows) == 0 {
		return Grid{}, fmt.Errorf("%w: no rows", ErrSize)
	}
	w := len(rows[0])
	if err := checkSize(w, len(rows)); err != nil {
		return Grid{}, err
	}
	g := Grid{w: w, h: len(rows), cells: make([]uint8, w*len(rows))}
	for y, row := range rows {
		if len(row) != w {
			return Grid{}, fmt.Errorf("%w: row %d has %d cells, row 0 has %d", ErrSize, y, len(row), w)
		}
		dst := g.cells[y*w : (y+1)*w]
		for x, v := range row {
			if v >= 0 && v < NumColors {
				dst[x] = uint8(v)
			} else {
				dst[x] = Invalid
			}
		}
	}
	return g, nil
}

// Width is the number of columns; 0 for the zero Grid.
func (g Grid) Width() int { return g.w }

// Height is the number of rows; 0 for the zero Grid.
func (g Grid) Height() int { return g.h }

// IsZero reports whether g is the zero Grid ("no frame").
func (g Grid) IsZero() bool { return g.w == 0 || g.h == 0 }

// At returns the value of cell (x, y), or Invalid when (x, y) lies outside g.
func (g Grid) At(x, y int) uint8 {
	if x < 0 || y < 0 || x >= g.w || y >= g.h {
		return Invalid
	}
	return g.cells[y*g.w+x]
}

// Set stores v in cell (x, y) and reports whether (x, y) lies inside g; it
// does nothing outside. v is stored as given, out-of-palette values included.
func (g Grid) Set(x, y int, v uint8) bool {
	if x < 0 || y < 0 || x >= g.w || y >= g.h {
		return false
	}
	g.cells[y*g.w+x] = v
	return true
}

// Row returns row y (Width cells) sharing g's storage, or nil outside g.
func (g Grid) Row(y int) []uint8 {
	if y < 0 || y >= g.h {
		return nil
	}
	return g.cells[y*g.w : (y+1)*g.w : (y+1)*g.w]
}

// Cells returns all cells row-major, sharing g's storage (nil for the zero
// Grid).
func (g Grid) Cells() []uint8 { return g.cells }

// Clone returns a copy of g that shares nothing with it.
func (g Grid) Clone() Grid {
	if g.cells == nil {
		return Grid{}
	}
	c := make([]uint8, len(g.cells))
	copy(c, g.cells)
	return Grid{w: g.w, h: g.h, cells: c}
}

// InPalette reports whether every cell holds a game colour 0..15 (true for
// the zero Grid). Only such grids survive an ASCII round trip.
func (g Grid) InPalette() bool {
	for _, v := range g.cells {
		if v >= NumColors {
			return false
		}
	}
	return true
}

// String returns the ASCII form of g (see AppendASCII).
func (g Grid) String() string { return string(g.AppendASCII(nil)) }
