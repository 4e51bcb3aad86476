package kafka_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"evident/persona"
	"evident/persona/ingest"
	"evident/persona/live"
)

// lockedBuf is a log destination safe for the consumer's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// oldState is the changelog value an earlier evident wrote for a session
// after judging row r: the live state, the turn's digest and its record as
// pending (read and ignored since); digest replaces the digest when not "".
func oldState(t *testing.T, j *persona.Judge, r row, digest string) []byte {
	t.Helper()
	tu, err := ingest.DecodeTurn(ingest.Raw{Line: 1, JSON: r.value})
	if err != nil {
		t.Fatal(err)
	}
	var st live.State
	rec, _, err := live.Step(j, &st, &tu)
	if err != nil {
		t.Fatal(err)
	}
	recJSON, err := json.Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if digest == "" {
		digest = live.Digest(&tu)
	}
	v, err := json.Marshal(map[string]any{"live": &st, "turns": map[string]string{tu.TurnID: digest},
		"pending": map[string]string{tu.TurnID: string(recJSON)}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A changelog written by an earlier evident (pending records included) is
// restored: the second turn of its session fails recall citing the first,
// the first re-sent as it was is skipped, and re-sent changed it is a
// conflict. A state whose digest is not hex is skipped, and logged, without
// stopping the restore of the others: its session's next turn is judged as
// the session's first.
func TestAChangelogOfAnEarlierVersionRestoresAndABadStateIsSkipped(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(3)
	brokers := newCluster(t, 1)

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	states := []*kgo.Record{
		{Topic: stateTopic, Key: []byte("R-00"), Value: oldState(t, j, first[0], "")},
		{Topic: stateTopic, Key: []byte("R-01"), Value: oldState(t, j, first[1], strings.Repeat("zz", 32))},
		{Topic: stateTopic, Key: []byte("R-02"), Value: oldState(t, j, first[2], "")},
	}
	if err := cl.ProduceSync(ctx, states...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	var logs lockedBuf
	cfg := config(t, brokers, j)
	cfg.Log = log.New(&logs, "", 0)
	m := start(t, cfg)
	changed := row{first[2].session, first[2].turnID, bytes.Replace(first[2].value, []byte("동생 도윤이가 있어."), []byte("혼자야."), 1)}
	in := []row{first[0], second[0], second[1], changed, second[2]}
	produce(t, brokers, in)
	m.waitCommitted(t, len(in))

	wantRecall := reference(t, j, []row{first[0], second[0], first[2], second[2]})
	wantFresh := reference(t, j, []row{second[1]}) // R-01's state was skipped
	got := verdicts(t, brokers, outTopic, 3)
	if recs := got[first[0].turnID]; len(recs) != 0 {
		t.Fatalf("re-sent %s got verdicts %q, want none (its state has it)", first[0].turnID, recs)
	}
	for _, tc := range []struct {
		id, want string
		verdict  persona.Verdict
	}{
		{second[0].turnID, wantRecall[second[0].turnID], persona.RecallFailed},
		{second[2].turnID, wantRecall[second[2].turnID], persona.RecallFailed},
		{second[1].turnID, wantFresh[second[1].turnID], ""},
	} {
		recs := got[tc.id]
		if len(recs) != 1 || recs[0] != tc.want {
			t.Fatalf("%s: %q\nwant %s", tc.id, recs, tc.want)
		}
		var rec persona.Record
		if err := json.Unmarshal([]byte(recs[0]), &rec); err != nil {
			t.Fatal(err)
		}
		if tc.verdict != "" && rec.Verdict != tc.verdict {
			t.Fatalf("%s: %s, want %s", tc.id, rec.Verdict, tc.verdict)
		}
		if tc.verdict == "" && rec.Verdict == persona.RecallFailed {
			t.Fatalf("%s failed recall: the skipped state was used", tc.id)
		}
	}
	dead := verdicts(t, brokers, deadTopic, 1)
	if recs := dead[changed.session]; len(recs) != 1 || recs[0] != string(changed.value) {
		t.Fatalf("dead letters %q, want the changed row keyed %s", dead, changed.session)
	}
	for _, want := range []string{
		fmt.Sprintf("state of session %q skipped", "R-01"),
		fmt.Sprintf("turn %q already judged with the same row", first[0].turnID),
		"dead letter: conflict",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if err := m.stop(); err != nil {
		t.Fatal(err)
	}
}

// A turn record whose session's state record never made it (a consumer
// killed between the two: the turn records go first) is not taken as a
// judged turn: its seq is not below the turn count of the session's state.
// The turn, sent again to a consumer that restores the changelog, is judged
// (recall fails citing the session's first turn), not skipped.
func TestATurnRecordWithoutItsStateRecordDoesNotMakeItsTurnJudged(t *testing.T) {
	j := demoJudge(t)
	first, second := recallRows(1)
	want := reference(t, j, []row{first[0], second[0]})
	brokers := newCluster(t, 1)
	a := start(t, config(t, brokers, j))
	produce(t, brokers, first)
	a.waitCommitted(t, 1)
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}

	tu, err := ingest.DecodeTurn(ingest.Raw{Line: 1, JSON: second[0].value})
	if err != nil {
		t.Fatal(err)
	}
	d, err := hex.DecodeString(live.Digest(&tu))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	orphan := &kgo.Record{Topic: stateTopic, Key: []byte(second[0].session + "\xff" + second[0].turnID), Value: append(d, 1)} // seq 1; the state says 1 turn
	if err := cl.ProduceSync(ctx, orphan).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	b := start(t, config(t, brokers, j)) // a fresh local store: restored from the changelog, orphan included
	produce(t, brokers, second)
	b.waitCommitted(t, 1)
	got := verdicts(t, brokers, outTopic, 2)
	if recs := got[second[0].turnID]; len(recs) != 1 || recs[0] != want[second[0].turnID] {
		t.Fatalf("%s: %q\nwant %s", second[0].turnID, recs, want[second[0].turnID])
	}
	var rec persona.Record
	if err := json.Unmarshal([]byte(got[second[0].turnID][0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != persona.RecallFailed {
		t.Fatalf("%s: %s, want %s", second[0].turnID, rec.Verdict, persona.RecallFailed)
	}
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
}
