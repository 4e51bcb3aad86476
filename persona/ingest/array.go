package ingest

import (
	"bytes"
	"fmt"
	"io"
)

// arrayReader cuts a JSON array into its elements without decoding them.
//
// It does not use json.Decoder: a json.Decoder cannot go on after a syntax
// error inside one element, and a broken row must become a reject, not stop
// the run. It tracks brackets and strings instead, so that every element ends
// at the next ',' or ']' outside strings and nested brackets; the element's
// own syntax is checked when it is decoded. To resynchronise after a broken
// element a string also ends at a raw newline (never valid inside a JSON
// string), a closing bracket pops the nearest matching opener, a ']' with
// no '[' open inside the element closes the array, and a '{' inside an
// object anywhere but after ':' starts the next element (an object missing
// its '}': without this it swallowed every element after it, which then
// had no line of their own; the element is cut at the ',' before that '{',
// or right before it when there is none).
type arrayReader struct {
	r         io.Reader
	buf       []byte
	i, n      int
	rerr      error // error from r (io.EOF at the end), reported once buf is drained
	line, col int   // position of buf[i]: 1-based line and rune column
	state     int
	comma     cellPos // position of the last ',' between elements
	stack     []byte  // open brackets of the current element
	open      [2]int  // how many '[' and '{' stack holds (see bracket)
	scratch   []byte  // element bytes from earlier buffer fills
}

const (
	arrStart = iota // before '['
	arrFirst        // after '[': an element or ']'
	arrNext         // after ',': an element
	arrEnd          // after ']': only white space may follow
	arrDone
)

func newArrayReader(r io.Reader) *arrayReader {
	return &arrayReader{r: r, buf: make([]byte, 64<<10), line: 1, col: 1}
}

// fill makes sure buf[i:n] is not empty; false means the input ended (rerr).
func (a *arrayReader) fill() bool {
	if a.i < a.n {
		return true
	}
	a.i, a.n = 0, 0
	for tries := 0; a.rerr == nil && a.n == 0; tries++ {
		if tries == 100 {
			a.rerr = io.ErrNoProgress
			break
		}
		a.n, a.rerr = a.r.Read(a.buf)
	}
	return a.n > 0
}

// advance moves the position over b, the bytes just consumed.
func (a *arrayReader) advance(b []byte) {
	a.line, a.col = advancePos(a.line, a.col, b)
}

// peek skips white space and returns the next byte without consuming it.
func (a *arrayReader) peek() (byte, bool) {
	for a.fill() {
		for a.i < a.n {
			switch c := a.buf[a.i]; c {
			case ' ', '\t', '\r':
				a.col++
			case '\n':
				a.line++
				a.col = 1
			default:
				return c, true
			}
			a.i++
		}
	}
	return 0, false
}

// consume1 consumes the byte that peek returned.
func (a *arrayReader) consume1() {
	a.advance(a.buf[a.i : a.i+1])
	a.i++
}

// fatal returns a fatal error at the current position.
func (a *arrayReader) fatal(format string, args ...any) error {
	a.state = arrDone
	return fmt.Errorf("line %d, column %d: "+format, append([]any{a.line, a.col}, args...)...)
}

// endError is the fatal error for input that ended (or failed) before the
// array was closed.
func (a *arrayReader) endError(what string) error {
	if a.rerr != nil && a.rerr != io.EOF {
		return a.fatal("read error: %w", a.rerr)
	}
	return a.fatal("unexpected end of input: %s", what)
}

func (a *arrayReader) next() (Raw, error) {
	for {
		switch a.state {
		case arrStart:
			c, ok := a.peek()
			if !ok {
				return Raw{}, a.endError("want a JSON array, got an empty table")
			}
			if c != '[' {
				return Raw{}, a.fatal("want '[' to open a JSON array, got %s", byteName(c))
			}
			a.consume1()
			a.state = arrFirst
		case arrFirst, arrNext:
			c, ok := a.peek()
			if !ok {
				return Raw{}, a.endError("the JSON array is not closed")
			}
			switch c {
			case ']':
				a.consume1()
				trailing := a.state == arrNext
				a.state = arrEnd
				if trailing {
					return Raw{Line: a.comma.line, Err: &RowError{Line: a.comma.line, Column: a.comma.col,
						Reason: "bad JSON array: ',' with no element after it"}}, nil
				}
			case ',':
				pos := cellPos{a.line, a.col}
				a.consume1()
				a.comma = pos
				a.state = arrNext
				return Raw{Line: pos.line, Err: &RowError{Line: pos.line, Column: pos.col,
					Reason: "bad JSON array: ',' with no element before it"}}, nil
			default:
				return a.element()
			}
		case arrEnd:
			c, ok := a.peek()
			if !ok {
				if a.rerr != nil && a.rerr != io.EOF {
					return Raw{}, a.fatal("read error: %w", a.rerr)
				}
				a.state = arrDone
				return Raw{}, io.EOF
			}
			return Raw{}, a.fatal("unexpected %s after the end of the JSON array", byteName(c))
		default:
			return Raw{}, io.EOF
		}
	}
}

