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
	"time"

	"evident/persona"
)

// DatasetInfo describes one committed import of the three input tables.
type DatasetInfo struct {
	ID         int64
	Name       string // free text given at import (e.g. the turns file name)
	ImportedAt time.Time
	Turns      int // chat_turn rows
	Cards      int // character_card rows
	Lexicon    int // topic_lexicon rows
}

// Importer writes one dataset in bounded transactions (issue 13 item 2): the
// rows it is given are held in a batch and written in one short write
// transaction once DefaultBatchRows rows (or DefaultBatchBytes) are held, so
// other writers — a review decision, gold labels, another import — take
// turns with it instead of waiting for the whole import. The dataset row is
// committed at BeginImport marked incomplete, and marked complete in the
// transaction of the last batch (Commit): until then no reader sees the
// dataset or any of its rows. Rollback, a failed Add or Commit delete what
// was written; a cancelled context ends the import as a failed Add does;
// a killed process leaves its batches invisible until the next Open,
// BeginImport or BeginRun removes them (package doc, "Transactions and
// safety"). Memory holds one batch at most, whatever the import's size.
// Not safe for concurrent use.
type Importer struct {
	db   *DB
	ctx  context.Context
	id   int64
	lk   *writerLock
	b    *writeBatch
	err  error // first failure; the import can then only roll back
	done bool

	turns, cards, lexicon int

	// committed: Commit succeeded (a run begun with BeginRun may commit).
	committed bool
	// turnSum hashes the chat_turn rows as DatasetTable's Source encodes
	// them (TurnsFingerprint); enc writes into turnBuf.
	turnSum hash.Hash
	turnBuf bytes.Buffer
	turnEnc *json.Encoder
}

// The statements of an import's batch, by pendingRow.stmt.
const (
	importTurn = iota
	importCard
	importLex
)

var importQueries = []string{
	importTurn: `INSERT INTO chat_turn (dataset_id, seq, turn_id, session_id,
    character_id, model_id, user_message, reply_text, first_person, named_entities, honorific_level,
    user_asked_recall, created_at, prompt_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	importCard: `INSERT INTO character_card (dataset_id, seq, character_id, name,
    honorific_rule, first_person, canon_entities, forbidden_topics, entity_roles, description, public,
    first_person_forms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	importLex: "INSERT INTO topic_lexicon (dataset_id, seq, term, topic) VALUES (?, ?, ?, ?)",
}

var importErrs = []func(p *pendingRow, err error) error{
	importTurn: func(p *pendingRow, err error) error {
		return fmt.Errorf("store: import turn %q (row %d): %w", p.id, p.n, err)
	},
	importCard: func(p *pendingRow, err error) error { return fmt.Errorf("store: import card %q: %w", p.id, err) },
	importLex:  func(p *pendingRow, err error) error { return fmt.Errorf("store: import lexicon row %d: %w", p.n, err) },
}

// BeginImport starts a dataset named name (free text, may be empty). The
// dataset's id is known at once (ID) but exists for readers only after
// Commit. It first removes what dead writers left (reclaim). Fails with
// ErrReadOnly on a DB from OpenReadOnly.
func (db *DB) BeginImport(ctx context.Context, name string) (*Importer, error) {
	if db.readOnly {
		return nil, fmt.Errorf("store: begin import: %w: %s", ErrReadOnly, db.path)
	}
	if err := db.reclaim(ctx); err != nil {
		return nil, fmt.Errorf("store: begin import: %w", err)
	}
	im := &Importer{db: db, ctx: ctx, turnSum: sha256.New()}
	im.turnEnc = json.NewEncoder(&im.turnBuf)
	im.turnEnc.SetEscapeHTML(false)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO dataset (name, imported_at, complete) VALUES (?, ?, 0)", name, db.stamp())
		if err != nil {
			return err
		}
		if im.id, err = res.LastInsertId(); err != nil {
			return err
		}
		im.lk, err = db.acquireWriter("import", im.id)
		return err
	})
	if err != nil {
		im.lk.release()
		return nil, fmt.Errorf("store: begin import: %w", err)
	}
	im.b = &writeBatch{db: db, ctx: ctx, queries: importQueries, errf: importErrs, behind: true}
	db.bulkConn() // until Commit or Rollback
	return im, nil
}

