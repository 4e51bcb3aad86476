package kafka_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"evident/kafka"
	"evident/persona"
)

// smallCluster is a kfake cluster whose brokers take records of at most
// maxMessage bytes (message.max.bytes) on every topic but the input topic,
// which takes 16 MiB: a producer may write a row larger than any record the
// consumer may write back. The four topics have partitions partitions.
func smallCluster(t testing.TB, partitions int32, maxMessage int) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(maxMessage)}),
		kfake.SeedTopics(partitions, outTopic, stateTopic, deadTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	createTopic(t, c.ListenAddrs(), inTopic, partitions, map[string]string{"max.message.bytes": strconv.Itoa(16 << 20)})
	return c.ListenAddrs()
}

// createTopic creates topic with configs.
func createTopic(t testing.TB, brokers []string, topic string, partitions int32, configs map[string]string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// readAll reads topic from its start to the end offsets it has now and
// returns every record.
func readAll(t testing.TB, brokers []string, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mresp.Topics[0].Partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p.Partition, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	left := map[int32]int64{}
	from := map[int32]kgo.Offset{}
	for _, p := range resp.Topics[0].Partitions {
		if p.Offset > 0 {
			left[p.Partition] = p.Offset
			from[p.Partition] = kgo.NewOffset().AtStart()
		}
	}
	var out []*kgo.Record
	if len(left) == 0 {
		return nil
	}
	rc, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	for len(left) > 0 {
		fs := rc.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: partitions %v not read to their end", topic, left)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return out
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// turnRow is a chat_turn row of session s for CHR-0100.
func turnRow(s, id, createdAt string, names []string, recall bool, msg, reply string) row {
	ne, _ := json.Marshal(names)
	v := fmt.Sprintf(`{"turn_id":%q,"session_id":%q,"character_id":"CHR-0100","model_id":"m","created_at":%q,"user_message":%q,"reply_text":%q,"first_person":"나","named_entities":%s,"honorific_level":"반말","user_asked_recall":%v}`,
		id, s, createdAt, msg, reply, ne, recall)
	return row{s, id, []byte(v)}
}

// On brokers whose message limit is 1 MiB, a 9 MB record, a row naming
// 2,000 entities with a 198 KB reply (its state would have held 2,000
// copies of the reply) and a record that is not JSON, sent between 40
// ordinary rows, are three dead letters that fit: each carries the first
// 64 KiB of its value, the value's size and SHA-256, the reason naming the
// limit and the row, and the record's topic, partition and offset. The 40
// rows are judged once each, as if the three had never been sent, and the
// consumer goes on judging.
func TestA9MBRecordA2000NameRowAndANonJSONRecordAreDeadLettersThatFitAndTheConsumerGoesOn(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(20)
	ordinary := append(append([]row{}, first...), second...)
	want := reference(t, j, ordinary)
	huge := turnRow("R-00", "HUGE-1", "2026-10-03T21:05:00+09:00", []string{"도윤"}, false, "길게 말해 봐", strings.Repeat("가", 3_000_000))
	names := make([]string, 2000)
	for i := range names {
		names[i] = fmt.Sprintf("N-%04d", i)
	}
	many := turnRow("R-01", "NAMES-1", "2026-10-03T21:05:00+09:00", names, false, "이름들", strings.Repeat("가나다", 22_000))
	notJSON := row{"R-02", "", []byte("not json")}
	var in []row
	for i, r := range ordinary {
		switch i {
		case 10:
			in = append(in, huge)
		case 20:
			in = append(in, many)
		case 30:
			in = append(in, notJSON)
		}
		in = append(in, r)
	}
	if len(huge.value) < 9_000_000 || len(many.value) < 198_000 {
		t.Fatalf("rows of %d and %d bytes", len(huge.value), len(many.value))
	}

	brokers := smallCluster(t, 2, 1<<20)
	m := start(t, config(t, brokers, j))
	sent := produce(t, brokers, in, kgo.ProducerBatchMaxBytes(16<<20)) // records of up to 16 MiB
	m.waitCommitted(t, len(in))

	got := map[string][]string{}
	for _, r := range readAll(t, brokers, outTopic) {
		got[string(r.Key)] = append(got[string(r.Key)], string(r.Value))
	}
	for id, w := range want {
		if recs := got[id]; len(recs) != 1 || recs[0] != w {
			t.Fatalf("%s: %d verdicts %.300q\nwant one: %.300s", id, len(recs), recs, w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d turns have verdicts, want %d", len(got), len(want))
	}

	dead := readAll(t, brokers, deadTopic)
	if len(dead) != 3 {
		t.Fatalf("%d dead letters, want 3", len(dead))
	}
	byOffset := map[string]*kgo.Record{}
	for _, r := range sent {
		byOffset[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = r
	}
	for _, tc := range []struct {
		name   string
		value  []byte
		reason string
	}{
		{"the 9 MB record", huge.value, `limit of a record (limit row_bytes`},
		{"the 2,000-name row", many.value, `turn "NAMES-1" names 2000 distinct entities: at most 1000 a row (limit names_per_row)`},
		{"the record that is not JSON", notJSON.value, "not a chat_turn row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := sha256.Sum256(tc.value)
			var d *kgo.Record
			for _, r := range dead {
				if header(r, "original_sha256") == hex.EncodeToString(sum[:]) {
					d = r
				}
			}
			if d == nil {
				t.Fatalf("no dead letter with the value's SHA-256")
			}
			if wantV := tc.value[:min(len(tc.value), 64<<10)]; string(d.Value) != string(wantV) {
				t.Fatalf("dead letter value of %d bytes, want the first %d of the value", len(d.Value), len(wantV))
			}
			if h := header(d, "original_size"); h != strconv.Itoa(len(tc.value)) {
				t.Fatalf("original_size %q, want %d", h, len(tc.value))
			}
			if h := header(d, "reason"); !strings.Contains(h, tc.reason) {
				t.Fatalf("reason %q, want it to contain %q", h, tc.reason)
			}
			src := byOffset[header(d, "partition")+"/"+header(d, "offset")]
			if src == nil || string(src.Value) != string(tc.value) || header(d, "topic") != inTopic || string(d.Key) != string(src.Key) {
				t.Fatalf("dead letter's topic %q partition %q offset %q key %q do not name the record", header(d, "topic"), header(d, "partition"), header(d, "offset"), d.Key)
			}
		})
	}

	// Still running: one more row is judged and committed.
	late := turnRow("R-03", "R-03-3", "2026-10-03T21:09:00+09:00", nil, false, "또 봐", "응, 또 봐.")
	produce(t, brokers, []row{late})
	m.waitCommitted(t, 1)
	if err := m.stop(); err != nil {
		t.Fatalf("Run: %v, want nil (stopped by its context)", err)
	}
}

// With a message limit of 96 KiB (the brokers take 100 KiB), a row whose
// state record would be over it, one whose verdict record would be, and one
// whose judging panics are each a dead letter naming what refused it, and
// the session's next turn is judged as if that row had never been sent: it
// fails recall citing the first turn, and is not late (the refused row had
// the latest created_at).
func TestARowWhoseStateOrVerdictWouldBeOverTheMessageLimitOrThatPanicsLeavesTheStateAsItWas(t *testing.T) {
	j := demoJudge(t)
	first := turnRow("S", "S-1", "2026-10-03T21:01:00+09:00", []string{"도윤"}, false, "가족은?", "동생 도윤이가 있어. "+strings.Repeat("가", 16_000))
	next := turnRow("S", "S-3", "2026-10-03T21:03:00+09:00", []string{}, true, "동생 이름이 뭐였지?", "글쎄, 모르겠어.")
	want := reference(t, j, []row{first, next})
	for _, tc := range []struct {
		name   string
		bad    row
		panics bool
		reason string
	}{
		{"a state over the limit", turnRow("S", "S-2", "2026-10-03T21:05:00+09:00", []string{"민수"}, false, "친구는?", "민수가 있어. "+strings.Repeat("나", 20_000)),
			false, `would make session "S"'s state`},
		{"a verdict over the limit", turnRow("S", "S-2", "2026-10-03T21:05:00+09:00", []string{}, true, "동생 이름?", "몰라. "+strings.Repeat("나", 20_000)),
			false, "verdict not written: its verdict record would be"},
		{"a panic", turnRow("S", "S-2", "2026-10-03T21:05:00+09:00", []string{"민수"}, false, "친구는?", "민수가 있어."),
			true, "internal error judging the row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			brokers := smallCluster(t, 1, 100<<10)
			cfg := config(t, brokers, j)
			cfg.MaxMessageBytes, cfg.DeadValueBytes = 96<<10, 8<<10
			if tc.panics {
				cfg = kafka.WithAfterStep(cfg, func(t *persona.Turn) {
					if t.TurnID == "S-2" {
						panic("a test's panic")
					}
				})
			}
			m := start(t, cfg)
			produce(t, brokers, []row{first, tc.bad, next})
			m.waitCommitted(t, 3)
			got := map[string][]string{}
			for _, r := range readAll(t, brokers, outTopic) {
				got[string(r.Key)] = append(got[string(r.Key)], string(r.Value))
			}
			for _, id := range []string{"S-1", "S-3"} {
				if recs := got[id]; len(recs) != 1 || recs[0] != want[id] {
					t.Fatalf("%s: %.300q\nwant %.300s", id, recs, want[id])
				}
			}
			var rec persona.Record
			if err := json.Unmarshal([]byte(got["S-3"][0]), &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Verdict != persona.RecallFailed || rec.RecallSourceTurn == nil || *rec.RecallSourceTurn != "S-1" || rec.Hedge != nil {
				t.Fatalf("S-3: %s citing %v, hedge %v; want recall failed citing S-1, no hedge", rec.Verdict, rec.RecallSourceTurn, rec.Hedge)
			}
			if len(got) != 2 {
				t.Fatalf("verdicts for %d turns, want 2", len(got))
			}
			dead := readAll(t, brokers, deadTopic)
			if len(dead) != 1 || !strings.Contains(header(dead[0], "reason"), tc.reason) {
				t.Fatalf("dead letters %d, first reason %q; want one containing %q", len(dead), header(dead[0], "reason"), tc.reason)
			}
			if n := len(dead[0].Value); n > 8<<10 {
				t.Fatalf("a dead letter of %d value bytes, over the 8 KiB cap", n)
			}
			if err := m.stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
