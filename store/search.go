package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"modernc.org/sqlite"
)

// Search over a run's summary and reply_text (issue 13 item 1; Filter.Text).
//
// The index is verdict_fts (migration 0005): FTS5 with the trigram
// tokenizer, contentless and detail=none, holding each verdict row's two
// texts in NFC under the row's rowid. detail=none keeps no positions, so a
// query is turned into an AND of trigrams (ftsQuery) that finds candidates,
// and every candidate is checked on its own text by evident_contains (NFC
// substring, ASCII case folded) — the index narrows, the check decides, so
// the answer is the same as the scan's. A query of one or two characters has
// no trigram of its own: on a run indexed with indexPad after each text
// (migration 0010; every run this version writes) its candidates are the
// rows of the indexed trigrams that begin with it (shortMatch, at most
// maxShortTerms of them, listed from verdict_fts_vocab), so 먹쇠 finds
// 먹쇠가 and a reply ending in 먹쇠 alike, checked as above. Such a query
// with more trigrams than that, or whose trigrams are common enough that
// reading rows is cheaper (shortScan: 다 is in nearly every row, and
// collecting its candidates took 1 s per query at 100k turns while the rows
// themselves fill a page at once), a cased letter
// beyond ASCII, a run indexed before 0010, or any query on a run whose
// index is not complete, is answered by evident_contains over the run's
// rows (a read of the filtered rows; a page of a common syllable fills
// within its first rows).

// containsFunc is the SQL function the search registers with the driver:
// evident_contains(summary, reply_text, query) is 1 when the NFC form of
// either text contains query (already NFC), ASCII letters folded. The texts
// may come as BLOBs (searchClause casts them): SQLite hands a function a
// TEXT value only up to its first NUL.
const containsFunc = "evident_contains"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(containsFunc, 3, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		q, _ := args[2].(string)
		for _, a := range args[:2] {
			var s string
			switch v := a.(type) {
			case string:
				s = v
			case []byte: // CAST(text AS BLOB): every byte, a NUL's followers too
				s = string(v)
			default:
				continue
			}
			if containsFolded(normalizeText(s), q) {
				return int64(1), nil
			}
		}
		return int64(0), nil
	})
}

// normalizeText is s in NFC (s itself when it already is), bytes that are
// not UTF-8 replaced by U+FFFD.
func normalizeText(s string) string {
	if nfcFast(s) {
		return s
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if norm.NFC.IsNormalString(s) {
		return s
	}
	return norm.NFC.String(s)
}

// nfcFast reports whether s is valid UTF-8 made only of nfcStable runes,
// the usual text of a Korean log: such text is NFC (none of those runes
// decomposes, has a combining class or composes with a neighbour; conjoining
// jamo and combining marks are outside every range), so it is answered
// without the normalizer's tables, which cost about a tenth of indexing a
// run. Anything else returns false and is checked by norm.NFC.
func nfcFast(s string) bool {
	// See nfcStable; TestNFCFastPath checks every rune of its ranges.
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		if !nfcStable(r) {
			return false
		}
		i += n
	}
	return true
}

// plainText reports whether s is valid UTF-8, NFC (nfcFast) and holds no
// ASCII capital: then normalizeText and asciiLower leave it as it is, and
// containsFolded(normalizeText(s), q) is strings.Contains(s, q) — what
// SQLite's instr tests on the stored bytes (a verdict row's text_plain,
// migration 0012; searchClause).
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' || c == 0 { // SQLite's instr stops at a NUL
			return false
		}
	}
	return nfcFast(s)
}

// searchClause is the SQL test that a verdict row's summary or reply_text
// holds the normalised query (normalizeQuery), with its three arguments:
// on a text_plain row the bytes are compared in SQL (instr), on any other
// (older rows, live rows, text that needs normalising) evident_contains
// compares the normalised text. Both give the same answer on a plain row
// (plainText; TestPlainRowsSearchAsEvidentContainsDoes).
func searchClause(q string) (string, []any) {
	return "CASE WHEN text_plain = 1 THEN instr(summary, ?) > 0 OR coalesce(instr(reply_text, ?) > 0, 0) ELSE " +
		containsFunc + "(CAST(summary AS BLOB), CAST(reply_text AS BLOB), ?) END", []any{q, q, q}
}

