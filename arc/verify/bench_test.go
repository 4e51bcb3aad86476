package verify

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"evident/arc/internal/dotgame"
	"evident/arc/worldmodel"
)

// longScript is RESET then 1,500 steps inside level 1 attempt 1: a loop of
// moves around the start (net displacement zero) with ACTION5 (two frames)
// every cycle, never touching lava or the goal.
func longScript() string {
	var sb strings.Builder
	sb.WriteString("RESET ")
	cycle := strings.Fields("4 4 4 3 3 3 1 1 2 2 5")
	for i := 0; i < 1500; i++ {
		sb.WriteString(cycle[i%len(cycle)])
		sb.WriteByte(' ')
	}
	return sb.String()
}

// BenchmarkVerify1500 verifies a 1,500-step session (spec target: under
// 10 s) with the reference model (grid built-ins) and with a naive
// cell-by-cell Starlark renderer. Each iteration loads the model, reads the
// session and replays it: the whole command minus process start.
func BenchmarkVerify1500(b *testing.B) {
	for _, c := range []struct {
		name     string
		override map[string]string
	}{
		{"grid-builtins", nil},
		{"naive-renderer", map[string]string{worldmodel.StateIOFile: string(dotgame.NaiveStateIO())}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ws := workspace(b, longScript(), c.override)
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				m, err := worldmodel.LoadStarlark(context.Background(), worldmodel.StarlarkOptions{Dir: ws})
				if err != nil {
					b.Fatal(err)
				}
				if err := Verify(context.Background(), m, Options{Workspace: ws, Out: io.Discard}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1500/time.Since(start).Seconds(), "steps/s")
		})
	}
}
