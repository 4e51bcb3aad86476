package main

import (
	"context"
	"errors"
	"testing"
)

// What a failed judge --db or import says was left in the store.
func TestStoredWordingSaysWhatTheStoreKeeps(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	base := errors.New("context canceled")
	for _, c := range []struct {
		name      string
		ctx       context.Context
		err       error
		datasetID int64
		want      string
	}{
		{"interrupted before the dataset committed: nothing stored", cancelled, base, 0,
			"context canceled (nothing was stored: the run and its dataset were rolled back)"},
		{"interrupted after both committed: the error as it is", cancelled, errors.New("dataset 7: summary: context canceled"), 7,
			"dataset 7: summary: context canceled"},
		{"a failure before anything committed, not interrupted: the error as it is", context.Background(), errors.New("bad cards"), 0,
			"bad cards"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := storedWording(c.ctx, c.err, c.datasetID, "the run and its dataset")
			if got.Error() != c.want {
				t.Fatalf("%q, want %q", got, c.want)
			}
			if !errors.Is(got, c.err) {
				t.Fatal("the wording does not wrap the error")
			}
		})
	}
}
