package kafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"evident/kafka"
	"evident/persona/ingest"
)

// BenchmarkConsumer judges b.N turns (copies of the demo log, 52-turn and
// 13-turn sessions) already in a 4-partition kfake topic with one consumer,
// from the first poll to the last commit, and reports turns per second
// (the target in README "Live judging": ≥ 50,000 on 2 cores). kfake runs in the same process,
// so its CPU is counted too. It also reports the process's CPU (user+sys)
// per turn over the same span, cpu-µs/turn, which the machine's load does
// not inflate the way it does wall time (the setup, building and producing
// the rows, is left out).
func BenchmarkConsumer(b *testing.B) {
	j := demoJudge(b)
	base := demoRows(b)
	rows := make([]row, 0, b.N)
	for k := 0; len(rows) < b.N; k++ {
		for _, r := range base {
			if len(rows) == b.N {
				break
			}
			tu, err := ingest.DecodeTurn(ingest.Raw{Line: 1, JSON: r.value})
			if err != nil {
				b.Fatal(err)
			}
			tu.TurnID = fmt.Sprintf("%s-%d", tu.TurnID, k)
			tu.SessionID = fmt.Sprintf("%s-%d", tu.SessionID, k)
			v, err := json.Marshal(&tu)
			if err != nil {
				b.Fatal(err)
			}
			rows = append(rows, row{tu.SessionID, tu.TurnID, v})
		}
	}
	brokers := newCluster(b, 4)
	produce(b, brokers, rows)
	done := make(chan struct{})
	n := 0
	cfg := kafka.WithOnCommit(config(b, brokers, j), func(rs []*kgo.Record) {
		if n += len(rs); n == len(rows) {
			close(done)
		}
	})
	cfg.MaxPollRecords = 10_000
	b.ResetTimer()
	cpu0 := processCPU(b)
	stop := runConsumer(b, cfg)
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d of %d turns committed", n, len(rows))
	}
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	if err := stop(); err != nil && err != context.Canceled {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(rows))/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(rows)), "cpu-µs/turn")
}
