package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"evident/persona"
	"evident/persona/ingest"
)

// The tables of a stored dataset, and the records of a stored run, as
// ingest.Sources (issue 12: the pipeline takes sources, not files). Rows come
// out as JSON Lines rows, the encoding/json form of persona.Turn, Card and
// LexiconRow without HTML escaping (and a record as stored), numbered from
// line 1, so the judge decodes and rejects them exactly as it would the same
// JSON Lines file. Turns and records are read a page at a time by primary
// key: no cursor stays open between reads (an in-memory database has no WAL,
// and a run's writer may need the lock between pages) and nothing is
// written to a file.

// The three table names of a dataset (DatasetTable).
const (
	TableTurns   = "chat_turn"
	TableCards   = "character_card"
	TableLexicon = "topic_lexicon"
)

// Source is a stored table (DatasetTable) or a run's records (RunRecords) as
// an ingest.Source. Safe for concurrent use; each Open reads on its own.
type Source struct {
	db    *DB
	ctx   context.Context
	q     querier
	name  string
	page  func(ctx context.Context, after int64, limit int, emit func(seq int64, v any, raw []byte) error) error
	mu    sync.Mutex
	sum   string
	valid bool
}

// DatasetTable returns table (TableTurns, TableCards or TableLexicon) of a
// stored dataset as a Source named "dataset N TABLE". Reads use ctx. Cards
// are read as they are now (UpdateCard applied). ErrNotFound when the
// dataset does not exist; ErrInvalid for another table name.
func (db *DB) DatasetTable(ctx context.Context, datasetID int64, table string) (*Source, error) {
	if _, err := db.Dataset(ctx, datasetID); err != nil {
		return nil, err
	}
	return db.datasetTable(ctx, datasetID, table)
}

// datasetTable is DatasetTable without the check that the dataset is
// complete (Importer.CommitWithRun reads its own written rows).
func (db *DB) datasetTable(ctx context.Context, datasetID int64, table string) (*Source, error) {
	s := &Source{db: db, ctx: ctx, q: db.sql, name: fmt.Sprintf("dataset %d %s", datasetID, table)}
	switch table {
	case TableTurns:
		s.page = s.turnPage(datasetID)
	case TableCards, TableLexicon:
		s.page = func(ctx context.Context, after int64, _ int, emit func(int64, any, []byte) error) error {
			var all []any // the whole (small) table, each page from after on
			if table == TableCards {
				cs, err := db.cards(ctx, datasetID)
				if err != nil {
					return err
				}
				for i := range cs {
					all = append(all, &cs[i])
				}
			} else {
				ls, err := db.lexicon(ctx, datasetID)
				if err != nil {
					return err
				}
				for i := range ls {
					all = append(all, &ls[i])
				}
			}
			for i, v := range all {
				if int64(i) <= after {
					continue
				}
				if err := emit(int64(i), v, nil); err != nil {
					return err
				}
			}
			return nil
		}
	default:
		return nil, fmt.Errorf("%w: dataset table %q", ErrInvalid, table)
	}
	return s, nil
}

// querier is what a Source reads through: the database, or the transaction
// of the run that is being written (RunWriter.Turns).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// turnPage reads the chat_turn rows of a dataset after seq, through s.q.
func (s *Source) turnPage(datasetID int64) func(context.Context, int64, int, func(int64, any, []byte) error) error {
	return func(ctx context.Context, after int64, limit int, emit func(int64, any, []byte) error) error {
		rows, err := s.q.QueryContext(ctx, "SELECT seq, "+turnColumns+
			" FROM chat_turn WHERE dataset_id = ? AND seq > ? ORDER BY seq LIMIT ?", datasetID, after, limit)
		if err != nil {
			return fmt.Errorf("store: turns of dataset %d: %w", datasetID, err)
		}
		defer rows.Close()
		for rows.Next() {
			t := new(persona.Turn)
			seq, err := scanTurn(rows, t, true)
			if err != nil {
				return fmt.Errorf("store: turns of dataset %d: %w", datasetID, err)
			}
			if err := emit(seq, t, nil); err != nil {
				return err
			}
		}
		return rows.Err()
	}
}

