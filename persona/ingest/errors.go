package ingest

import (
	"bytes"
	"errors"
	"unicode/utf8"

	"evident/internal/located"
)

// RowError is why one row cannot be judged (spec persona.md "Output": such a
// row goes to the rejects stream with its line number and reason). It is the
// module's one position error, located.Error (issue 12 item 6): Line is the
// 1-based line of the problem in the table file (0 when unknown, e.g. for a
// Raw built by hand); Column is the 1-based column on that line counted in
// runes (0 when unknown); Field names the table column when the problem is
// one column ("" otherwise); Reason says what is wrong in words. File and
// Unit stay empty, so the text is "line 12, column 5: named_entities: want
// array of strings or null, got number", leaving out the parts that are
// unknown.
type RowError = located.Error

// asRowError returns err as a *RowError, wrapping any other error with the
// row's line.
func asRowError(raw Raw, err error) *RowError {
	var re *RowError
	if errors.As(err, &re) {
		return re
	}
	return &RowError{Line: raw.Line, Reason: err.Error()}
}

// firstInvalidUTF8 returns the index of the first byte of b that is not part
// of a valid UTF-8 sequence, or -1.
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// advancePos moves the position (line, col) over text, where col is the
// 1-based column of the next rune: a newline starts a new line, every other
// rune (or invalid byte) moves one column.
func advancePos(line, col int, text []byte) (int, int) {
	last := bytes.LastIndexByte(text, '\n')
	if last < 0 {
		return line, col + utf8.RuneCount(text)
	}
	return line + bytes.Count(text[:last+1], []byte{'\n'}), 1 + utf8.RuneCount(text[last+1:])
}