// normalizeQuery is a search query as compared: NFC, ASCII letters lower.
func normalizeQuery(q string) string { return asciiLower(normalizeText(q)) }

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// nfcStable: runes below U+0300, general punctuation U+2010–U+2027, CJK
// symbols and punctuation U+3000–U+3029 (「」『』。、) and precomposed
// Hangul syllables U+AC00–U+D7A3.
func nfcStable(r rune) bool {
	return r < 0x300 || (0x2010 <= r && r <= 0x2027) || (0x3000 <= r && r <= 0x3029) || (0xAC00 <= r && r <= 0xD7A3)
}

// containsFolded reports whether s contains q (q already lower-cased in
// ASCII), comparing ASCII letters case-insensitively.
func containsFolded(s, q string) bool {
	if strings.Contains(s, q) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return strings.Contains(asciiLower(s), q)
		}
	}
	return false
}

// ftsQuery turns a normalised query of at least three characters into an
// FTS5 expression: the AND of trigrams starting every third character, plus
// the last one, each quoted (so a row holding the query holds each). ok is
// false for shorter queries.
func ftsQuery(q string) (string, bool) {
	runes := []rune(q)
	if len(runes) < 3 {
		return "", false
	}
	var starts []int
	for i := 0; i+3 <= len(runes); i += 3 {
		starts = append(starts, i)
	}
	if last := len(runes) - 3; starts[len(starts)-1] != last {
		starts = append(starts, last)
	}
	parts := make([]string, len(starts))
	for i, s := range starts {
		parts[i] = `"` + strings.ReplaceAll(string(runes[s:s+3]), `"`, `""`) + `"`
	}
	return strings.Join(parts, " AND "), true
}

// TextIndexed reports whether every row of the run is in a search index
// this DB reads (RunWriter.Commit or IndexRunText finished, and for a run
// indexed in the sidecar, the sidecar is this store's: side.go).
func (db *DB) TextIndexed(ctx context.Context, runID int64) (bool, error) {
	ix, err := db.textIndex(ctx, runID)
	return ix.indexed, err
}

// runIndex is where a run's search index is and how it was written.
type runIndex struct {
	indexed bool    // every row is in it, and this DB reads it
	padded  bool    // indexed with indexPad, so short queries can use it
	pool    *sql.DB // reads it: the store, or the pool attaching the sidecar
	schema  string  // its schema in pool's connections: "main" or "search"
}

// textIndex tells where the run's index is (runIndex); not indexed when
// the run has none yet or it is in a sidecar this DB cannot read.
func (db *DB) textIndex(ctx context.Context, runID int64) (runIndex, error) {
	var at sql.NullString
	var padded bool
	var place string
	err := db.sql.QueryRowContext(ctx, "SELECT indexed_at, padded, place FROM run_search WHERE run_id = ?", runID).Scan(&at, &padded, &place)
	if errors.Is(err, sql.ErrNoRows) {
		return runIndex{pool: db.sql, schema: "main"}, nil
	}
	if err != nil {
		return runIndex{}, fmt.Errorf("store: search index of run %d: %w", runID, err)
	}
	pool, schema, ok := db.searchPool(place)
	if !ok {
		return runIndex{pool: db.sql, schema: "main"}, nil
	}
	return runIndex{indexed: at.Valid, padded: padded && at.Valid, pool: pool, schema: schema}, nil
}

// indexPad follows every non-empty text in the index (migration 0010): with
// it, each character of a text starts a trigram, so a query of one or two
// characters is a prefix of the trigrams of its occurrences. U+E000 is a
// private-use character: in a text it only adds candidates, which the check
// on the row's own text removes.
const indexPad = "\uE000\uE000"

// indexText is a text as the index holds it: NFC, then indexPad.
func indexText(s string) string {
	if s == "" {
		return ""
	}
	// The tokenizer stops at a NUL: index what follows one too (the
	// candidates are checked on their own text, NULs and all).
	return strings.ReplaceAll(normalizeText(s), "\x00", " ") + indexPad
}

// foldsBeyondASCII reports whether q has a letter outside ASCII with case.
func foldsBeyondASCII(q string) bool {
	for _, r := range q {
		if r >= utf8.RuneSelf && (unicode.ToLower(r) != r || unicode.ToUpper(r) != r || unicode.ToTitle(r) != r) {
			return true
		}
	}
	return false
}

// maxShortTerms caps the trigrams a short query may expand to; a query
// with more (a very common syllable) reads the rows instead, where a page
// fills within its first rows.
const maxShortTerms = 256