// ID is the dataset id this import will have once committed.
func (im *Importer) ID() int64 { return im.id }

// check refuses work after the import ended or failed.
func (im *Importer) check() error {
	if im.done {
		return ErrClosed
	}
	return im.err
}

// fail records the first error; later Adds and Commit return it and Commit
// rolls back, so a dataset missing a row never commits.
func (im *Importer) fail(err error) error {
	if im.err == nil {
		im.err = err
	}
	return err
}

// add queues one row; a failed batch write ends the import.
func (im *Importer) add(p pendingRow, size int, key string, dup func() error) error {
	if err := im.b.add(p, size, key, dup); err != nil {
		return im.fail(err)
	}
	return nil
}

// AddTurn appends one chat_turn row (input order is the order of calls).
// The row is copied: t may be reused. A turn_id already in this dataset
// fails with a UNIQUE error — at this call when the first one is in the
// same batch, else when the batch is written (a later Add, or Commit) —
// and so does every later call: the import can then only be rolled back.
func (im *Importer) AddTurn(t *persona.Turn) error {
	if err := im.check(); err != nil {
		return err
	}
	var ents any
	size := len(t.TurnID) + len(t.SessionID) + len(t.CharacterID) + len(t.ModelID) + len(t.CreatedAt) + len(t.PromptID) + 64
	if t.NamedEntities != nil {
		b, err := json.Marshal(t.NamedEntities)
		if err != nil {
			return im.fail(fmt.Errorf("store: turn %q: %w", t.TurnID, err))
		}
		ents = string(b)
		size += len(b)
	}
	for _, p := range []*string{t.UserMessage, t.ReplyText, t.FirstPerson, t.HonorificLevel} {
		if p != nil {
			size += len(*p)
		}
	}
	row := pendingRow{stmt: importTurn, id: t.TurnID, n: im.turns + 1, args: []any{im.id, im.turns, t.TurnID, t.SessionID,
		t.CharacterID, t.ModelID, nullString(t.UserMessage), nullString(t.ReplyText), nullString(t.FirstPerson), ents,
		nullString(t.HonorificLevel), boolInt(t.UserAskedRecall), t.CreatedAt, t.PromptID}}
	err := im.add(row, size, "turn "+t.TurnID, func() error {
		return fmt.Errorf("store: import turn %q (row %d): UNIQUE: turn_id already in this dataset", t.TurnID, im.turns+1)
	})
	if err != nil {
		return err
	}
	im.turnBuf.Reset()
	if err := im.turnEnc.Encode(t); err != nil {
		return im.fail(fmt.Errorf("store: turn %q: %w", t.TurnID, err))
	}
	im.turnSum.Write(im.turnBuf.Bytes()) // the row's JSON and its "\n"
	im.turns++
	return nil
}

// TurnsFingerprint is the sha256 (hex) of the chat_turn rows added so far
// as JSON Lines, equal to the Fingerprint of the dataset's TableTurns
// Source once it is read to the end (the same encoding of the same rows):
// a run judged while its dataset is imported (BeginRun) stores it without
// reading the table back.
func (im *Importer) TurnsFingerprint() string {
	return hex.EncodeToString(im.turnSum.Sum(nil))
}

// AddCard appends one character_card row; a character_id already in this
// dataset fails (UNIQUE) and ends the import as AddTurn's errors do.
func (im *Importer) AddCard(c persona.Card) error {
	if err := im.check(); err != nil {
		return err
	}
	lists, err := cardLists(c)
	if err != nil {
		return im.fail(fmt.Errorf("store: card %q: %w", c.CharacterID, err))
	}
	forms, err := firstPersonForms(c)
	if err != nil {
		return im.fail(fmt.Errorf("store: card %q: %w", c.CharacterID, err))
	}
	size := len(c.CharacterID) + len(c.Name) + len(c.HonorificRule) + len(c.FirstPerson) + len(c.Description) +
		len(lists[0]) + len(lists[1]) + len(lists[2]) + len(forms)
	row := pendingRow{stmt: importCard, id: c.CharacterID, n: im.cards + 1, args: []any{im.id, im.cards, c.CharacterID,
		c.Name, c.HonorificRule, c.FirstPerson, lists[0], lists[1], lists[2], c.Description, boolInt(c.Public),
		nullForms(forms)}}
	err = im.add(row, size, "card "+c.CharacterID, func() error {
		return fmt.Errorf("store: import card %q: UNIQUE: character_id already in this dataset", c.CharacterID)
	})
	if err != nil {
		return err
	}
	im.cards++
	return nil
}

