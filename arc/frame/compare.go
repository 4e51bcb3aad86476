package frame

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Cell is the position of one cell: X the column, Y the row, origin top-left
// (the same axes as ACTION6's x and y).
type Cell struct {
	X, Y int
}

// Equal reports whether a and b have the same size and the same value in every
// cell (the verifier's frame check, spec arc.md "Verification"). Two zero
// Grids are equal.
func Equal(a, b Grid) bool {
	return a.w == b.w && a.h == b.h && bytes.Equal(a.cells, b.cells)
}

// Equal reports whether g and o are equal (see the function Equal).
func (g Grid) Equal(o Grid) bool { return Equal(g, o) }

const (
	lo7 = 0x7F7F7F7F7F7F7F7F
	hi1 = 0x8080808080808080
)

// nonzeroBytes returns a word whose byte i has its top bit set iff byte i of x
// is not zero, and no other bits set.
func nonzeroBytes(x uint64) uint64 {
	return (((x & lo7) + lo7) | x) & hi1
}

// chunk is the span countDiff and appendDiff first test with bytes.Equal
// (vectorised); only differing chunks are scanned word by word.
const chunk = 128

// countDiff counts the indices where a and b differ; len(a) == len(b).
func countDiff(a, b []uint8) int {
	n, i := 0, 0
	for ; i+chunk <= len(a); i += chunk {
		if !bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
			n += countWords(a[i:i+chunk], b[i:i+chunk])
		}
	}
	return n + countWords(a[i:], b[i:])
}

// countWords counts the indices where a and b differ, eight at a time;
// len(a) == len(b).
func countWords(a, b []uint8) int {
	n, i := 0, 0
	b = b[:len(a)]
	for ; i+8 <= len(a); i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			n += bits.OnesCount64(nonzeroBytes(x))
		}
	}
	for ; i < len(a); i++ {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// appendDiff appends the cells of a w-wide row-major grid where a and b
// differ, in row-major order; len(a) == len(b).
func appendDiff(dst []Cell, a, b []uint8, w int) []Cell {
	i := 0
	for ; i+chunk <= len(a); i += chunk {
		if !bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
			dst = appendWords(dst, a[i:i+chunk], b[i:i+chunk], w, i)
		}
	}
	return appendWords(dst, a[i:], b[i:], w, i)
}

// appendWords appends the cells where a and b differ, a[0] being cell index
// base of a w-wide grid; len(a) == len(b).
func appendWords(dst []Cell, a, b []uint8, w, base int) []Cell {
	i := 0
	b = b[:len(a)]
	for ; i+8 <= len(a); i += 8 {
		x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:])
		for m := nonzeroBytes(x); m != 0; m &= m - 1 {
			k := base + i + bits.TrailingZeros64(m)/8
			dst = append(dst, Cell{X: k % w, Y: k / w})
		}
	}
	for ; i < len(a); i++ {
		if a[i] != b[i] {
			k := base + i
			dst = append(dst, Cell{X: k % w, Y: k / w})
		}
	}
	return dst
}

// CountMismatches returns the number of mismatching cells of a and b: cells
// whose values differ, plus, when the sizes differ, cells that lie in exactly
// one of the two rectangles. It is 0 iff Equal(a, b). It allocates nothing.
func CountMismatches(a, b Grid) int {
	if a.w == b.w && a.h == b.h {
		return countDiff(a.cells, b.cells)
	}
	n := 0
	forEachUnionMismatch(a, b, func(Cell) { n++ })
	return n
}

// AppendMismatches appends the mismatching cells of a and b (as counted by
// CountMismatches) to dst in row-major order and returns the result. Pass a
// reused dst to avoid allocation.
func AppendMismatches(dst []Cell, a, b Grid) []Cell {
	if a.w == b.w && a.h == b.h {
		return appendDiff(dst, a.cells, b.cells, a.w)
	}
	forEachUnionMismatch(a, b, func(c Cell) { dst = append(dst, c) })
	return dst
}

// Mismatches returns the mismatching cells of a and b in row-major order, nil
// when they are equal.
func Mismatches(a, b Grid) []Cell { return AppendMismatches(nil, a, b) }

// forEachUnionMismatch calls f, in row-major order, for every cell of the
// union rectangle of a and b that lies in exactly one of them or holds
// different values in both.
func forEachUnionMismatch(a, b Grid, f func(Cell)) {
	w, h := max(a.w, b.w), max(a.h, b.h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			inA := x < a.w && y < a.h
			inB := x < b.w && y < b.h
			switch {
			case inA && inB:
				if a.cells[y*a.w+x] != b.cells[y*b.w+x] {
					f(Cell{x, y})
				}
			case inA || inB:
				f(Cell{x, y})
			}
		}
	}
}
