package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"evident/store"
)

// Answer is a model's answer as the cache keeps it.
type Answer struct {
	// Text is the answer's text; JSON the answer as raw JSON, nil when it
	// was not JSON (llm.Response).
	Text string          `json:"text"`
	JSON json.RawMessage `json:"json,omitempty"`
	// InputTokens and OutputTokens are what the answer cost when fetched.
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Model is the model name the server reported.
	Model string `json:"model,omitempty"`
}

// Entry is one answer under its content address, with what it answered.
type Entry struct {
	// Key is the content address: sha256 (hex) over the prompt version,
	// provider, model and the request as JSON.
	Key string
	// PromptVersion, Provider and Model say what was asked (for
	// housekeeping; Key already depends on them).
	PromptVersion, Provider, Model string
	// Answer is what the model said.
	Answer Answer
}

// Cache keeps model answers by content address (see the package doc). Get
// reports whether key is cached; an error counts as a miss (Tally.CacheErrors)
// and Put errors are counted, never fatal. Implementations are safe for
// concurrent use.
type Cache interface {
	Get(ctx context.Context, key string) (Answer, bool, error)
	Put(ctx context.Context, e Entry) error
}

// MemoryCache is a Cache in memory: it lasts as long as the value (the
// judge command uses one when no cache database is given, so only repeats
// within one run are saved).
type MemoryCache struct {
	mu sync.Mutex
	m  map[string]Answer
}

// NewMemoryCache returns an empty MemoryCache.
func NewMemoryCache() *MemoryCache { return &MemoryCache{m: map[string]Answer{}} }

// Get implements Cache.
func (c *MemoryCache) Get(_ context.Context, key string) (Answer, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[key]
	return a, ok, nil
}

// Put implements Cache.
func (c *MemoryCache) Put(_ context.Context, e Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[e.Key] = e.Answer
	return nil
}

// Len is the number of cached answers.
func (c *MemoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// StoreCache is a Cache in the store's llm_cache table (migration 0002),
// shared by every run that uses the same database. Each Put is its own write
// transaction: while a RunWriter or Importer holds the database's write
// lock, wrap it in Buffered and Flush after the Commit.
type StoreCache struct {
	DB *store.DB
}

// Get implements Cache.
func (c StoreCache) Get(ctx context.Context, key string) (Answer, bool, error) {
	e, err := c.DB.CacheGet(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return Answer{}, false, nil
	}
	if err != nil {
		return Answer{}, false, err
	}
	var a Answer
	if err := json.Unmarshal(e.Response, &a); err != nil {
		return Answer{}, false, fmt.Errorf("summarize: cached answer %s: %w", key, err)
	}
	return a, true, nil
}

// Put implements Cache.
func (c StoreCache) Put(ctx context.Context, e Entry) error {
	se, err := storeEntry(e)
	if err != nil {
		return err
	}
	return c.DB.CachePut(ctx, se)
}

func storeEntry(e Entry) (store.CacheEntry, error) {
	b, err := json.Marshal(e.Answer)
	if err != nil {
		return store.CacheEntry{}, fmt.Errorf("summarize: encode answer: %w", err)
	}
	return store.CacheEntry{Key: e.Key, PromptVersion: e.PromptVersion, Provider: e.Provider, Model: e.Model,
		Response: b, InputTokens: e.Answer.InputTokens, OutputTokens: e.Answer.OutputTokens}, nil
}

// Buffered is a Cache that reads through to another and holds its writes
// until Flush, for a database whose write lock a run's transaction holds.
type Buffered struct {
	under Cache

	mu      sync.Mutex
	pending map[string]Entry
	order   []string
}

// NewBuffered returns a Buffered cache over under.
func NewBuffered(under Cache) *Buffered {
	return &Buffered{under: under, pending: map[string]Entry{}}
}

// Get implements Cache: pending writes first, then the cache below.
func (b *Buffered) Get(ctx context.Context, key string) (Answer, bool, error) {
	b.mu.Lock()
	e, ok := b.pending[key]
	b.mu.Unlock()
	if ok {
		return e.Answer, true, nil
	}
	return b.under.Get(ctx, key)
}

// Put implements Cache: the entry waits for Flush.
func (b *Buffered) Put(_ context.Context, e Entry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pending[e.Key]; !ok {
		b.order = append(b.order, e.Key)
	}
	b.pending[e.Key] = e
	return nil
}

// Flush writes the pending entries to the cache below, in the order they
// were put (a StoreCache gets them in one transaction), and forgets them
// once written.
func (b *Buffered) Flush(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sc, ok := b.under.(StoreCache); ok {
		var all []store.CacheEntry
		for _, k := range b.order {
			se, err := storeEntry(b.pending[k])
			if err != nil {
				return err
			}
			all = append(all, se)
		}
		if err := sc.DB.CachePut(ctx, all...); err != nil {
			return err
		}
	} else {
		for _, k := range b.order {
			if err := b.under.Put(ctx, b.pending[k]); err != nil {
				return err
			}
		}
	}
	b.pending, b.order = map[string]Entry{}, nil
	return nil
}
