package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"evident/persona/cardfile"
)

// Source is one input table that can be read more than once: the judge
// reads its chat_turn table twice (persona/batch, "Why two passes"), so each
// Open starts again at the first row. A file on disk (File), any re-openable
// stream (NewTable) and a stored dataset (the store adapter's sources) are
// Sources. Implementations are used from one goroutine per RowReader.
type Source interface {
	// Name names the table in messages and rejects (a file path, "dataset 3
	// chat_turn", …).
	Name() string
	// Open starts a read from the table's first row. The error is fatal (the
	// table cannot be read at all) and should name the table.
	Open() (RowReader, error)
}

// RowReader hands out a table's rows in chunks, so that a pipeline pays one
// call per chunk, not per row.
type RowReader interface {
	// ReadRows appends rows to dst and returns it: up to maxRows rows, and
	// no more once the appended rows' text (Size) reaches maxBytes; at least
	// one row when any is left. At the end of the table it returns io.EOF,
	// with the last rows or with none. Any other error is fatal for the
	// table; the rows appended before it are good. A row that is malformed
	// on its own is a Raw with Err, never an error.
	ReadRows(dst []Raw, maxRows, maxBytes int) ([]Raw, error)
	// Close releases what Open took.
	Close() error
}

// CardSource is a Source that may be one Character Card V2/V3 file instead
// of a character_card table (issue 3): a .png or .charx, or a .json whose
// first non-space character is '{' (a card object, where a table would be an
// array). Table implements it; persona/batch.LoadCards asks for it.
type CardSource interface {
	Source
	// CardFile reads the source as a card file when it is one: ok false
	// (and no error) when it is a table. A file that looks like a card but
	// is not a usable one is an error naming it.
	CardFile() (f *cardfile.File, ok bool, err error)
}

// Size is the size of a row's text in bytes, the measure of
// RowReader.ReadRows's maxBytes.
func Size(r *Raw) int {
	n := len(r.JSON)
	for _, c := range r.CSV {
		n += len(c)
	}
	return n
}

// ReadRows implements RowReader's chunked read over Next: rows are appended
// until maxRows, or until their text reaches maxBytes; io.EOF at the end.
func (r *Rows) ReadRows(dst []Raw, maxRows, maxBytes int) ([]Raw, error) {
	for n, size := 0, 0; n < maxRows && size < maxBytes; n++ {
		raw, err := r.Next()
		if err != nil {
			return dst, err
		}
		dst = append(dst, raw)
		size += Size(&raw)
	}
	return dst, nil
}

// Table is a table read from a stream that can be opened again: a file
// (File), an embedded file, an upload held in memory. It is a Source and a
// CardSource.
type Table struct {
	name   string
	format Format
	open   func() (io.ReadCloser, error)
}

// NewTable returns the table named name in format f whose bytes open
// returns (called once per read).
func NewTable(name string, f Format, open func() (io.ReadCloser, error)) *Table {
	return &Table{name: name, format: f, open: open}
}

// File returns the table in the file at path; the format comes from the
// extension (FormatOf, an error naming the file for an unknown one). The
// file is not opened yet.
func File(path string) (*Table, error) {
	f, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	return NewTable(path, f, func() (io.ReadCloser, error) { return os.Open(path) }), nil
}

// Name implements Source.
func (t *Table) Name() string { return t.name }

// Format is the table's format.
func (t *Table) Format() Format { return t.format }

// Open implements Source: the stream cut into rows by NewRows. Errors name
// the table.
func (t *Table) Open() (RowReader, error) {
	rc, err := t.open()
	if err != nil {
		return nil, err
	}
	rows, err := NewRows(rc, t.format)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	return &tableReader{rows: rows, rc: rc, name: t.name}, nil
}

// OpenBytes opens the table's bytes as they are (a verdict file read line by
// line, a card file).
func (t *Table) OpenBytes() (io.ReadCloser, error) { return t.open() }

type tableReader struct {
	rows *Rows
	rc   io.ReadCloser
	name string
}

func (r *tableReader) ReadRows(dst []Raw, maxRows, maxBytes int) ([]Raw, error) {
	dst, err := r.rows.ReadRows(dst, maxRows, maxBytes)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", r.name, err)
	}
	return dst, err
}

func (r *tableReader) Close() error { return r.rc.Close() }

// MaxCardFile bounds how much of a character card file is read (PNG cards
// carry an image; 64 MiB is far above real ones).
const MaxCardFile = 64 << 20

// CardFile implements CardSource: a CardFile-format table is always read as
// a card; a JSONArray one is when its first non-space byte (after a BOM) is
// '{'. The read is capped at MaxCardFile; errors name the table.
func (t *Table) CardFile() (*cardfile.File, bool, error) {
	if t.format != CardFile && t.format != JSONArray {
		return nil, false, nil
	}
	rc, err := t.open()
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	br := bufio.NewReader(io.LimitReader(rc, MaxCardFile+1))
	if t.format == JSONArray {
		b, _ := br.Peek(512)
		b = bytes.TrimLeft(bytes.TrimPrefix(b, utf8BOM), " \t\r\n")
		if len(b) == 0 || b[0] != '{' {
			return nil, false, nil
		}
	}
	b, err := io.ReadAll(br)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", t.name, err)
	}
	if len(b) > MaxCardFile {
		return nil, false, fmt.Errorf("%s: character card file larger than %d MiB", t.name, MaxCardFile>>20)
	}
	f, err := cardfile.Read(t.name, b)
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}
