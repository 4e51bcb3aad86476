package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"evident/persona"
)

// SummaryCache is the summarizer's answer cache (persona/summarize.Cache and
// its batch form, summarize.BatchCache) in the llm_cache table (migration
// 0002), shared by every run that uses the same database. The answer is
// stored as its JSON in llm_cache.response. Each Put is its own write
// transaction; PutAll writes many in one. While a RunWriter or Importer
// holds the database's write lock, wrap it in summarize.Buffered and Flush
// after the Commit (issue 12 item 3: the adapter implements the interface
// the domain declares).
type SummaryCache struct {
	DB *DB
}

// Get returns the answer cached under key; ok is false when there is none.
// A stored answer that is not valid JSON is an error naming the key.
func (c SummaryCache) Get(ctx context.Context, key string) (persona.CachedAnswer, bool, error) {
	e, err := c.DB.CacheGet(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return persona.CachedAnswer{}, false, nil
	}
	if err != nil {
		return persona.CachedAnswer{}, false, err
	}
	var a persona.CachedAnswer
	if err := json.Unmarshal(e.Response, &a); err != nil {
		return persona.CachedAnswer{}, false, fmt.Errorf("store: cached answer %s: %w", key, err)
	}
	return a, true, nil
}

// Put stores e in its own write transaction, replacing an entry with the
// same key; an empty key fails with ErrInvalid.
func (c SummaryCache) Put(ctx context.Context, e persona.CacheEntry) error {
	return c.PutAll(ctx, []persona.CacheEntry{e})
}

// PutAll stores entries in one write transaction, in order (a later entry
// with the same key wins); nothing is stored when one fails (CachePut).
func (c SummaryCache) PutAll(ctx context.Context, entries []persona.CacheEntry) error {
	all := make([]CacheEntry, 0, len(entries))
	for _, e := range entries {
		b, err := json.Marshal(e.Answer)
		if err != nil {
			return fmt.Errorf("store: encode answer %s: %w", e.Key, err)
		}
		all = append(all, CacheEntry{Key: e.Key, PromptVersion: e.PromptVersion, Provider: e.Provider, Model: e.Model,
			Response: b, InputTokens: e.Answer.InputTokens, OutputTokens: e.Answer.OutputTokens})
	}
	return c.DB.CachePut(ctx, all...)
}
