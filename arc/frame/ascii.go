package frame

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"evident/internal/located"
)

// ParseError is a syntax or shape error in an ASCII frame (spec arc.md
// "Session recording"): the module's one located error, evident/internal/
// located.Error, shared with session.ParseError. Line and Column are
// 1-based; Column is 0 when the error concerns a whole line or the whole
// input (frames are ASCII, so it counts bytes and runes alike); Line is 0
// when the error concerns the whole input. File is "" unless the frame came
// from a file. Reason starts with "frame: ", so Error reads
// "file:line:col: frame: msg" (with a File) as it always has.
type ParseError = located.Error

// parseErr is a *ParseError at line and col of in-memory input.
func parseErr(line, col int, format string, args ...any) *ParseError {
	return &ParseError{Line: line, Column: col, Reason: "frame: " + fmt.Sprintf(format, args...)}
}

// hexVal maps an ASCII byte to its hex value, or 0xFF when it is not a hex
// digit.
var hexVal = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c - '0')
	}
	for c := 'A'; c <= 'F'; c++ {
		t[c] = uint8(c-'A') + 10
		t[c+'a'-'A'] = uint8(c-'A') + 10
	}
	return t
}()

const hexDigits = "0123456789ABCDEF"

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// ParseASCII parses an ASCII frame: one hex digit (either case) per cell, one
// row per line. Blank lines and spaces, tabs and '\r' around a row are
// skipped; the final newline is optional. It returns a *ParseError for a
// character that is not a hex digit, a row whose width differs from the first
// row's, input with no rows, or a side longer than MaxSide.
func ParseASCII(data []byte) (Grid, error) {
	var (
		cells []uint8
		w, h  int
		line  int
	)
	for len(data) > 0 {
		line++
		var ln []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			ln, data = data[:i], data[i+1:]
		} else {
			ln, data = data, nil
		}
		lead := 0
		for lead < len(ln) && isSpace(ln[lead]) {
			lead++
		}
		end := len(ln)
		for end > lead && isSpace(ln[end-1]) {
			end--
		}
		row := ln[lead:end]
		if len(row) == 0 {
			continue
		}
		if h == 0 {
			if len(row) > MaxSide {
				return Grid{}, parseErr(line, 0, "row has %d cells, at most %d allowed", len(row), MaxSide)
			}
			w = len(row)
			// Guess the height from the remaining bytes to avoid regrowth.
			cells = make([]uint8, 0, w*min(MaxSide, 1+len(data)/(w+1)))
		} else if len(row) != w {
			return Grid{}, parseErr(line, 0, "row has %d cells, want %d like the first row", len(row), w)
		}
		if h == MaxSide {
			return Grid{}, parseErr(line, 0, "more than %d rows", MaxSide)
		}
		for j, c := range row {
			v := hexVal[c]
			if v == 0xFF {
				return Grid{}, parseErr(line, lead+j+1, "invalid character %q, want a hex digit 0-9 or A-F", c)
			}
			cells = append(cells, v)
		}
		h++
	}
	if h == 0 {
		return Grid{}, parseErr(0, 0, "no rows (empty or blank input)")
	}
	return Grid{w: w, h: h, cells: cells}, nil
}

// ReadASCIIFile reads and parses the ASCII frame file at path. A parse error
// is a *ParseError with File set to path; an I/O error wraps the *fs.PathError
// (errors.Is(err, fs.ErrNotExist) works for a missing file).
func ReadASCIIFile(path string) (Grid, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Grid{}, fmt.Errorf("frame: %w", err)
	}
	g, err := ParseASCII(data)
	if err != nil {
		if pe, ok := err.(*ParseError); ok {
			pe.File = path
			return Grid{}, pe
		}
		return Grid{}, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// AppendASCII appends the ASCII form of g to dst and returns the result:
// Height lines of Width uppercase hex digits, each ending in '\n'. Cells out of
// palette are written as '?', which ParseASCII rejects. The zero Grid appends
// nothing.
func (g Grid) AppendASCII(dst []byte) []byte {
	dst = grow(dst, g.h*(g.w+1))
	for y := 0; y < g.h; y++ {
		for _, v := range g.cells[y*g.w : (y+1)*g.w] {
			if v < NumColors {
				dst = append(dst, hexDigits[v])
			} else {
				dst = append(dst, '?')
			}
		}
		dst = append(dst, '\n')
	}
	return dst
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		return nb
	}
	return b
}

// WriteASCII writes the ASCII form of g (see AppendASCII) to w.
func (g Grid) WriteASCII(w io.Writer) error {
	if _, err := w.Write(g.AppendASCII(nil)); err != nil {
		return fmt.Errorf("frame: write ASCII: %w", err)
	}
	return nil
}

// WriteASCIIFile writes the ASCII form of g to path (mode 0644, replacing any
// file there).
func (g Grid) WriteASCIIFile(path string) error {
	if err := os.WriteFile(path, g.AppendASCII(nil), 0o644); err != nil {
		return fmt.Errorf("frame: %w", err)
	}
	return nil
}