// Turns returns the chat_turn table of the run's dataset as a Source (see
// DatasetTable) for the judge to read while the run is written. The run
// holds no transaction between its batches (RunWriter), so the Source reads
// through the database like any reader, also on an in-memory database.
// Reads use the run's context. ErrInvalid when the run has no dataset.
func (w *RunWriter) Turns() (*Source, error) {
	if w.meta.DatasetID == 0 {
		return nil, fmt.Errorf("%w: run has no dataset", ErrInvalid)
	}
	s := &Source{db: w.db, ctx: w.ctx, q: w.db.sql, name: fmt.Sprintf("dataset %d %s", w.meta.DatasetID, TableTurns)}
	s.page = s.turnPage(w.meta.DatasetID)
	return s, nil
}

// RunRecords returns the records of a committed run, in run order, as a
// Source named "run N records" (a verdict file for persona/batch.Check).
// ErrNotFound when the run does not exist or is not committed.
func (db *DB) RunRecords(ctx context.Context, runID int64) (*Source, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	s := &Source{db: db, ctx: ctx, name: fmt.Sprintf("run %d records", runID)}
	s.page = func(ctx context.Context, after int64, limit int, emit func(int64, any, []byte) error) error {
		rows, err := db.sql.QueryContext(ctx, "SELECT seq, record FROM verdict WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?", runID, after, limit)
		if err != nil {
			return fmt.Errorf("store: records of run %d: %w", runID, err)
		}
		defer rows.Close()
		for rows.Next() {
			var seq int64
			var rec []byte
			if err := rows.Scan(&seq, &rec); err != nil {
				return fmt.Errorf("store: records of run %d: %w", runID, err)
			}
			if err := emit(seq, nil, rec); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	return s, nil
}

// Name implements ingest.Source.
func (s *Source) Name() string { return s.name }

// Open implements ingest.Source: a read from the first row.
func (s *Source) Open() (ingest.RowReader, error) {
	return &sourceReader{s: s, after: -1, h: sha256.New()}, nil
}

// Fingerprint is the sha256 (hex) of the table as JSON Lines (each row's
// JSON and "\n"), known once a read has reached the end; ok false before.
// RunMeta.Fingerprints holds it.
func (s *Source) Fingerprint() (sum string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum, s.valid
}

// errPageFull stops a page once it holds ReadRows's maxRows rows or maxBytes.
var errPageFull = errors.New("page full")

type sourceReader struct {
	s     *Source
	after int64 // last seq read; -1 before the first
	line  int
	h     hash.Hash
	buf   bytes.Buffer
	enc   *json.Encoder
	eof   bool
}

// ReadRows implements ingest.RowReader: one page query per call.
func (r *sourceReader) ReadRows(dst []ingest.Raw, maxRows, maxBytes int) ([]ingest.Raw, error) {
	if r.eof {
		return dst, io.EOF
	}
	if r.enc == nil {
		r.enc = json.NewEncoder(&r.buf)
		r.enc.SetEscapeHTML(false)
	}
	n, size := 0, 0
	err := r.s.page(r.s.ctx, r.after, maxRows, func(seq int64, v any, raw []byte) error {
		r.after = seq
		var b []byte
		if v != nil {
			r.buf.Reset()
			if err := r.enc.Encode(v); err != nil {
				return fmt.Errorf("%s: encode row: %w", r.s.name, err)
			}
			b = bytes.Clone(bytes.TrimSuffix(r.buf.Bytes(), []byte("\n")))
		} else {
			b = raw
		}
		r.h.Write(b)
		r.h.Write([]byte{'\n'})
		r.line++
		dst = append(dst, ingest.Raw{Line: r.line, JSON: b})
		n++
		if size += len(b); n >= maxRows || size >= maxBytes {
			return errPageFull
		}
		return nil
	})
	if err == errPageFull {
		return dst, nil // the next call reads on from r.after
	}
	if err != nil {
		return dst, err
	}
	// The page ended before it was full: the end of the table.
	r.eof = true
	r.s.mu.Lock()
	r.s.sum, r.s.valid = hex.EncodeToString(r.h.Sum(nil)), true
	r.s.mu.Unlock()
	return dst, io.EOF
}

// Close implements ingest.RowReader.
func (r *sourceReader) Close() error { return nil }

// ReadThrough reads the Source to its end, so that Fingerprint is set;
// for the small tables (cards, lexicon), whose fingerprint a run keeps.
func (s *Source) ReadThrough() error {
	rows, err := s.Open()
	if err != nil {
		return err
	}
	defer rows.Close()
	var buf []ingest.Raw
	for {
		buf, err = rows.ReadRows(buf[:0], 1000, 1<<20)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
