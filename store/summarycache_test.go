package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"evident/persona"
)

// TestSummaryCache keeps an answer as its JSON, reads it back whole, writes
// a batch in one transaction (an entry without a key keeps the whole batch
// out), and names the key of an answer that is not JSON.
func TestSummaryCache(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := SummaryCache{DB: db}
	if _, ok, err := c.Get(ctx, "k1"); ok || err != nil {
		t.Fatalf("empty cache: ok %v, err %v; want a miss", ok, err)
	}
	a := persona.CachedAnswer{Text: `{"summary":"하늘"}`, JSON: json.RawMessage(`{"summary":"하늘"}`), InputTokens: 100, OutputTokens: 10, Model: "m-2"}
	if err := c.Put(ctx, persona.CacheEntry{Key: "k1", PromptVersion: "v1", Provider: "openai", Model: "m", Answer: a}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.Get(ctx, "k1")
	if !ok || err != nil || got.Text != a.Text || string(got.JSON) != string(a.JSON) || got.InputTokens != 100 || got.OutputTokens != 10 || got.Model != "m-2" {
		t.Errorf("Get k1 = %+v, %v, %v", got, ok, err)
	}
	raw, err := db.CacheGet(ctx, "k1")
	if err != nil || raw.InputTokens != 100 || raw.OutputTokens != 10 || raw.Provider != "openai" || raw.PromptVersion != "v1" {
		t.Errorf("llm_cache row %+v, %v", raw, err)
	}

	if err := c.PutAll(ctx, []persona.CacheEntry{{Key: "k2"}, {}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a batch with an empty key: %v, want ErrInvalid", err)
	}
	if _, ok, _ := c.Get(ctx, "k2"); ok {
		t.Error("a failed batch stored k2")
	}
	if err := c.PutAll(ctx, []persona.CacheEntry{{Key: "k2", Answer: persona.CachedAnswer{Text: "a"}}, {Key: "k2", Answer: persona.CachedAnswer{Text: "b"}}}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.Get(ctx, "k2"); got.Text != "b" {
		t.Errorf("the later entry of a batch should win: %q", got.Text)
	}

	if err := db.CachePut(ctx, CacheEntry{Key: "bad", Response: []byte("not json")}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Get(ctx, "bad"); ok || err == nil || !strings.Contains(err.Error(), "cached answer bad") {
		t.Errorf("an answer that is not JSON: ok %v, err %v", ok, err)
	}
}