// shortScan reports whether a short query whose trigrams are in docs
// indexed rows (the sum of verdict_fts_vocab's doc counts; every run's rows)
// is cheaper answered by reading rows in run order than through the index,
// for a read that needs the first need matches (a page: its rows; a count:
// SearchCountCap). The index reads its candidates first, about docs
// postings; reading rows finds need matches in about need / share rows,
// where share = docs / indexed rows is how common the query is. So rows win
// when docs² > need × indexed rows. On a 100k-turn run in a 600k-row store:
// a count of 다 (1.4M postings) or 요 (608k) reads rows, one of 등대 (50k)
// or 숲 (10k) the index; a page of 3 reads rows for all four. The estimate
// assumes matches spread over the store's runs: a syllable common in
// another run only reads this run's rows to its end.
func (db *DB) shortScan(ctx context.Context, docs, need int) (bool, error) {
	var rows sql.NullInt64
	if err := db.sql.QueryRowContext(ctx, "SELECT max(rowid) FROM verdict").Scan(&rows); err != nil {
		return false, fmt.Errorf("store: search: %w", err)
	}
	return float64(docs)*float64(docs) > float64(max(need, 1))*float64(rows.Int64), nil
}

// shortMatch returns the FTS5 expression for a normalised query of one or
// two characters on a padded index: the OR of the indexed trigrams that
// begin with it, read from verdict_fts_vocab by a range of terms (every
// run's, so some candidates are other runs' rows; run_id removes them). ok
// is false when the index cannot serve the query: more than maxShortTerms
// trigrams, or a letter the trigram tokenizer folds other than ASCII (it
// folds case beyond ASCII; the check folds ASCII only). none reports that
// no indexed trigram begins with q: nothing matches.
func (db *DB) shortMatch(ctx context.Context, ix runIndex, q string, need int) (m string, none, ok bool, err error) {
	if foldsBeyondASCII(q) {
		return "", false, false, nil
	}
	rows, err := ix.pool.QueryContext(ctx, "SELECT term, doc FROM "+ix.schema+".verdict_fts_vocab WHERE term >= ? AND term <= ? LIMIT ?",
		q, q+"\U0010FFFF\U0010FFFF", maxShortTerms+1)
	if err != nil {
		return "", false, false, fmt.Errorf("store: search %q: %w", q, err)
	}
	defer rows.Close()
	var parts []string
	docs := 0
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return "", false, false, fmt.Errorf("store: search %q: %w", q, err)
		}
		if !strings.HasPrefix(t, q) {
			continue
		}
		parts = append(parts, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		docs += n
	}
	if err := rows.Err(); err != nil {
		return "", false, false, fmt.Errorf("store: search %q: %w", q, err)
	}
	if len(parts) > maxShortTerms {
		return "", false, false, nil
	}
	if scan, err := db.shortScan(ctx, docs, need); err != nil || scan {
		return "", false, false, err
	}
	if len(parts) == 0 {
		return "", true, true, nil
	}
	return strings.Join(parts, " OR "), false, true, nil
}

// IndexBatch is how many rows IndexRunText writes per transaction, so other
// writers (a review decision) wait at most one batch.
const IndexBatch = 5000

// IndexRunText puts the committed run's summaries and replies (NFC) into the
// search index, IndexBatch rows per transaction, and marks the run indexed
// when all are in. Progress is stored with each batch, so a call after an
// interrupted one (a killed process, a cancelled context) goes on where it
// stopped; a call on an indexed run does nothing. A run indexed anew goes
// into the sidecar of a file store (side.go); one begun in the store's own
// index before migration 0011 is finished there. Every run a file store
// commits is indexed so, after Commit (RunWriter: the run is listed and
// every page works before its index is written; its searches read rows
// until then). One indexer per run at a time: the call holds the lock file
// PATH-index-N.lock while it writes, and a call that finds it held returns
// ErrIndexBusy at once. ErrNotFound when the run does not exist or is not
// committed; ErrReadOnly on a DB from OpenReadOnly. A live run (IsLiveRun)
// is not indexed: its rows keep coming, so its searches read them.
func (db *DB) IndexRunText(ctx context.Context, runID int64) error {
	if _, err := db.Run(ctx, runID); err != nil {
		return err
	}
	if live, err := db.IsLiveRun(ctx, runID); err != nil || live {
		return err // a live run grows: its searches read its rows
	}
	if db.readOnly {
		return fmt.Errorf("%w: %s", ErrReadOnly, db.path)
	}
	lk, ok, err := db.tryLock("index", runID, true)
	if err != nil {
		return fmt.Errorf("store: search index of run %d: %w", runID, err)
	}
	if !ok {
		return fmt.Errorf("%w: run %d", ErrIndexBusy, runID)
	}
	defer lk.release()
	for {
		var next int
		var place string
		done := false
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			var at sql.NullString
			err := tx.QueryRowContext(ctx, "SELECT next_seq, indexed_at, place FROM run_search WHERE run_id = ?", runID).Scan(&next, &at, &place)
			if errors.Is(err, sql.ErrNoRows) {
				next, place = 0, db.indexPlace()
				_, err = tx.ExecContext(ctx, "INSERT INTO run_search (run_id, next_seq, padded, place) VALUES (?, 0, 1, ?)", runID, place)
			}
			done = at.Valid
			return err
		})
		if err != nil {
			return fmt.Errorf("store: search index of run %d: %w", runID, err)
		}
		if done {
			return nil
		}
		if place == "side" && db.side.w == nil {
			return fmt.Errorf("store: search index of run %d: it is kept in %s, which this DB has not opened", runID, SidePath(db.path))
		}
		if done, err = db.indexBatch(ctx, runID, next, place); err != nil {
			return fmt.Errorf("store: search index of run %d: %w", runID, err)
		}
		if done {
			return nil
		}
	}
}

