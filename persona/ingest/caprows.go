package ingest

import "fmt"

// CapRows is src with every row whose text (Size) is over max bytes turned
// into a rejected row (a Raw with Err at its line) before anyone decodes
// it: what a run holds of one row is many times the row (the screen's
// upload of one 55 MB row took the server from 93 MB to 1.5 GB, issue 13),
// so a shared server judges rows up to a cap, as the live API does, while
// `evident judge` takes rows of any length. reason says what to do instead
// and is appended to the message. Both passes of a run read through it, so
// they agree on which rows are left out.
func CapRows(src Source, max int, reason string) Source {
	return &cappedSource{Source: src, max: max, reason: reason}
}

type cappedSource struct {
	Source
	max    int
	reason string
}

func (c *cappedSource) Open() (RowReader, error) {
	r, err := c.Source.Open()
	if err != nil {
		return nil, err
	}
	return &cappedReader{RowReader: r, c: c}, nil
}

type cappedReader struct {
	RowReader
	c *cappedSource
}

func (r *cappedReader) ReadRows(dst []Raw, maxRows, maxBytes int) ([]Raw, error) {
	n := len(dst)
	dst, err := r.RowReader.ReadRows(dst, maxRows, maxBytes)
	for i := n; i < len(dst); i++ {
		if raw := &dst[i]; raw.Err == nil {
			if size := Size(raw); size > r.c.max {
				*raw = Raw{Line: raw.Line, Err: &RowError{Line: raw.Line, Column: 1,
					Reason: fmt.Sprintf("row of %d bytes, over the cap of %d: %s", size, r.c.max, r.c.reason)}}
			}
		}
	}
	return dst, err
}
