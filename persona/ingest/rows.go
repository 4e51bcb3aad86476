package ingest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Raw is one undecoded row of a table (spec persona.md "Input: three
// tables"), as cut from the stream by [Rows].
//
// Line is the 1-based line of the file where the row starts. Exactly one of
// JSON (the bytes of one JSON object, for JSONL and JSON array tables) or CSV
// (the record's cells, with Header holding the column names that the [Rows]
// read from the header row) is set, unless Err is set instead: Err (always a
// *[RowError]) says why the row itself is malformed (a JSON array element that
// is not an object, a CSV record with the wrong number of cells, a CSV syntax
// error, invalid UTF-8 in a CSV record) while the reader could still find the
// next row. Such a row is a reject, not the end of the run.
//
// Syntax errors and invalid UTF-8 inside a JSON row are found by the Decode
// functions, which run in parallel, not by Rows. JSON and CSV are never
// reused by the Rows: a Raw stays valid after later calls to Next and may be
// handed to another goroutine. Header is shared by every row of one Rows and
// must not be modified.
//
// A Raw built by hand (tests, other readers) decodes the same way; only the
// error columns need the positions that Rows records.
type Raw struct {
	Line   int
	JSON   []byte
	CSV    []string
	Header []string
	Err    error

	col   int       // JSON array: 1-based column of JSON[0] on Line (0 means 1)
	cells []cellPos // CSV: where each cell starts; nil when unknown
}

// cellPos is where one CSV cell starts: line and 1-based rune column.
type cellPos struct{ line, col int }

// Rows splits a table stream into [Raw] rows without decoding them (spec
// persona.md "Input: three tables"). It reads the stream once, holding at
// most one row (and one read buffer) in memory, whatever the file size.
//
//   - JSONL: every line is a row; lines may be of any length, may end in
//     "\r\n", and lines holding only spaces, tabs or "\r" are skipped (they are
//     not rows, though they count for line numbers).
//   - JSON array: every element is a row; Line is the line where the element
//     starts. An element that is not an object, or an empty element between
//     commas, is a Raw with Err. Brackets and strings are tracked so that a
//     broken element still ends at the next top-level ',' or ']' and the
//     elements after it are read.
//   - CSV: the first record is the header; every later record is a row. Blank
//     lines and lines holding only white space are skipped.
//
// Next returns io.EOF at the end of the table. Any other error from Next is
// fatal and names the line and column: an I/O error, a file that is not a
// JSON array, an array that is never closed (so no later element can be
// found) or data after the array's closing ']'. After an error Next returns
// the same error again. A Rows is not safe for concurrent use.
type Rows struct {
	f   Format
	err error // sticky io.EOF or fatal error

	// JSONL
	br   *bufio.Reader
	line int // lines read so far

	// JSON array
	arr *arrayReader

	// CSV
	cr       *csv.Reader
	tee      *teeReader
	header   []string
	textLine int // line of the first byte the tee still holds
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// NewRows starts reading a table in format f from r (spec persona.md "Input:
// three tables"). A UTF-8 byte order mark
// at the start of the stream is skipped (it counts for no column). For CSV it
// reads the header row at once: each name is trimmed of spaces and of a BOM,
// and a stream without a header row, a header with no non-empty name, a
// header with a name given twice, or a header that is not valid UTF-8 is an
// error naming the line. An unknown f is an error.
func NewRows(r io.Reader, f Format) (*Rows, error) {
	size := 4096 // the JSON array and CSV readers buffer on their own
	if f == JSONL {
		size = 64 << 10 // fewer pieces to join for long lines
	}
	br := bufio.NewReaderSize(r, size)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	rows := &Rows{f: f}
	switch f {
	case JSONL:
		rows.br = br
	case JSONArray:
		rows.arr = newArrayReader(br)
	case CSV:
		if err := rows.startCSV(br); err != nil {
			return nil, err
		}
	case CardFile:
		return nil, fmt.Errorf("ingest: a character card file is one card, not a table (read it with persona/batch.LoadCards or persona/cardfile)")
	default:
		return nil, fmt.Errorf("ingest: unknown table format %v", f)
	}
	return rows, nil
}

// Next returns the next row (spec persona.md "Input: three tables"). See
// [Rows] for what counts as a row and which errors are fatal; io.EOF marks
// the end. A row that is malformed on its own comes back as a Raw with Err
// and a nil error, so that the caller can reject it (spec persona.md
// "Output") and call Next again.
func (r *Rows) Next() (Raw, error) {
	if r.err != nil {
		return Raw{}, r.err
	}
	var raw Raw
	var err error
	switch r.f {
	case JSONL:
		raw, err = r.nextJSONL()
	case JSONArray:
		raw, err = r.arr.next()
	case CSV:
		raw, err = r.nextCSV()
	}
	if err != nil {
		r.err = err
	}
	return raw, err
}

// nextJSONL returns the next non-blank line.
func (r *Rows) nextJSONL() (Raw, error) {
	for {
		b, err := r.br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return Raw{}, fmt.Errorf("line %d, column %d: read error: %w", r.line+1, 1+utf8.RuneCount(b), err)
		}
		if len(b) == 0 { // err == io.EOF
			return Raw{}, io.EOF
		}
		r.line++
		if b[len(b)-1] == '\n' {
			b = b[:len(b)-1]
		}
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
		if isBlank(b) {
			continue
		}
		return Raw{Line: r.line, JSON: b}, nil
	}
}

// isBlank reports whether b holds only JSON white space.
func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return false
		}
	}
	return true
}

