package kafka_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"evident/kafka"
	"evident/persona"
	"evident/persona/batch"
	"evident/persona/demo"
	"evident/persona/ingest"
	"evident/persona/live"
)

const (
	inTopic    = "chat_turns"
	outTopic   = "verdicts"
	group      = "evident"
	stateTopic = "evident-state"
	deadTopic  = "chat_turns-dead"
)

// guard bounds a test's waits so that a bug fails it instead of hanging; no
// assertion depends on it.
const guard = 60 * time.Second

func demoJudge(t testing.TB) *persona.Judge {
	t.Helper()
	j, _, err := batch.NewJudge(demo.Cards(), demo.Lexicon(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// row is one input row: its session (the key), turn_id and JSON.
type row struct {
	session, turnID string
	value           []byte
}

func demoRows(t testing.TB) []row {
	t.Helper()
	rows, err := demo.Turns().Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []row
	for {
		buf, rerr := rows.ReadRows(nil, 512, 1<<20)
		for _, r := range buf {
			tu, err := ingest.DecodeTurn(r)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, row{tu.SessionID, tu.TurnID, append([]byte(nil), r.JSON...)})
		}
		if rerr == io.EOF {
			return out
		}
		if rerr != nil {
			t.Fatal(rerr)
		}
	}
}

// recallRows are two turns per session for n sessions of CHR-0100: the first
// names 도윤, the second asks about the brother without naming him, so its
// record fails recall citing the first — only if the state crossed over.
func recallRows(n int) (first, second []row) {
	for i := range n {
		s := fmt.Sprintf("R-%02d", i)
		mk := func(id, named, asked, msg, reply string) row {
			v := fmt.Sprintf(`{"turn_id":%q,"session_id":%q,"character_id":"CHR-0100","model_id":"m","created_at":"2026-10-03T21:0%s:00+09:00","user_message":%q,"reply_text":%q,"first_person":"나","named_entities":%s,"honorific_level":"반말","user_asked_recall":%s}`,
				id, s, id[len(id)-1:], msg, reply, named, asked)
			return row{s, id, []byte(v)}
		}
		first = append(first, mk(s+"-1", `["도윤"]`, "false", "가족은?", "동생 도윤이가 있어."))
		second = append(second, mk(s+"-2", `[]`, "true", "동생 이름이 뭐였지?", "글쎄, 모르겠어."))
	}
	return first, second
}

// reference judges rows in order, one session state each: what every
// consumer must produce.
func reference(t testing.TB, j *persona.Judge, rows []row) map[string]string {
	t.Helper()
	states := map[string]*live.State{}
	out := map[string]string{}
	for _, r := range rows {
		tu, err := ingest.DecodeTurn(ingest.Raw{Line: 1, JSON: r.value})
		if err != nil {
			t.Fatal(err)
		}
		st := states[r.session]
		if st == nil {
			st = &live.State{}
			states[r.session] = st
		}
		rec, _, err := live.Step(j, st, &tu)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(&rec)
		out[r.turnID] = string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	return out
}

func newCluster(t testing.TB, partitions int32) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, inTopic, outTopic, stateTopic, deadTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// produce writes rows to the input topic, with the client options opts
// besides the brokers and topic, and returns the records with their
// partitions and offsets.
func produce(t testing.TB, brokers []string, rows []row, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(inTopic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, r := range rows {
		rs = append(rs, &kgo.Record{Key: []byte(r.session), Value: r.value})
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return rs
}

// verdicts reads the output topic from the start until want distinct
// turn_ids were seen, and returns every record per turn_id.
func verdicts(t testing.TB, brokers []string, topic string, want int) map[string][]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	got := map[string][]string{}
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: %d of %d turns after %v", topic, len(got), want, guard)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Key)] = append(got[string(r.Key)], string(r.Value)) })
	}
	return got
}

func config(t testing.TB, brokers []string, j *persona.Judge) kafka.Config {
	return kafka.Config{Brokers: brokers, Topic: inTopic, Group: group, OutTopic: outTopic, StateTopic: stateTopic,
		DeadTopic: deadTopic, Judge: j, MaxPollRecords: 40}
}

// runConsumer starts a consumer in the background; stop cancels it and
// returns Run's error.
func runConsumer(t testing.TB, cfg kafka.Config) (stop func() error) {
	t.Helper()
	c, err := kafka.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	var rerr error
	stop = func() error {
		once.Do(func() {
			cancel()
			rerr = <-done
			c.Close()
		})
		return rerr
	}
	t.Cleanup(func() { stop() })
	return stop
}

// A consumer killed in the middle of handling a poll (after judging, after
// producing the verdicts, after writing the state, each before the commit)
// loses no verdict: the next consumer of the group replays from the last
// commit, and every verdict, repeated or not, is the reference record. Only
// a kill between the verdicts and the state repeats verdicts: once the state
// is written, the replay finds the turns in it and skips them.
func TestAConsumerKilledMidBatchLosesNoVerdictAndRepeatsAreIdentical(t *testing.T) {
	j := demoJudge(t)
	rows := demoRows(t)
	want := reference(t, j, rows)
	for _, tc := range []struct {
		stage   string
		repeats bool // the killed consumer's verdicts reached the topic and are judged again
	}{{"judged", false}, {"produced", true}, {"state", false}} {
		t.Run("killed after "+tc.stage, func(t *testing.T) {
			brokers := newCluster(t, 3)
			produce(t, brokers, rows)
			polls := 0
			c, err := kafka.New(kafka.WithCrash(config(t, brokers, j), func(stage string) bool {
				if stage == "judged" {
					polls++
				}
				return polls == 2 && stage == tc.stage // the second poll: some state exists already
			}))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			err = c.Run(ctx)
			cancel()
			c.Close()
			if !errors.Is(err, kafka.ErrCrashed) {
				t.Fatalf("first consumer: %v, want ErrCrashed", err)
			}
			stop := runConsumer(t, config(t, brokers, j))
			got := verdicts(t, brokers, outTopic, len(want))
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			repeated := 0
			for id, recs := range got {
				for _, r := range recs {
					if r != want[id] {
						t.Fatalf("%s:\ngot  %s\nwant %s", id, r, want[id])
					}
				}
				if len(recs) > 1 {
					repeated++
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d turns have verdicts, want %d", len(got), len(want))
			}
			if (repeated > 0) != tc.repeats {
				t.Fatalf("%d turns repeated; want repeats %v", repeated, tc.repeats)
			}
		})
	}
}

// A second consumer joining mid-session takes over partitions with their
// state: the second turn of each recall session, judged after the
// rebalance, fails recall citing the first, whichever consumer judged which.
func TestARebalanceBetweenTwoConsumersMidSessionKeepsRecall(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(12)
	want := reference(t, j, append(append([]row{}, first...), second...))
	brokers := newCluster(t, 4)

	var mu sync.Mutex
	judgedBy := map[string]string{} // turn_id → consumer
	committed := make(chan int, 100)
	onCommit := func(name string) func([]*kgo.Record) {
		return func(rs []*kgo.Record) {
			mu.Lock()
			for _, r := range rs {
				var tu struct {
					TurnID string `json:"turn_id"`
				}
				json.Unmarshal(r.Value, &tu)
				judgedBy[tu.TurnID] = name
			}
			mu.Unlock()
			committed <- len(rs)
		}
	}
	produce(t, brokers, first)
	runConsumer(t, kafka.WithOnCommit(config(t, brokers, j), onCommit("A")))
	for n := 0; n < len(first); {
		select {
		case k := <-committed:
			n += k
		case <-time.After(guard):
			t.Fatal("consumer A did not commit the first turns")
		}
	}
	assigned := make(chan []int32, 4)
	runConsumer(t, kafka.WithOnAssigned(kafka.WithOnCommit(config(t, brokers, j), onCommit("B")), func(p []int32) { assigned <- p }))
	select {
	case p := <-assigned:
		if len(p) == 0 {
			t.Fatal("B was assigned no partition")
		}
	case <-time.After(guard):
		t.Fatal("B was never assigned partitions")
	}
	produce(t, brokers, second)
	for n := 0; n < len(second); { // verdicts are produced before their commit: wait for the commits
		select {
		case k := <-committed:
			n += k
		case <-time.After(guard):
			t.Fatal("the second turns were not committed")
		}
	}
	got := verdicts(t, brokers, outTopic, len(want))
	crossed := 0
	for _, r := range second {
		recs := got[r.turnID]
		if len(recs) != 1 || recs[0] != want[r.turnID] {
			t.Fatalf("%s: %v\nwant %s", r.turnID, recs, want[r.turnID])
		}
		var rec persona.Record
		json.Unmarshal([]byte(recs[0]), &rec)
		if rec.Verdict != persona.RecallFailed {
			t.Fatalf("%s: %s, want %s", r.turnID, rec.Verdict, persona.RecallFailed)
		}
		mu.Lock()
		if judgedBy[r.turnID] == "B" && judgedBy[r.session+"-1"] == "A" {
			crossed++
		}
		mu.Unlock()
	}
	if crossed == 0 {
		mu.Lock()
		t.Logf("judged by: %v", judgedBy)
		mu.Unlock()
		t.Fatal("no session crossed from A to B: the rebalance moved no state")
	}
}

// Rows that cannot be judged go to the dead-letter topic with the reason:
// not JSON, a key that is not the session_id, an unknown character, and a
// turn_id re-sent with a different row.
func TestRejectsGoToTheDeadLetterTopicWithTheReason(t *testing.T) {
	j := demoJudge(t)
	brokers := newCluster(t, 1)
	first, _ := recallRows(1)
	good := first[0]
	changed := row{good.session, good.turnID, bytes.Replace(good.value, []byte("동생 도윤이가 있어."), []byte("혼자야."), 1)}
	unknown := row{good.session, "U-1", bytes.Replace(bytes.Replace(good.value, []byte("CHR-0100"), []byte("CHR-NONE"), 1), []byte(good.turnID), []byte("U-1"), 1)}
	produce(t, brokers, []row{good, {good.session, "X", []byte("not json")}, {"other-key", "K", good.value}, unknown, changed})
	runConsumer(t, config(t, brokers, j))
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(deadTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var reasons []string
	for len(reasons) < 4 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("dead letters: %q", reasons)
		}
		fs.EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == "reason" {
					reasons = append(reasons, string(h.Value))
				}
			}
		})
	}
	for i, want := range []string{"not a chat_turn row", "is not the row's session_id", "unknown character_id", "conflict: turn_id"} {
		if !bytes.Contains([]byte(reasons[i]), []byte(want)) {
			t.Errorf("dead letter %d: %q, want it to contain %q", i+1, reasons[i], want)
		}
	}
}