// element cuts the element that starts at the current (non-space) byte.
func (a *arrayReader) element() (Raw, error) {
	line, col := a.line, a.col
	a.scratch = a.scratch[:0]
	a.stack = a.stack[:0]
	a.open = [2]int{}
	inStr, esc := false, false
	// prev is the last byte outside strings other than white space ('"'
	// for a string), and comma where the last ',' inside the element is,
	// as an offset into the element's bytes (scratch, then chunk).
	var prev byte
	comma := -1
	for a.fill() {
		chunk := a.buf[a.i:a.n]
		end := -1 // index in chunk of the ',' or ']' that ends the element
		closes := false
		next := -1 // index in chunk of a '{' that starts the next element
	scan:
		for j, c := range chunk {
			if inStr {
				switch {
				case c == '\n':
					inStr, esc = false, false
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == '"':
					inStr = false
				}
				continue
			}
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			}
			p := prev
			prev = c
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				if c == '{' && len(a.stack) > 0 && a.stack[len(a.stack)-1] == '{' && p != ':' {
					end, next = j, j
					break scan
				}
				a.stack = append(a.stack, c)
				a.open[bracket(c)]++
			case '}', ']':
				open := byte('{')
				if c == ']' {
					open = '['
				}
				if a.open[bracket(open)] > 0 { // pop down to the nearest matching opener
					k := bytes.LastIndexByte(a.stack, open)
					for _, o := range a.stack[k:] {
						a.open[bracket(o)]--
					}
					a.stack = a.stack[:k]
				} else if c == ']' {
					end, closes = j, true
					break scan
				}
			case ',':
				if len(a.stack) == 0 {
					end = j
					break scan
				}
				comma = len(a.scratch) + j
			}
		}
		if end < 0 {
			a.scratch = append(a.scratch, chunk...)
			a.advance(chunk)
			a.i = a.n
			continue
		}
		var elem []byte
		if len(a.scratch) == 0 {
			elem = chunk[:end]
		} else {
			a.scratch = append(a.scratch, chunk[:end]...)
			elem = a.scratch
		}
		if next >= 0 {
			// A broken object: it ends at its last ',' when only white
			// space follows that (",\n  {"), else before the '{'; the
			// next element starts at the '{'.
			if comma >= 0 && len(bytes.TrimLeft(elem[comma+1:], " \t\r\n")) == 0 {
				elem = elem[:comma]
			}
			elem = bytes.Clone(bytes.TrimRight(elem, " \t\r\n"))
			a.line, a.col = advancePos(a.line, a.col, chunk[:next])
			a.comma = cellPos{a.line, a.col}
			a.i += next
			a.state = arrNext
			return Raw{Line: line, JSON: elem, col: col}, nil
		}
		elem = bytes.Clone(bytes.TrimRight(elem, " \t\r\n"))
		if closes {
			a.advance(chunk[:end+1])
			a.state = arrEnd
		} else {
			a.comma = cellPos{}
			a.comma.line, a.comma.col = advancePos(a.line, a.col, chunk[:end])
			a.line, a.col = a.comma.line, a.comma.col+1
			a.state = arrNext
		}
		a.i += end + 1
		if elem[0] != '{' {
			return Raw{Line: line, Err: &RowError{Line: line, Column: col,
				Reason: "want JSON object, got " + jsonKind(elem)}}, nil
		}
		return Raw{Line: line, JSON: elem, col: col}, nil
	}
	return Raw{}, a.endError(fmt.Sprintf("the JSON array element that starts at line %d, column %d is not closed", line, col))
}

// bracket indexes arrayReader.open: 0 for '[', 1 for '{'. Keeping the counts
// lets a closer with no matching opener be seen at once, so that input such
// as "{{{{…]]]]" stays linear.
func bracket(c byte) int {
	if c == '{' {
		return 1
	}
	return 0
}

// jsonKind names the kind of JSON value that b starts with, for messages.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch c := b[0]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case bytes.HasPrefix(b, []byte("true")) || bytes.HasPrefix(b, []byte("false")):
		return "bool"
	case bytes.HasPrefix(b, []byte("null")):
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	default:
		return "invalid JSON starting with " + byteName(c)
	}
}

// byteName names a byte for a message: 'x' for ASCII, else its value in hex
// (a byte of a multi-byte UTF-8 sequence printed as a rune reads as a Latin-1
// letter: 0xEF as 'ï'), with a hint for the first byte of a UTF-8 BOM.
func byteName(c byte) string {
	switch {
	case c < 0x80:
		return fmt.Sprintf("%q", c)
	case c == 0xEF:
		return "byte 0xEF (a UTF-8 byte order mark, U+FEFF, where only the file's start may have one?)"
	}
	return fmt.Sprintf("byte 0x%02X", c)
}