// indexBatch indexes the run's next IndexBatch rows from seq next into the
// index at place and stores the progress; done when the run is complete.
// Into the store's own index, rows and progress share one transaction;
// into the sidecar, the sidecar's transaction commits first (a process
// killed in between indexes that batch again: a repeated entry, which the
// contentless index tolerates).
func (db *DB) indexBatch(ctx context.Context, runID int64, next int, place string) (done bool, err error) {
	read := func(q querier) ([]sideRow, int, error) {
		rows, err := q.QueryContext(ctx, `SELECT rowid, seq, summary, coalesce(reply_text, '') FROM verdict
    WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?`, runID, next, IndexBatch)
		if err != nil {
			return nil, 0, err
		}
		defer rows.Close()
		var batch []sideRow
		last := next - 1
		for rows.Next() {
			var r sideRow
			if err := rows.Scan(&r.rowid, &last, &r.summary, &r.reply); err != nil {
				return nil, 0, err
			}
			batch = append(batch, r)
		}
		return batch, last, rows.Err()
	}
	progress := func(tx *sql.Tx, n, last int) error {
		var stamp any
		if n < IndexBatch {
			stamp, done = db.stamp(), true
		}
		_, err := tx.ExecContext(ctx, "UPDATE run_search SET next_seq = ?, indexed_at = ? WHERE run_id = ?", last+1, stamp, runID)
		return err
	}
	if place == "side" {
		batch, last, err := read(db.sql)
		if err != nil {
			return false, err
		}
		if err := db.insertSide(ctx, batch); err != nil {
			return false, err
		}
		return done, db.inTx(ctx, func(tx *sql.Tx) error { return progress(tx, len(batch), last) })
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		batch, last, err := read(tx)
		if err == nil {
			err = insertIndexRows(ctx, tx, batch)
		}
		if err != nil {
			return err
		}
		return progress(tx, len(batch), last)
	})
	return done, err
}

// IndexPending indexes every committed run whose search index is not
// complete (IndexRunText), oldest first: runs just committed (a file store
// indexes after Commit), the runs of a store whose sidecar was lost
// (side.go) or whose indexing was interrupted. evident serve runs it in
// the background at start and after each upload or re-judge; searches of
// those runs read rows until they are done. Live runs are left out
// (IndexRunText: they grow), and so are runs another indexer is writing
// (ErrIndexBusy): busy counts them (that indexer finishes them, or, when it
// dies first, a later IndexPending). It stops at ctx's end. each, when
// set, is called before the i-th (0-based) of the n runs is indexed, and
// once more with i = n when all are done (indexed or busy).
func (db *DB) IndexPending(ctx context.Context, each func(runID int64, i, n int)) (busy int, err error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT r.id FROM run r LEFT JOIN run_search s ON s.run_id = r.id
    WHERE r.finished_at IS NOT NULL AND s.indexed_at IS NULL AND r.id NOT IN (SELECT run_id FROM live_run) ORDER BY r.id`)
	if err != nil {
		return 0, fmt.Errorf("store: runs to index: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: runs to index: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: runs to index: %w", err)
	}
	for i, id := range ids {
		if each != nil {
			each(id, i, len(ids))
		}
		switch err := db.IndexRunText(ctx, id); {
		case errors.Is(err, ErrIndexBusy):
			busy++
		case err != nil:
			return busy, err
		}
	}
	if each != nil && len(ids) > 0 {
		each(0, len(ids), len(ids))
	}
	return busy, nil
}