// AddLexicon appends one topic_lexicon row; row order is kept.
func (im *Importer) AddLexicon(r persona.LexiconRow) error {
	if err := im.check(); err != nil {
		return err
	}
	row := pendingRow{stmt: importLex, n: im.lexicon + 1, args: []any{im.id, im.lexicon, r.Term, r.Topic}}
	if err := im.add(row, len(r.Term)+len(r.Topic), "", nil); err != nil {
		return err
	}
	im.lexicon++
	return nil
}

// Commit writes the last batch and, in the same transaction, the counts
// and the mark that makes the dataset visible; it returns the dataset's
// id. After a failed Add it rolls back and returns that Add's error
// instead; when the last batch fails it rolls back and returns why.
func (im *Importer) Commit() (int64, error) {
	if im.done {
		return 0, ErrClosed
	}
	if im.err != nil {
		im.Rollback()
		return 0, im.err
	}
	if err := im.b.flush(im.markComplete); err != nil {
		im.fail(fmt.Errorf("store: commit import: %w", err))
		im.Rollback()
		return 0, im.err
	}
	im.ended()
	return im.id, nil
}

// markComplete is the import's last write: its counts, and the dataset
// visible.
func (im *Importer) markComplete(tx *sql.Tx) error {
	_, err := tx.ExecContext(im.ctx, "UPDATE dataset SET n_turns = ?, n_cards = ?, n_lexicon = ?, complete = 1 WHERE id = ?",
		im.turns, im.cards, im.lexicon, im.id)
	return err
}

// ended is the end of a committed import.
func (im *Importer) ended() {
	im.done, im.committed = true, true
	im.lk.release()
	im.db.bulkDone()
}

// CommitWithRun commits the import and w, the run judged as it was
// written (BeginRun), in one transaction: the dataset and its run become
// visible together, so a process stopped at any moment leaves both or
// neither (with Commit then RunWriter.Commit, one stopped between the two
// left a dataset without a run). First the import's last rows are written
// (the dataset still invisible), then the run's fingerprints set: the
// turns' (TurnsFingerprint) and those of the stored cards and lexicon (as
// DatasetTable's Sources give them: what a later judge of the dataset
// compares); then the run's last rows, its tally and the dataset's counts
// go in one transaction. t is as for RunWriter.Commit. On any error both
// are rolled back and the error says which step failed. It returns the
// dataset id and the run.
func (im *Importer) CommitWithRun(w *RunWriter, t persona.Tally) (int64, RunInfo, error) {
	fail := func(err error) (int64, RunInfo, error) {
		w.Rollback() // before the import's: a run goes before its dataset
		im.Rollback()
		return 0, RunInfo{}, err
	}
	switch {
	case im.done || w.done:
		return fail(ErrClosed)
	case w.im != im:
		return fail(fmt.Errorf("%w: run %d was not begun by import %d", ErrInvalid, w.id, im.id))
	case im.err != nil:
		return fail(im.err)
	case w.err != nil:
		return fail(w.err)
	}
	if err := w.agrees(t); err != nil {
		return fail(err)
	}
	if err := im.b.flush(nil); err != nil {
		return fail(fmt.Errorf("store: commit import: %w", err))
	}
	w.SetFingerprint(TableTurns, im.TurnsFingerprint())
	for _, table := range []string{TableCards, TableLexicon} {
		src, err := im.db.datasetTable(im.ctx, im.id, table)
		if err == nil {
			err = src.ReadThrough()
		}
		if err != nil {
			return fail(fmt.Errorf("store: commit import: fingerprint of its %s: %w", table, err))
		}
		if sum, ok := src.Fingerprint(); ok {
			w.SetFingerprint(table, sum)
		}
	}
	info, err := w.commit(t, im.markComplete)
	if err != nil {
		im.Rollback()
		return 0, RunInfo{}, err
	}
	im.ended()
	return im.id, info, nil
}

