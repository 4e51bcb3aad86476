package store

import (
	"context"
	"errors"
	"testing"
)

func TestLLMCache(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CacheGet(ctx, "k1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty cache: %v, want ErrNotFound", err)
	}
	e := CacheEntry{Key: "k1", PromptVersion: "v1", Provider: "openai", Model: "m", Response: []byte(`{"text":"하늘"}`), InputTokens: 10, OutputTokens: 3}
	if err := db.CachePut(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, err := db.CacheGet(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Response) != `{"text":"하늘"}` || got.InputTokens != 10 || got.OutputTokens != 3 || got.Model != "m" ||
		got.Provider != "openai" || got.PromptVersion != "v1" || got.CreatedAt.IsZero() {
		t.Errorf("got %+v", got)
	}
	e.Response = []byte(`{}`)
	if err := db.CachePut(ctx, e, CacheEntry{Key: "k2", Response: []byte(`1`)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.CacheGet(ctx, "k1"); string(got.Response) != `{}` {
		t.Errorf("replace: %s", got.Response)
	}
	if err := db.CachePut(ctx, CacheEntry{Key: "k3"}, CacheEntry{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty key: %v, want ErrInvalid", err)
	}
	if _, err := db.CacheGet(ctx, "k3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a failed put stored k3: %v", err)
	}
}
