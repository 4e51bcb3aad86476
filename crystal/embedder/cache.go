package embedder

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Cache memoises embeddings keyed by model name and text, so that each
// reference step is embedded once per model however many predictions (and
// prediction files) are scored against it (spec crystal.md "Embeddings":
// reference embeddings are computed once and cached). It is safe for
// concurrent use. Vectors are stored as given and must not be modified by
// callers.
//
// The zero value is not usable; call NewCache.
type Cache struct {
	mu   sync.RWMutex
	m    map[cacheKey][]float32
	hits atomic.Int64
	miss atomic.Int64
}

type cacheKey struct{ model, text string }

// CacheStats counts cache lookups: Hits found a vector, Misses did not;
// Entries is the number of stored vectors.
type CacheStats struct {
	Hits    int64 `json:"hits"`
	Misses  int64 `json:"misses"`
	Entries int   `json:"entries"`
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{m: make(map[cacheKey][]float32)}
}

// Get returns the vector stored for model and text, counting a hit or a miss.
func (c *Cache) Get(model, text string) ([]float32, bool) {
	c.mu.RLock()
	v, ok := c.m[cacheKey{model, text}]
	c.mu.RUnlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.miss.Add(1)
	}
	return v, ok
}

// Put stores v for model and text, replacing any earlier vector.
func (c *Cache) Put(model, text string, v []float32) {
	c.mu.Lock()
	c.m[cacheKey{model, text}] = v
	c.mu.Unlock()
}

// Len returns the number of stored vectors.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// Stats returns the lookup counters and the number of entries.
func (c *Cache) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.miss.Load(), Entries: c.Len()}
}

// Warm embeds the texts not yet cached for e's model — each distinct text
// once, in one Embed call, so a batching embedder sees full batches — and
// stores them. It returns how many vectors it added. Warm does not count
// lookups in Stats.
//
// Errors: e's error, or ErrEmbedding for a wrong vector count.
func (c *Cache) Warm(ctx context.Context, e Embedder, texts []string) (int, error) {
	model := e.Name()
	var todo []string
	seen := make(map[string]bool)
	c.mu.RLock()
	for _, t := range texts {
		if _, ok := c.m[cacheKey{model, t}]; !ok && !seen[t] {
			seen[t] = true
			todo = append(todo, t)
		}
	}
	c.mu.RUnlock()
	if len(todo) == 0 {
		return 0, ctx.Err()
	}
	vecs, err := e.Embed(ctx, todo)
	if err != nil {
		return 0, err
	}
	if len(vecs) != len(todo) {
		return 0, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vecs), len(todo))
	}
	c.mu.Lock()
	for k, t := range todo {
		c.m[cacheKey{model, t}] = vecs[k]
	}
	c.mu.Unlock()
	return len(todo), nil
}
