package main

import (
	"context"
	"strings"
	"testing"
)

// serve --live-cache takes MiB (0 or more, web.SetLiveCache); a negative
// size stops serve before it listens, with an error naming the flag.
func TestServeRefusesANegativeLiveCache(t *testing.T) {
	_, errOut, err := webCLI(context.Background(), t, "serve", "--demo", "--addr", "127.0.0.1:0", "--live-cache", "-5")
	want := "--live-cache is -5: give the live state cache's size in MiB, 0 to keep no session state in memory (default 64)"
	if err == nil || err.Error() != want {
		t.Fatalf("serve --live-cache -5: %v, want %q", err, want)
	}
	if strings.Contains(errOut, "serving http://") {
		t.Fatalf("serve listened: %s", errOut)
	}
}
