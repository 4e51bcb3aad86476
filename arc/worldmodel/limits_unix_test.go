//go:build unix

package worldmodel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAbandonedBuiltin: a built-in that never looks at cancellation (here
// load_initial_full_frame reading a FIFO nobody writes) must not hold the
// caller past its time limit: the call returns the context's error once the
// grace period is over, and the model is unusable afterwards.
func TestAbandonedBuiltin(t *testing.T) {
	dir := modelDir(t, map[string]string{StateIOFile: `
def initial_state_reconstruction(level_index, initial_frame):
    load_initial_full_frame(level_index)
    return {"level": level_index}

def state_renderer(state):
    return grid(64, 64)
`})
	frames := t.TempDir()
	fifo := filepath.Join(frames, "level_1.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	m := load(t, dir, func(o *StarlarkOptions) { o.FullFramesDir = frames })
	m.grace = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var w *os.File
	go func() {
		// The reader is inside the built-in once a non-blocking open for
		// writing finds it (ENXIO before).
		for {
			f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				w = f
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := m.Reconstruct(ctx, 1, initial(1))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrAbandoned) {
		t.Fatalf("err = %v, want a cancelled, abandoned call", err)
	}
	if _, err := m.Reconstruct(context.Background(), 1, initial(1)); !errors.Is(err, ErrAbandoned) {
		t.Fatalf("a call after the abandoned one: err = %v", err)
	}
	w.Close() // the reader sees EOF and its goroutine ends
}
