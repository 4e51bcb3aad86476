// Package located is the module's one position-carrying error (issue 12 item
// 6; the model is go/scanner's Error and esbuild's one message type): where
// in an input something is wrong — file, line, column, field — and what.
// Parsers return a *Error (or a type alias of it), and callers that need the
// position read it with errors.As or As instead of parsing the message.
//
// Users: evident/persona/evalrun (gold lines), evident/crystal/report
// (references and predictions), and as type aliases of Error
// persona/ingest.RowError, persona/cardfile.Error, arc/frame.ParseError and
// arc/session.ParseError.
//
// It must not import anything of the module; stdlib only.
package located

import (
	"errors"
	"strconv"
)

// Error is a problem at a place in an input. Unknown parts are zero: File
// "" (the input has no name, or the caller adds it), Line 0 (the problem
// concerns the whole input), Column 0, Field "".
type Error struct {
	// File names the input ("refs.jsonl", a path).
	File string
	// Line is 1-based; Column is 1-based on that line, counted in runes.
	Line, Column int
	// Unit names what the lines are when there is no File ("gold" gives
	// "gold line 7: …"); "" gives "line 7: …".
	Unit string
	// Field names the column or key the problem is in.
	Field string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying error, if any (Unwrap); a package's sentinel
	// (crystal/report.ErrInput) goes here so errors.Is still finds it.
	Err error
}

// Error formats e. With a File it is the compiler form
// "file:line:col: field: reason"; without one "unit line N, column C: field:
// reason" — the form persona/ingest and evalrun have always written. Unknown
// parts are left out with their separators.
func (e *Error) Error() string {
	b := make([]byte, 0, 32+len(e.File)+len(e.Field)+len(e.Reason))
	switch {
	case e.File != "":
		b = append(b, e.File...)
		if e.Line > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(e.Line), 10)
			if e.Column > 0 {
				b = append(b, ':')
				b = strconv.AppendInt(b, int64(e.Column), 10)
			}
		}
		b = append(b, ": "...)
	case e.Line > 0:
		if e.Unit != "" {
			b = append(b, e.Unit...)
			b = append(b, ' ')
		}
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(e.Line), 10)
		if e.Column > 0 {
			b = append(b, ", column "...)
			b = strconv.AppendInt(b, int64(e.Column), 10)
		}
		b = append(b, ": "...)
	}
	if e.Field != "" {
		b = append(b, e.Field...)
		b = append(b, ": "...)
	}
	b = append(b, e.Reason...)
	return string(b)
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// As returns the first *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Line returns the line of the first *Error in err's chain, 0 when there is
// none or its line is unknown: the test a rejects stream needs to tell a
// located reason from one about the whole input.
func Line(err error) int {
	if e, ok := As(err); ok {
		return e.Line
	}
	return 0
}
