package summarize

import (
	"context"
	"sync"

	"evident/persona"
)

// Cache keeps model answers by content address (see the package doc). Get
// reports whether key is cached; an error counts as a miss (Tally.CacheErrors)
// and Put errors are counted, never fatal. Implementations are safe for
// concurrent use.
type Cache interface {
	Get(ctx context.Context, key string) (persona.CachedAnswer, bool, error)
	Put(ctx context.Context, e persona.CacheEntry) error
}

// BatchCache is a Cache that can also store several entries in one write
// (store.SummaryCache: one transaction). Buffered.Flush uses PutAll when the
// cache below has it; entries come in the order they were put, and nothing
// of the batch is kept when it fails.
type BatchCache interface {
	Cache
	PutAll(ctx context.Context, entries []persona.CacheEntry) error
}

// MemoryCache is a Cache in memory: it lasts as long as the value (the
// judge command uses one when no cache database is given, so only repeats
// within one run are saved).
type MemoryCache struct {
	mu sync.Mutex
	m  map[string]persona.CachedAnswer
}

// NewMemoryCache returns an empty MemoryCache.
func NewMemoryCache() *MemoryCache { return &MemoryCache{m: map[string]persona.CachedAnswer{}} }

// Get implements Cache.
func (c *MemoryCache) Get(_ context.Context, key string) (persona.CachedAnswer, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[key]
	return a, ok, nil
}

// Put implements Cache.
func (c *MemoryCache) Put(_ context.Context, e persona.CacheEntry) error {
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

// Buffered is a Cache that reads through to another and holds its writes
// until Flush, for a database whose write lock a run's transaction holds.
type Buffered struct {
	under Cache

	mu      sync.Mutex
	pending map[string]persona.CacheEntry
	order   []string
}

// NewBuffered returns a Buffered cache over under.
func NewBuffered(under Cache) *Buffered {
	return &Buffered{under: under, pending: map[string]persona.CacheEntry{}}
}

// Get implements Cache: pending writes first, then the cache below.
func (b *Buffered) Get(ctx context.Context, key string) (persona.CachedAnswer, bool, error) {
	b.mu.Lock()
	e, ok := b.pending[key]
	b.mu.Unlock()
	if ok {
		return e.Answer, true, nil
	}
	return b.under.Get(ctx, key)
}

// Put implements Cache: the entry waits for Flush.
func (b *Buffered) Put(_ context.Context, e persona.CacheEntry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pending[e.Key]; !ok {
		b.order = append(b.order, e.Key)
	}
	b.pending[e.Key] = e
	return nil
}

// Flush writes the pending entries to the cache below, in the order they
// were put — in one PutAll when it is a BatchCache (the store's llm_cache:
// one transaction), else one Put each — and forgets them once written.
func (b *Buffered) Flush(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bc, ok := b.under.(BatchCache); ok {
		all := make([]persona.CacheEntry, 0, len(b.order))
		for _, k := range b.order {
			all = append(all, b.pending[k])
		}
		if err := bc.PutAll(ctx, all); err != nil {
			return err
		}
	} else {
		for _, k := range b.order {
			if err := b.under.Put(ctx, b.pending[k]); err != nil {
				return err
			}
		}
	}
	b.pending, b.order = map[string]persona.CacheEntry{}, nil
	return nil
}
