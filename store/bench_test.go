package store

import (
	"context"
	"testing"
)

// BenchmarkRunInsert100k stores 100,000 verdict records as one run (one
// transaction, Commit included) and reports records/s (wall) and
// records/cpu-s, on a WAL file and in memory.
func BenchmarkRunInsert100k(b *testing.B) {
	const n = 100_000
	turns, recs := synthSet(n)
	tally := tallyOf(recs, 0)
	ctx := context.Background()
	for _, target := range []string{"file", "memory"} {
		b.Run(target, func(b *testing.B) {
			var db *DB
			if target == "file" {
				db, _ = openFile(b)
			} else {
				db = openMem(b)
			}
			cpu0 := cpuTime()
			for b.Loop() {
				w, err := db.BeginRun(ctx, testMeta)
				if err != nil {
					b.Fatal(err)
				}
				for i := range recs {
					if err := w.Add(recs[i], &turns[i]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Commit(tally); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
			// Records per CPU second: steadier than wall time on a busy machine
			// (the whole process, so GC and the driver's threads count).
			if cpu := cpuTime() - cpu0; cpu > 0 && cpu0 > 0 {
				b.ReportMetric(float64(n*b.N)/cpu.Seconds(), "records/cpu-s")
			}
		})
	}
}
