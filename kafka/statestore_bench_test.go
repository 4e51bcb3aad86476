package kafka

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLocalStoreWrite writes polls of 60 new sessions (a 3 KiB live
// state and 52 turn rows each) to one local store, looking each session and
// each turn up first as the consumer does; ns/op is per session.
func BenchmarkLocalStoreWrite(b *testing.B) {
	ctx := context.Background()
	s, err := openLocal(ctx, filepath.Join(b.TempDir(), "s.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	liveJSON := []byte(`{"turns":52,"cited":[{"seq":0,"turn_id":"T-0","reply_text":"` + strings.Repeat("가", 1000) + `"}]}`)
	var d [digestLen]byte
	b.ResetTimer()
	ws := make([]localWrite, 0, 60*53)
	for i := 0; i < b.N; {
		ws = ws[:0]
		for n := 0; n < 60 && i < b.N; n, i = n+1, i+1 {
			id := fmt.Sprintf("S-%09d", i)
			if _, ok, err := s.session(ctx, id); err != nil || ok {
				b.Fatal(ok, err)
			}
			for k := range 52 {
				tid := fmt.Sprintf("T-%08d-%d", i, k)
				if _, _, ok, err := s.turn(ctx, id, tid); err != nil || ok {
					b.Fatal(ok, err)
				}
				ws = append(ws, localWrite{session: id, isTurn: true, turnID: tid, seq: int64(k), digest: d[:]})
			}
			ws = append(ws, localWrite{session: id, live: liveJSON})
		}
		if err := s.write(ctx, ws, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
