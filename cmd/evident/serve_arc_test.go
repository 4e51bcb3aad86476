package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeARC(t *testing.T) {
	ctx := context.Background()
	t.Run("serve --arc with a missing folder fails naming it", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "no-such-runs")
		_, _, err := webCLI(ctx, t, "serve", "--demo", "--addr", "127.0.0.1:0", "--arc", dir)
		if err == nil || !strings.Contains(err.Error(), "--arc "+dir) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("serve --arc shows the folder's runs under /arc", func(t *testing.T) {
		runs := t.TempDir()
		ws := filepath.Join(runs, "game-a")
		if err := os.MkdirAll(filepath.Join(ws, "agent"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ws, "agent", "transcript.jsonl"),
			[]byte(`{"time":"2026-12-01T10:00:00Z","iteration":3,"kind":"stop","reason":"the game is won"}`+"\n"), 0o644)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		srv := startServe(t, ctx, "--demo", "--addr", "127.0.0.1:0", "--arc", runs)
		addr, done := srv.addr, srv.done
		for path, want := range map[string]string{"arc": `href="/arc/game-a"`, "arc/game-a": "Stopped at iteration 3: the game is won"} {
			resp, err := http.Get(addr + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
				t.Errorf("GET /%s: %d, lacks %q", path, resp.StatusCode, want)
			}
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v after stop", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
		}
	})
}