// Rollback discards the import: it deletes the batches already written
// and the dataset row (also when the import's context was cancelled). It is
// a no-op (nil) after Commit or an earlier Rollback, so `defer
// im.Rollback()` is safe. When the deletes fail the rows stay invisible and
// are removed by a later reclaim; the error says so.
func (im *Importer) Rollback() error {
	if im.done {
		return nil
	}
	im.done = true
	im.b.wait() // its rows are deleted below; its error no longer matters
	defer im.db.bulkDone()
	return im.db.rollbackTarget(im.ctx, "import", im.id, im.lk)
}

// ImportDataset stores the three tables as a new dataset (an Importer) and
// returns its id: either every row is stored or none is (a duplicate
// turn_id or character_id, a cancelled context or any other error leaves no
// dataset). Rows keep their slice order.
func (db *DB) ImportDataset(ctx context.Context, name string, turns []persona.Turn, cards []persona.Card, lexicon []persona.LexiconRow) (int64, error) {
	i := 0
	return db.ImportStream(ctx, name, cards, lexicon, func() (*persona.Turn, error) {
		if i == len(turns) {
			return nil, io.EOF
		}
		i++
		return &turns[i-1], nil
	})
}

// ImportStream is ImportDataset for a chat_turn table too large to hold in
// memory: next returns the turns one at a time, in input order, and
// (nil, io.EOF) at the end. Any other error from next aborts the import, which
// then leaves no dataset, and is returned. next may reuse the Turn it returns.
func (db *DB) ImportStream(ctx context.Context, name string, cards []persona.Card, lexicon []persona.LexiconRow, next func() (*persona.Turn, error)) (int64, error) {
	im, err := db.BeginImport(ctx, name)
	if err != nil {
		return 0, err
	}
	defer im.Rollback()
	for _, c := range cards {
		if err := im.AddCard(c); err != nil {
			return 0, err
		}
	}
	for _, r := range lexicon {
		if err := im.AddLexicon(r); err != nil {
			return 0, err
		}
	}
	for {
		t, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("store: import %q: %w", name, err)
		}
		if err := im.AddTurn(t); err != nil {
			return 0, err
		}
	}
	return im.Commit()
}

