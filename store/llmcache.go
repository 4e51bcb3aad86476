package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// CacheEntry is one model answer in the llm_cache table (migration 0002):
// the content address the caller computed, what it was asked of, and the
// answer as the caller encoded it.
type CacheEntry struct {
	// Key is the content address (e.g. a sha256 hex digest); required.
	Key string
	// PromptVersion, Provider and Model describe the request, for
	// housekeeping; the key already depends on them.
	PromptVersion, Provider, Model string
	// Response is the answer as the caller encoded it (JSON text).
	Response []byte
	// InputTokens and OutputTokens are the usage the answer cost when it
	// was first fetched.
	InputTokens, OutputTokens int
	// CreatedAt is when CachePut stored it (ignored on input).
	CreatedAt time.Time
}

// CacheGet returns the cached answer for key, or ErrNotFound.
//
// On an in-memory DB (no WAL) a read waits while this DB has a write
// transaction open (an Importer or RunWriter), as the package doc says.
func (db *DB) CacheGet(ctx context.Context, key string) (CacheEntry, error) {
	e := CacheEntry{Key: key}
	var resp, at string
	err := db.sql.QueryRowContext(ctx, `SELECT prompt_version, provider, model, response, input_tokens, output_tokens, created_at
FROM llm_cache WHERE key = ?`, key).Scan(&e.PromptVersion, &e.Provider, &e.Model, &resp, &e.InputTokens, &e.OutputTokens, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return CacheEntry{}, fmt.Errorf("%w: cached answer %q", ErrNotFound, key)
	}
	if err != nil {
		return CacheEntry{}, fmt.Errorf("store: cached answer: %w", err)
	}
	e.Response = []byte(resp)
	if e.CreatedAt, err = parseTime(at); err != nil {
		return CacheEntry{}, err
	}
	return e, nil
}

// CachePut stores entries in one write transaction, replacing any entry with
// the same key. An entry with an empty Key fails with ErrInvalid and nothing
// is stored.
//
// A write waits for the database's write lock (up to BusyTimeout): while a
// RunWriter or Importer of this or another process holds it, buffer the
// entries and put them after its Commit.
func (db *DB) CachePut(ctx context.Context, entries ...CacheEntry) error {
	for _, e := range entries {
		if e.Key == "" {
			return fmt.Errorf("%w: cache entry without key", ErrInvalid)
		}
	}
	if len(entries) == 0 {
		return nil
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO llm_cache
(key, prompt_version, provider, model, response, input_tokens, output_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("store: cache put: %w", err)
		}
		defer stmt.Close()
		at := db.stamp()
		for _, e := range entries {
			if _, err := stmt.ExecContext(ctx, e.Key, e.PromptVersion, e.Provider, e.Model, string(e.Response),
				e.InputTokens, e.OutputTokens, at); err != nil {
				return fmt.Errorf("store: cache put %q: %w", e.Key, err)
			}
		}
		return nil
	})
}
