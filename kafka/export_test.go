package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"evident/persona"
)

// Test hooks (see Config's unexported fields).

func WithCrash(cfg Config, crash func(stage string) bool) Config { cfg.crash = crash; return cfg }

func WithOnCommit(cfg Config, f func(recs []*kgo.Record)) Config { cfg.onCommit = f; return cfg }

func WithOnAssigned(cfg Config, f func(parts []int32)) Config { cfg.onAssigned = f; return cfg }

func WithOnRestored(cfg Config, f func(parts []int32, read int)) Config {
	cfg.onRestored = f
	return cfg
}

// CacheLen is the number of session states c keeps decoded in memory.
func CacheLen(c *Consumer) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache.len()
}

// StoredSessions counts the sessions in c's local stores.
func StoredSessions(c *Consumer) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, s := range c.stores {
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM session`).Scan(&n); err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// SetLocalFormat rewrites the format of the local store file at path.
func SetLocalFormat(path, format string) error {
	s, err := openLocal(context.Background(), path)
	if err != nil {
		return err
	}
	defer s.close()
	_, err = s.db.Exec(`UPDATE meta SET value=? WHERE key='format'`, format)
	return err
}

func WithAfterStep(cfg Config, f func(t *persona.Turn)) Config { cfg.afterStep = f; return cfg }