// teeReader keeps the bytes the CSV reader has read but Rows has not yet
// handed out, so that byte columns can be turned into rune columns.
type teeReader struct {
	r    io.Reader
	buf  []byte
	base int64 // stream offset of buf[0]
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// take returns the held bytes up to stream offset off and forgets them. The
// result is valid until the next Read.
func (t *teeReader) take(off int64) []byte {
	k := int(off - t.base)
	if k > len(t.buf) {
		k = len(t.buf)
	}
	if k < 0 {
		k = 0
	}
	text := t.buf[:k]
	t.buf = t.buf[k:]
	t.base += int64(k)
	return text
}

func (r *Rows) startCSV(br *bufio.Reader) error {
	r.tee = &teeReader{r: br}
	r.cr = csv.NewReader(r.tee)
	r.cr.FieldsPerRecord = -1
	r.cr.LazyQuotes = false
	r.textLine = 1
	for {
		rec, text, startLine, err := r.readCSV()
		if err == io.EOF {
			return errors.New("line 1, column 1: missing CSV header row: the table is empty")
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("line %d, column %d: bad CSV header: %v", pe.Line,
				runeColumn(text, startLine, pe.Line, pe.Column), pe.Err)
		}
		if err != nil {
			return err
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		line, _ := r.cr.FieldPos(0)
		if k := firstInvalidUTF8(text); k >= 0 {
			l, c := advancePos(startLine, 1, text[:k])
			return fmt.Errorf("line %d, column %d: CSV header: invalid UTF-8", l, c)
		}
		header := make([]string, len(rec))
		seen := make(map[string]int, len(rec))
		nonEmpty := false
		for i, h := range rec {
			h = norm.NFC.String(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(h), "\uFEFF")))
			header[i] = h
			if h == "" {
				continue
			}
			nonEmpty = true
			if j, dup := seen[h]; dup {
				l, c := r.cr.FieldPos(i)
				return fmt.Errorf("line %d, column %d: CSV header names column %q twice (cells %d and %d)",
					l, runeColumn(text, startLine, l, c), h, j+1, i+1)
			}
			seen[h] = i
		}
		if !nonEmpty {
			return fmt.Errorf("line %d, column 1: CSV header row is empty", line)
		}
		r.header = header
		return nil
	}
}

// readCSV reads one record and returns it with its source text (which may
// begin with skipped blank lines) and the line that text starts on. A
// non-parse error is returned fatal, with line and column.
func (r *Rows) readCSV() (rec []string, text []byte, startLine int, err error) {
	rec, err = r.cr.Read()
	if err == io.EOF {
		return nil, nil, 0, io.EOF
	}
	var pe *csv.ParseError
	if err != nil && !errors.As(err, &pe) {
		l, c := advancePos(r.textLine, 1, r.tee.buf)
		return nil, nil, 0, fmt.Errorf("line %d, column %d: read error: %w", l, c, err)
	}
	text = r.tee.take(r.cr.InputOffset())
	startLine = r.textLine
	r.textLine += bytes.Count(text, []byte{'\n'})
	return rec, text, startLine, err
}

