package kafka

import "github.com/twmb/franz-go/pkg/kgo"

// Test hooks (see Config's unexported fields).

func WithCrash(cfg Config, crash func(stage string) bool) Config { cfg.crash = crash; return cfg }

func WithOnCommit(cfg Config, f func(recs []*kgo.Record)) Config { cfg.onCommit = f; return cfg }

func WithOnAssigned(cfg Config, f func(parts []int32)) Config { cfg.onAssigned = f; return cfg }
