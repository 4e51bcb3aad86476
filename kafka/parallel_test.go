package kafka_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"evident/kafka"
)

// The partitions of one poll are judged in parallel, each against its own
// sessions' states: with the demo log spread over 8 partitions and polls of
// up to 10,000 records, a commit covers several partitions at once, and
// every verdict is the reference record, exactly once.
func TestAPollOfManyPartitionsJudgedInParallelGivesTheReferenceRecords(t *testing.T) {
	j := demoJudge(t)
	rows := demoRows(t)
	want := reference(t, j, rows)
	brokers := newCluster(t, 8)
	produce(t, brokers, rows)
	type commit struct{ records, partitions int }
	commits := make(chan commit, 1000)
	cfg := config(t, brokers, j)
	cfg.MaxPollRecords = 10_000
	runConsumer(t, kafka.WithOnCommit(cfg, func(rs []*kgo.Record) {
		parts := map[int32]bool{}
		for _, r := range rs {
			parts[r.Partition] = true
		}
		commits <- commit{len(rs), len(parts)}
	}))
	most := 0
	for n := 0; n < len(rows); {
		select {
		case c := <-commits:
			n += c.records
			most = max(most, c.partitions)
		case <-time.After(guard):
			t.Fatalf("%d of %d records committed", n, len(rows))
		}
	}
	t.Logf("widest commit: %d partitions", most)
	if most < 2 {
		t.Fatalf("every commit covered %d partition, want a poll of several (the parallel path)", most)
	}
	got := verdicts(t, brokers, outTopic, len(want))
	for id, recs := range got {
		if len(recs) != 1 || recs[0] != want[id] {
			t.Fatalf("%s: %q\nwant %s", id, recs, want[id])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d turns have verdicts, want %d", len(got), len(want))
	}
}
