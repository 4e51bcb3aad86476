package kafka_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"evident/kafka"
	"evident/persona"
)

// member is a consumer started in the background with its commit count;
// exited is closed when Run returns, with its error in runErr.
type member struct {
	c         *kafka.Consumer
	committed chan int
	stop      func() error
	exited    chan struct{}
	runErr    error
}

func start(t *testing.T, cfg kafka.Config) *member {
	t.Helper()
	m := &member{committed: make(chan int, 1000), exited: make(chan struct{})}
	cfg = kafka.WithOnCommit(cfg, func(rs []*kgo.Record) { m.committed <- len(rs) })
	c, err := kafka.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.c = c
	ctx, cancel := context.WithCancel(context.Background())
	go func() { m.runErr = c.Run(ctx); close(m.exited) }()
	var once sync.Once
	m.stop = func() error {
		once.Do(func() {
			cancel()
			<-m.exited
			c.Close()
		})
		return m.runErr
	}
	t.Cleanup(func() { m.stop() })
	return m
}

// waitCommitted waits until n more input records were committed.
func (m *member) waitCommitted(t *testing.T, n int) {
	t.Helper()
	for got := 0; got < n; {
		select {
		case k := <-m.committed:
			got += k
		case <-time.After(guard):
			t.Fatalf("%d of %d records committed", got, n)
		}
	}
}

// checkRecall asserts that every second turn's verdict is the reference
// record and fails recall (it needed its session's first turn).
func checkRecall(t *testing.T, brokers []string, want map[string]string, second []row) {
	t.Helper()
	got := verdicts(t, brokers, outTopic, len(want))
	for _, r := range second {
		recs := got[r.turnID]
		if len(recs) == 0 || recs[len(recs)-1] != want[r.turnID] {
			t.Fatalf("%s: %v\nwant %s", r.turnID, recs, want[r.turnID])
		}
		var rec persona.Record
		if err := json.Unmarshal([]byte(recs[0]), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Verdict != persona.RecallFailed {
			t.Fatalf("%s: %s, want %s", r.turnID, rec.Verdict, persona.RecallFailed)
		}
	}
}

// With a cache of 3 sessions and 12 sessions judged 5 records a poll, the
// cache holds exactly 3 states while the local store holds all 12, and every
// second turn still fails recall citing its first: the states evicted from
// the cache were read back from the local store.
func TestMoreSessionsThanTheCacheHoldsKeepRecallAndTheCacheStaysBounded(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(12)
	want := reference(t, j, append(append([]row{}, first...), second...))
	brokers := newCluster(t, 2)
	cfg := config(t, brokers, j)
	cfg.CacheSessions, cfg.MaxPollRecords, cfg.StateDir = 3, 5, t.TempDir()
	m := start(t, cfg)
	produce(t, brokers, first)
	m.waitCommitted(t, len(first))
	produce(t, brokers, second)
	m.waitCommitted(t, len(second))
	if n := kafka.CacheLen(m.c); n != 3 {
		t.Fatalf("cache holds %d sessions, want 3 (its bound)", n)
	}
	if n, err := kafka.StoredSessions(m.c); err != nil || n != 12 {
		t.Fatalf("local stores hold %d sessions (%v), want 12", n, err)
	}
	checkRecall(t, brokers, want, second)
}

// A consumer restarted with the same --state-dir reads no changelog record
// (its local store is up to date); one whose local store is behind (another
// member judged sessions meanwhile) reads only what it missed, and recall
// holds for the sessions of both.
func TestALocalStoreIsReusedOnRestartAndCaughtUpWhenBehind(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(8)
	want := reference(t, j, append(append([]row{}, first...), second...))
	brokers := newCluster(t, 2)
	dirA, dirB := t.TempDir(), t.TempDir()
	restored := make(chan int, 10)
	cfgIn := func(dir string) kafka.Config {
		cfg := config(t, brokers, j)
		cfg.StateDir = dir
		return kafka.WithOnRestored(cfg, func(_ []int32, read int) { restored <- read })
	}
	reads := func(t *testing.T) int { // one consumer alone gets both partitions in one assignment
		t.Helper()
		select {
		case n := <-restored:
			return n
		case <-time.After(guard):
			t.Fatal("no restore")
		}
		return 0
	}

	a := start(t, cfgIn(dirA))
	if n := reads(t); n != 0 {
		t.Fatalf("a fresh store read %d changelog records, want 0 (the changelog is empty)", n)
	}
	produce(t, brokers, first[:4])
	a.waitCommitted(t, 4)
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}

	a2 := start(t, cfgIn(dirA))
	if n := reads(t); n != 0 {
		t.Fatalf("a restart with the same state dir read %d changelog records, want 0", n)
	}
	if err := a2.stop(); err != nil {
		t.Fatal(err)
	}

	b := start(t, cfgIn(dirB)) // a fresh store: reads the 4 states A wrote, and their 4 turn records
	if n := reads(t); n != 8 {
		t.Fatalf("a fresh store read %d changelog records, want 8 (a state and a turn record per session)", n)
	}
	produce(t, brokers, first[4:])
	b.waitCommitted(t, 4)
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}

	a3 := start(t, cfgIn(dirA)) // behind by the 4 states B wrote, and their 4 turn records
	if n := reads(t); n != 8 {
		t.Fatalf("a store behind by 4 states read %d changelog records, want 8", n)
	}
	produce(t, brokers, second)
	a3.waitCommitted(t, len(second))
	checkRecall(t, brokers, want, second)
}

// A local store file of another format (an older evident) is removed and
// rebuilt from the changelog, not refused: the file is only a cache.
func TestALocalStoreOfAnotherFormatIsRebuiltFromTheChangelog(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(2)
	want := reference(t, j, append(append([]row{}, first...), second...))
	brokers := newCluster(t, 1)
	dir := t.TempDir()
	restored := make(chan int, 4)
	cfg := kafka.WithOnRestored(config(t, brokers, j), func(_ []int32, read int) { restored <- read })
	cfg.StateDir = dir
	a := start(t, cfg)
	<-restored
	produce(t, brokers, first)
	a.waitCommitted(t, len(first))
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if err := kafka.SetLocalFormat(filepath.Join(dir, stateTopic+"-0.sqlite"), "0"); err != nil {
		t.Fatal(err)
	}
	b := start(t, cfg)
	select {
	case n := <-restored:
		if n != 4 {
			t.Fatalf("the rebuilt store read %d changelog records, want 4 (a state and a turn record per session)", n)
		}
	case <-time.After(guard):
		t.Fatal("no restore")
	}
	produce(t, brokers, second)
	b.waitCommitted(t, len(second))
	checkRecall(t, brokers, want, second)
}
