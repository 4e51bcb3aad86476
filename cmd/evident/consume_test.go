package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"evident/persona"
	"evident/store"
	"evident/web"
)

// evident consume judges the topic's turns with the store's latest dataset
// and writes the batch run's very records to the output topic, a record that
// is not a row to the dead-letter topic carrying --dead-value-bytes of it,
// then stops cleanly when its context ends (as on SIGINT).
func TestConsumeJudgesATopicWithTheStoresDataset(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "evident.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := web.EnsureDemo(ctx, db); err != nil {
		t.Fatal(err)
	}
	want, err := db.Records(ctx, 1, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := db.Turns(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "chat_turns", "verdicts", "evident-state", "chat_turns-dead"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	brokers := strings.Join(cluster.ListenAddrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("verdicts"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := range turns {
		b, err := json.Marshal(&turns[i])
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, &kgo.Record{Topic: "chat_turns", Key: []byte(turns[i].SessionID), Value: b})
	}
	rs = append(rs, &kgo.Record{Topic: "chat_turns", Key: []byte("X"), Value: []byte("not json at all")})
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second) // a guard against a hang, not a timing assertion
	defer cancel()
	if err := cl.ProduceSync(wctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	var errOut bytes.Buffer
	stateDir := filepath.Join(t.TempDir(), "state")
	go func() {
		c := consumeCommand()
		c.ErrWriter = &errOut
		done <- c.Run(runCtx, []string{"consume", "--brokers", brokers, "--db", path, "--state-dir", stateDir, "--dead-value-bytes", "4"})
	}()
	got := map[string]string{}
	for len(got) < len(want) {
		fs := cl.PollFetches(wctx)
		if wctx.Err() != nil {
			t.Fatalf("%d of %d verdicts; stderr:\n%s", len(got), len(want), errOut.String())
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Key)] = string(r.Value) })
	}
	dl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("chat_turns-dead"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	var dead []*kgo.Record
	for len(dead) == 0 {
		fs := dl.PollFetches(wctx)
		if wctx.Err() != nil {
			t.Fatalf("no dead letter; stderr:\n%s", errOut.String())
		}
		dead = append(dead, fs.Records()...)
	}
	size := ""
	for _, h := range dead[0].Headers {
		if h.Key == "original_size" {
			size = string(h.Value)
		}
	}
	if string(dead[0].Value) != "not " || size != "15" { // --dead-value-bytes 4 of the 15
		t.Fatalf("dead letter %q, original_size %q; want the first 4 of 15 bytes", dead[0].Value, size)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("consume after its context ended: %v", err)
	}
	for _, w := range want {
		var r persona.Record
		if err := json.Unmarshal([]byte(got[w.TurnID]), &r); err != nil {
			t.Fatalf("%s: %v", w.TurnID, err)
		}
		a, _ := json.Marshal(r)
		b, _ := json.Marshal(w)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s:\nconsume %s\nbatch   %s", w.TurnID, a, b)
		}
	}
	for _, f := range []string{"evident-state-0.sqlite", "evident-state-1.sqlite"} { // one local store per partition, kept
		if _, err := os.Stat(filepath.Join(stateDir, f)); err != nil {
			t.Errorf("--state-dir: %v", err)
		}
	}
	if !strings.Contains(errOut.String(), "consuming chat_turns as group evident") {
		t.Fatalf("stderr: %s", errOut.String())
	}
}

// Without brokers, or with only one of --cards/--lexicon, consume says what
// is missing.
func TestConsumeNamesAMissingFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no brokers", []string{}, "--brokers is required"},
		{"cards without a lexicon", []string{"--brokers", "127.0.0.1:1", "--cards", "c.json"}, "--cards and --lexicon go together"},
		{"a cache of no sessions", []string{"--brokers", "127.0.0.1:1", "--cache-sessions", "0"}, "--cache-sessions is 0; it must be at least 1"},
		{"a cache of no bytes", []string{"--brokers", "127.0.0.1:1", "--cache-mib", "0"}, "--cache-mib is 0: it must be positive"},
		{"no names a row", []string{"--brokers", "127.0.0.1:1", "--live-max-names", "0"}, "--live-max-names is 0: it must be positive"},
		{"a negative row limit", []string{"--brokers", "127.0.0.1:1", "--live-max-row-bytes", "-1"}, "--live-max-row-bytes is -1: it must be positive"},
		{"no state", []string{"--brokers", "127.0.0.1:1", "--live-max-state-bytes", "0"}, "--live-max-state-bytes is 0: it must be positive"},
		{"no message", []string{"--brokers", "127.0.0.1:1", "--max-message-bytes", "0"}, "--max-message-bytes is 0: it must be positive"},
		{"an empty dead letter", []string{"--brokers", "127.0.0.1:1", "--dead-value-bytes", "0"}, "--dead-value-bytes is 0: it must be positive"},
		{"a broker timeout under a second", []string{"--brokers", "127.0.0.1:1", "--broker-timeout", "10ms"}, "--broker-timeout is 10ms: it must be at least 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runSub(t, consumeCommand(), tc.args...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want an error containing %q", code, errOut, tc.want)
			}
		})
	}
}
