package kafka_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"evident/kafka"
)

// runOnce runs a consumer of cfg until Run returns, and returns its error
// and how long it took (logged, never asserted: the bound is
// Config.BrokerTimeout's, not the test's).
func runOnce(t *testing.T, cfg kafka.Config) (time.Duration, error) {
	t.Helper()
	c, err := kafka.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	t0 := time.Now()
	err = c.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run still waiting after %v", guard)
	}
	return time.Since(t0), err
}

// A consumer stops, with an error naming what is wrong, when no broker
// answers at its address, or when one of its topics is missing — rather
// than waiting without a word — and once the topic exists, a restart judges
// every row.
func TestAConsumerStopsNamingAnUnreachableBrokerOrAMissingTopicAndARestartResumes(t *testing.T) {
	j := demoJudge(t)
	t.Run("no broker at the address", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		took, err := runOnce(t, config(t, []string{addr}, j))
		t.Logf("stopped after %v: %v", took, err)
		if err == nil || !strings.Contains(err.Error(), "no broker of "+addr+" answered within 15s") {
			t.Fatalf("Run: %v; want an error naming %s", err, addr)
		}
	})
	for _, tc := range []struct{ role, topic string }{
		{"state", stateTopic}, {"output", outTopic}, {"dead-letter", deadTopic}, {"input", inTopic},
	} {
		t.Run("no "+tc.role+" topic", func(t *testing.T) {
			var others []string
			for _, x := range []string{inTopic, outTopic, stateTopic, deadTopic} {
				if x != tc.topic {
					others = append(others, x)
				}
			}
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, others...))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			brokers := c.ListenAddrs()
			first, second := recallRows(4)
			rows := append(append([]row{}, first...), second...)
			want := reference(t, j, rows)
			if tc.topic != inTopic {
				produce(t, brokers, rows)
			}
			took, err := runOnce(t, config(t, brokers, j))
			t.Logf("stopped after %v: %v", took, err)
			if err == nil || !strings.Contains(err.Error(), tc.role+" topic "+tc.topic) || !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
				t.Fatalf("Run: %v; want an error naming the %s topic %s", err, tc.role, tc.topic)
			}
			createTopic(t, brokers, tc.topic, 2, nil)
			if tc.topic == inTopic {
				produce(t, brokers, rows)
			}
			stop := runConsumer(t, config(t, brokers, j))
			got := verdicts(t, brokers, outTopic, len(want))
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			for id, recs := range got {
				if len(recs) != 1 || recs[0] != want[id] {
					t.Fatalf("%s: %q\nwant %s", id, recs, want[id])
				}
			}
		})
	}
}

// A state topic with fewer partitions than the input topic stops the
// consumer before it judges anything, naming both counts.
func TestAStateTopicWithFewerPartitionsThanTheInputStopsTheConsumer(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, inTopic, outTopic, deadTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	createTopic(t, c.ListenAddrs(), stateTopic, 2, nil)
	_, err = runOnce(t, config(t, c.ListenAddrs(), demoJudge(t)))
	if want := "state topic evident-state has 2 partitions, fewer than the 3 of input topic chat_turns"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v; want %q", err, want)
	}
}

// A broker that goes away while the consumer runs stops it with an error
// naming the broker's address, and a consumer started once the broker is
// back (its data kept on disk) judges the rows sent since, once each, with
// the sessions' state: nothing judged before is judged again.
func TestABrokerGoneMidRunIsNamedAndARestartResumesWhereItStopped(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(6)
	want := reference(t, j, append(append([]row{}, first...), second...))
	dir := t.TempDir()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SeedTopics(2, inTopic, outTopic, stateTopic, deadTopic))
	if err != nil {
		t.Fatal(err)
	}
	brokers := c.ListenAddrs()
	_, port, err := net.SplitHostPort(brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	// The first member cannot leave the group (its broker is gone): the
	// group waits out its session, 6 s (kfake's least) instead of 45.
	cfg := config(t, brokers, j)
	cfg.Opts = []kgo.Opt{kgo.SessionTimeout(6 * time.Second)}
	produce(t, brokers, first)
	m := start(t, cfg)
	m.waitCommitted(t, len(first))
	t0 := time.Now()
	c.Close()
	select {
	case <-m.exited:
	case <-time.After(guard):
		t.Fatalf("Run still waiting %v after the broker went away", guard)
	}
	err = m.stop()
	t.Logf("stopped %v after the broker went away: %v", time.Since(t0), err)
	if err == nil || !strings.Contains(err.Error(), brokers[0]) {
		t.Fatalf("Run: %v; want an error naming %s", err, brokers[0])
	}

	p, _ := strconv.Atoi(port)
	c2, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.Ports(p))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	produce(t, brokers, second)
	m2 := start(t, cfg)
	m2.waitCommitted(t, len(second))
	got := verdicts(t, brokers, outTopic, len(want))
	for id, recs := range got {
		if len(recs) != 1 || recs[0] != want[id] {
			t.Fatalf("%s: %d verdicts %q\nwant one: %s", id, len(recs), recs, want[id])
		}
	}
	if err := m2.stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
