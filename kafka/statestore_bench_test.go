package kafka

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLocalStoreWrite writes polls of 60 new sessions (a 3 KiB live
// state and a 52-turn list each) to one local store, looking each session up
// first as the consumer does; ns/op is per session.
func BenchmarkLocalStoreWrite(b *testing.B) {
	ctx := context.Background()
	s, err := openLocal(ctx, filepath.Join(b.TempDir(), "s.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	liveJSON := []byte(`{"turns":52,"mentions":{"x":"` + strings.Repeat("가", 1000) + `"}}`)
	var list []byte
	var d [digestLen]byte
	for i := range 52 {
		list = appendTurn(list, fmt.Sprintf("T-%08d-%d", i, i), &d)
	}
	b.ResetTimer()
	ws := make([]localWrite, 0, 60)
	for i := 0; i < b.N; {
		ws = ws[:0]
		for ; len(ws) < 60 && i < b.N; i++ {
			id := fmt.Sprintf("S-%09d", i)
			if _, _, ok, err := s.session(ctx, id); err != nil || ok {
				b.Fatal(ok, err)
			}
			ws = append(ws, localWrite{session: id, live: liveJSON, turns: list})
		}
		if err := s.write(ctx, ws, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