// Datasets lists the committed datasets (complete: an import still being
// written, or one whose writer died, is not listed), newest first.
func (db *DB) Datasets(ctx context.Context) ([]DatasetInfo, error) {
	rows, err := db.sql.QueryContext(ctx,
		"SELECT id, name, imported_at, n_turns, n_cards, n_lexicon FROM dataset WHERE complete = 1 ORDER BY id DESC")
	if err != nil {
		return nil, fmt.Errorf("store: datasets: %w", err)
	}
	defer rows.Close()
	var out []DatasetInfo
	for rows.Next() {
		var d DatasetInfo
		var at string
		if err := rows.Scan(&d.ID, &d.Name, &at, &d.Turns, &d.Cards, &d.Lexicon); err != nil {
			return nil, fmt.Errorf("store: datasets: %w", err)
		}
		if d.ImportedAt, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Dataset returns one committed dataset, or ErrNotFound (also for one
// still being written). Every reader of a dataset's tables checks here.
func (db *DB) Dataset(ctx context.Context, id int64) (DatasetInfo, error) {
	d := DatasetInfo{ID: id}
	var at string
	err := db.sql.QueryRowContext(ctx, "SELECT name, imported_at, n_turns, n_cards, n_lexicon FROM dataset WHERE id = ? AND complete = 1", id).
		Scan(&d.Name, &at, &d.Turns, &d.Cards, &d.Lexicon)
	if errors.Is(err, sql.ErrNoRows) {
		return DatasetInfo{}, fmt.Errorf("%w: dataset %d", ErrNotFound, id)
	}
	if err != nil {
		return DatasetInfo{}, fmt.Errorf("store: dataset %d: %w", id, err)
	}
	d.ImportedAt, err = parseTime(at)
	return d, err
}

// EachTurn calls fn with the dataset's turns in input order, one at a time
// (the Turn is fresh for each call). It stops at fn's first error and returns
// it. ErrNotFound when the dataset does not exist. On an in-memory DB, fn
// must not wait for a write transaction of the same DB (no WAL there).
func (db *DB) EachTurn(ctx context.Context, datasetID int64, fn func(*persona.Turn) error) error {
	if _, err := db.Dataset(ctx, datasetID); err != nil {
		return err
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT "+turnColumns+" FROM chat_turn WHERE dataset_id = ? ORDER BY seq", datasetID)
	if err != nil {
		return fmt.Errorf("store: turns of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t persona.Turn
		if _, err := scanTurn(rows, &t, false); err != nil {
			return fmt.Errorf("store: turns of dataset %d: %w", datasetID, err)
		}
		if err := fn(&t); err != nil {
			return err
		}
	}
	return rows.Err()
}

// turnColumns are the chat_turn columns scanTurn reads, in its order.
const turnColumns = `turn_id, session_id, character_id, model_id, user_message,
    reply_text, first_person, named_entities, honorific_level, user_asked_recall, created_at, prompt_id`

// scanTurn scans one row of turnColumns (preceded by seq when withSeq) into
// t and returns the seq (0 without it).
func scanTurn(rows *sql.Rows, t *persona.Turn, withSeq bool) (int64, error) {
	var seq int64
	var um, rt, fp, ne, hl sql.NullString
	var recall int
	dst := []any{&t.TurnID, &t.SessionID, &t.CharacterID, &t.ModelID, &um, &rt, &fp, &ne, &hl,
		&recall, &t.CreatedAt, &t.PromptID}
	if withSeq {
		dst = append([]any{&seq}, dst...)
	}
	if err := rows.Scan(dst...); err != nil {
		return 0, err
	}
	t.UserMessage, t.ReplyText, t.FirstPerson, t.HonorificLevel = stringPtr(um), stringPtr(rt), stringPtr(fp), stringPtr(hl)
	t.UserAskedRecall = recall != 0
	if ne.Valid {
		if err := json.Unmarshal([]byte(ne.String), &t.NamedEntities); err != nil {
			return 0, fmt.Errorf("turn %q named_entities: %w", t.TurnID, err)
		}
		if t.NamedEntities == nil {
			t.NamedEntities = []string{}
		}
	}
	return seq, nil
}

// Turns returns all turns of a dataset in input order; for large datasets
// prefer EachTurn. Nullable columns come back as stored: NamedEntities is nil
// exactly when it was imported as nil. ErrNotFound when the dataset does not
// exist.
func (db *DB) Turns(ctx context.Context, datasetID int64) ([]persona.Turn, error) {
	var out []persona.Turn
	err := db.EachTurn(ctx, datasetID, func(t *persona.Turn) error {
		out = append(out, *t)
		return nil
	})
	return out, err
}

// Cards returns the dataset's cards in input order, with updates by
// UpdateCard applied. List fields are never nil (empty = none), as
// persona.Card documents. ErrNotFound when the dataset does not exist.
func (db *DB) Cards(ctx context.Context, datasetID int64) ([]persona.Card, error) {
	if _, err := db.Dataset(ctx, datasetID); err != nil {
		return nil, err
	}
	return db.cards(ctx, datasetID)
}

// cards is Cards without the check that the dataset is complete.
func (db *DB) cards(ctx context.Context, datasetID int64) ([]persona.Card, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT character_id, name, honorific_rule, first_person, canon_entities,
    forbidden_topics, entity_roles, description, public, first_person_forms FROM character_card
    WHERE dataset_id = ? ORDER BY seq`, datasetID)
	if err != nil {
		return nil, fmt.Errorf("store: cards of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	var out []persona.Card
	for rows.Next() {
		var c persona.Card
		var canon, forbidden, roles string
		var public int
		var forms sql.NullString
		if err := rows.Scan(&c.CharacterID, &c.Name, &c.HonorificRule, &c.FirstPerson, &canon, &forbidden, &roles,
			&c.Description, &public, &forms); err != nil {
			return nil, fmt.Errorf("store: cards of dataset %d: %w", datasetID, err)
		}
		c.Public = public != 0
		if forms.Valid {
			if err := json.Unmarshal([]byte(forms.String), &c.FirstPersonForms); err != nil {
				return nil, fmt.Errorf("store: card %q: first_person_forms: %w", c.CharacterID, err)
			}
		}
		for _, l := range []struct {
			src string
			dst any
		}{{canon, &c.CanonEntities}, {forbidden, &c.ForbiddenTopics}, {roles, &c.EntityRoles}} {
			if err := json.Unmarshal([]byte(l.src), l.dst); err != nil {
				return nil, fmt.Errorf("store: card %q: %w", c.CharacterID, err)
			}
		}
		if c.CanonEntities == nil {
			c.CanonEntities = []string{}
		}
		if c.ForbiddenTopics == nil {
			c.ForbiddenTopics = []string{}
		}
		if c.EntityRoles == nil {
			c.EntityRoles = []persona.EntityRole{}
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Lexicon returns the dataset's topic_lexicon rows in row order (the order
// the forbidden-topic rule depends on). ErrNotFound when the dataset does not
// exist.
func (db *DB) Lexicon(ctx context.Context, datasetID int64) ([]persona.LexiconRow, error) {
	if _, err := db.Dataset(ctx, datasetID); err != nil {
		return nil, err
	}
	return db.lexicon(ctx, datasetID)
}

// lexicon is Lexicon without the check that the dataset is complete.
func (db *DB) lexicon(ctx context.Context, datasetID int64) ([]persona.LexiconRow, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT term, topic FROM topic_lexicon WHERE dataset_id = ? ORDER BY seq", datasetID)
	if err != nil {
		return nil, fmt.Errorf("store: lexicon of dataset %d: %w", datasetID, err)
	}
	defer rows.Close()
	var out []persona.LexiconRow
	for rows.Next() {
		var r persona.LexiconRow
		if err := rows.Scan(&r.Term, &r.Topic); err != nil {
			return nil, fmt.Errorf("store: lexicon of dataset %d: %w", datasetID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// UpdateCard replaces the card with card.CharacterID in a dataset (every
// field; its position in the table is kept) and stamps its update time, for
// example when a review adds a name to canon_entities. ErrNotFound when the
// dataset has no such character. Runs already stored are not changed; their
// fingerprints describe the cards they judged.
func (db *DB) UpdateCard(ctx context.Context, datasetID int64, card persona.Card) error {
	lists, err := cardLists(card)
	if err != nil {
		return fmt.Errorf("store: card %q: %w", card.CharacterID, err)
	}
	forms, err := firstPersonForms(card)
	if err != nil {
		return fmt.Errorf("store: card %q: %w", card.CharacterID, err)
	}
	return db.inTxRetry(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE character_card SET name = ?, honorific_rule = ?, first_person = ?,
    canon_entities = ?, forbidden_topics = ?, entity_roles = ?, description = ?, public = ?, updated_at = ?,
    first_person_forms = ?
    WHERE dataset_id = ? AND character_id = ? AND dataset_id IN (SELECT id FROM dataset WHERE complete = 1)`,
			card.Name, card.HonorificRule, card.FirstPerson, lists[0], lists[1], lists[2], card.Description,
			boolInt(card.Public), db.stamp(), nullForms(forms), datasetID, card.CharacterID)
		if err != nil {
			return fmt.Errorf("store: update card %q: %w", card.CharacterID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("%w: card %q in dataset %d", ErrNotFound, card.CharacterID, datasetID)
		}
		return nil
	})
}

// firstPersonForms encodes a card's FirstPersonForms for the
// first_person_forms column (migration 0008): "" for nil (stored as NULL, so
// a card without forms reads back as nil), else a JSON array.
func firstPersonForms(c persona.Card) (string, error) {
	if c.FirstPersonForms == nil {
		return "", nil
	}
	b, err := json.Marshal(c.FirstPersonForms)
	return string(b), err
}

// nullForms is the column value of firstPersonForms' result.
func nullForms(forms string) any {
	if forms == "" {
		return nil
	}
	return forms
}

// cardLists encodes a card's three list columns as JSON; nil lists become [].
func cardLists(c persona.Card) ([3]string, error) {
	var out [3]string
	canon, forbidden, roles := c.CanonEntities, c.ForbiddenTopics, c.EntityRoles
	if canon == nil {
		canon = []string{}
	}
	if forbidden == nil {
		forbidden = []string{}
	}
	if roles == nil {
		roles = []persona.EntityRole{}
	}
	for i, v := range []any{canon, forbidden, roles} {
		b, err := json.Marshal(v)
		if err != nil {
			return out, err
		}
		out[i] = string(b)
	}
	return out, nil
}