// nextCSV returns the next non-blank record.
func (r *Rows) nextCSV() (Raw, error) {
	for {
		rec, text, startLine, err := r.readCSV()
		var pe *csv.ParseError
		if errors.As(err, &pe) && pe.Line > pe.StartLine && (errors.Is(pe.Err, csv.ErrQuote) || errors.Is(pe.Err, csv.ErrBareQuote)) {
			// A quote opened on one line and not closed properly swallows
			// every line up to where the reader gave up: those rows cannot
			// be told apart, so one reject would hide many rows. Stop.
			return Raw{}, fmt.Errorf("line %d: a quoted cell that starts on this record is not closed properly (the CSV reader gave up at line %d, column %d: %v); lines %d to %d cannot be split into rows",
				pe.StartLine, pe.Line, runeColumn(text, startLine, pe.Line, pe.Column), pe.Err, pe.StartLine, pe.Line)
		}
		if errors.As(err, &pe) {
			return Raw{Line: pe.StartLine, Err: &RowError{
				Line:   pe.Line,
				Column: runeColumn(text, startLine, pe.Line, pe.Column),
				Reason: "bad CSV: " + pe.Err.Error(),
			}}, nil
		}
		if err != nil {
			return Raw{}, err
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		cells := make([]cellPos, len(rec))
		m := colMapper{text: text, start: startLine}
		for i := range rec {
			l, c := r.cr.FieldPos(i)
			cells[i] = cellPos{l, m.col(l, c)}
		}
		line := cells[0].line
		if k := firstInvalidUTF8(text); k >= 0 {
			l, c := advancePos(startLine, 1, text[:k])
			field := ""
			for i := len(cells) - 1; i >= 0; i-- {
				if cells[i].line < l || cells[i].line == l && cells[i].col <= c {
					if i < len(r.header) {
						field = r.header[i]
					}
					break
				}
			}
			return Raw{Line: line, Err: &RowError{Line: l, Column: c, Field: field, Reason: "invalid UTF-8"}}, nil
		}
		if len(rec) != len(r.header) {
			e := &RowError{Line: line, Reason: fmt.Sprintf("want %d cells as in the header, got %d", len(r.header), len(rec))}
			if len(rec) > len(r.header) {
				e.Line, e.Column = cells[len(r.header)].line, cells[len(r.header)].col
			}
			return Raw{Line: line, Err: e}, nil
		}
		return Raw{Line: line, CSV: rec, Header: r.header, cells: cells}, nil
	}
}

// runeColumn turns the 1-based byte column byteCol on line of text (which
// starts at the beginning of line startLine) into a 1-based rune column. It
// returns 0 when the line is not in text.
func runeColumn(text []byte, startLine, line, byteCol int) int {
	m := colMapper{text: text, start: startLine}
	return m.col(line, byteCol)
}

// colMapper turns byte columns into rune columns within one record's text.
// Queries in increasing order (the cells of a record) cost linear time in
// all; a query behind the last one starts again from the top.
type colMapper struct {
	text  []byte
	start int // line of text[0]
	line  int // line of text[ls]; 0 before the first query
	ls    int // offset of the start of line
	bc    int // bytes of that line counted so far
	rc    int // runes in text[ls : ls+bc]
}

func (m *colMapper) col(line, byteCol int) int {
	if byteCol < 1 || line < m.start {
		return 0
	}
	if m.line == 0 || line < m.line || line == m.line && byteCol-1 < m.bc {
		m.line, m.ls, m.bc, m.rc = m.start, 0, 0, 0
	}
	for m.line < line {
		i := bytes.IndexByte(m.text[m.ls:], '\n')
		if i < 0 {
			return 0
		}
		m.line, m.ls, m.bc, m.rc = m.line+1, m.ls+i+1, 0, 0
	}
	end := m.ls + byteCol - 1
	if end > len(m.text) {
		end = len(m.text)
	}
	if end > m.ls+m.bc {
		m.rc += utf8.RuneCount(m.text[m.ls+m.bc : end])
		m.bc = end - m.ls
	}
	return 1 + m.rc
}
