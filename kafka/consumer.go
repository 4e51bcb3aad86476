// Package kafka is the character-card judge as a Kafka consumer group
// (evident consume; README "Live judging", Kafka): it reads chat_turn rows
// from a topic, judges each turn in arrival order with persona/live against
// its session's state, and writes verdict records to an output topic, with
// github.com/twmb/franz-go.
//
// It is an adapter: it owns the topics' wire format, the per-session state
// store and the commit protocol, and decides no verdict (persona/live and
// persona do). It must not import store, runstore, web or cmd.
//
// # Topics and keys
//
//   - Input (Config.Topic, "chat_turns"): one chat_turn row per record, the
//     JSON object of a JSON Lines row, keyed by session_id, so that a
//     partition holds whole sessions in order. A record whose key is not its
//     session_id is rejected: its session could be split across partitions.
//   - Output (Config.OutTopic, "verdicts"): one verdict record per turn
//     (persona/schema.json), keyed by turn_id, so that a compacted verdict
//     topic keeps one record per turn; header "session_id".
//   - State (Config.StateTopic, default GROUP-state): a compacted changelog,
//     written to the partition number of the input record (it must have at
//     least as many partitions as the input topic), of two kinds of record:
//     a session's state record, keyed by its session_id, whose value is
//     {"live":STATE} (STATE: persona/live's stored form of the State), and
//     one turn record per judged turn, keyed by session_id, byte 0xFF and
//     turn_id, whose value is the turn's digest (persona/live.Digest, 32
//     bytes) and its seq (its arrival position in the session, a uvarint).
//     On partition assignment the consumer reads the assigned partitions of
//     the changelog to their end before judging, the way Kafka Streams
//     restores a state store. A state record of an earlier version, whose
//     value also holds "turns" (turn_id → hex digest), is read too.
//   - Dead letters (Config.DeadTopic, default TOPIC-dead): records that
//     cannot be judged, keyed by the original key (cut to 1 KiB), with the
//     first Config.DeadValueBytes of the original value (64 KiB) and headers
//     "reason" (cut to 1 KiB), "topic", "partition", "offset",
//     "original_size" and "original_sha256" (the whole value's bytes and
//     SHA-256, hex), and "original_key_size" and "original_key_sha256" when
//     the key was cut.
//
// # Delivery
//
// At least once, idempotent by turn_id. Each poll's records are judged, then
// their verdicts and dead letters are produced and flushed, then the state
// topic's records of every session they touched (for each session its turn
// records, then its state record), then the local store is written, and
// only then are their offsets committed; rebalances are held back while a
// poll is being handled (kgo.BlockRebalanceOnPoll), so a partition moves
// only between polls with nothing in flight. A turn counts as judged when
// its turn record's seq is below the turn count of its session's state:
// the state record, written after the turn records of the same partition
// (the idempotent producer keeps their order, and fails the later records
// of a partition when one fails), is what commits them, and it is written
// after the verdicts are acknowledged. So a consumer that dies after writing
// the state but before committing leaves nothing to redo: the next owner
// replays the records from the last commit, finds their turn_ids with the
// same digest and skips them. One that dies before its state record was
// written leaves the old state (and maybe turn records of seqs it does not
// count), and the replay judges the same turns against the same state,
// giving the same records and the same turn records again. So a replay can
// repeat a verdict, byte for byte, never lose or change one.
//
// # Bounded by construction
//
// No record stops the consumer, and none makes it hold or write more than
// its limits (README "Security model"):
//
//   - An input record's value holds at most Limits.MaxRowBytes plus 1 MiB
//     (2 MiB by default); a larger one is a dead letter before it is
//     decoded.
//   - Rows are judged under persona/live.Limits (Config.Limits: 1,000
//     distinct names and 1 MiB of reply_text plus user_message a row, 2 MiB
//     of state a session); a row over one is a dead letter whose reason
//     names the limit and the row, and the session's state is unchanged.
//     The state limit is lowered, per session, to what a state record
//     within Config.MaxMessageBytes holds, so a state record is never over
//     the message limit: persona/live.State.Bytes is exactly its stored
//     form's length. The changelog holds, per session, that state record
//     and 40-odd bytes per judged turn plus its ids.
//   - Every record written is checked against Config.MaxMessageBytes
//     (1,000,000 bytes, as a broker counts a batch of one record), which is
//     also the producer's batch cap: a verdict record over it is a dead
//     letter, its session's state rebuilt without the turn (the stored
//     state stepped again through the poll's accepted turns of the
//     session); a turn record over it (ids of hundreds of KB) is a dead
//     letter before judging; a dead letter never is (New checks that the
//     largest fits).
//   - A panic while judging a row (a bug) is a dead letter too, logged with
//     its stack, the session's state rebuilt the same way.
//   - Only an infrastructure failure stops Run, with an error naming the
//     brokers or the topic: no broker answering within Config.BrokerTimeout
//     (15 s; checked before the group is joined, and after every poll that
//     found nothing in a third of it), a missing or unauthorized topic or a
//     state topic with too few partitions (checked before the group is
//     joined), a produce not acknowledged in time or refused (a topic whose
//     max.message.bytes is below the message limit: the error says so), a
//     commit that fails, a restore that reads nothing in time. The records
//     since the last commit are replayed by the next owner of their
//     partition, this consumer after a restart.
//   - Memory: a poll holds at most Config.MaxPollRecords records (fetches
//     of at most 32 MiB a partition) and the states of the sessions they
//     touch, each at most the state limit; the cache holds at most
//     Config.CacheSessions states and Config.CacheBytes of them.
//
// # Decisions where the spec is silent
//
//   - A turn_id already judged with another row (a different digest,
//     persona/live.Digest) goes to the dead-letter topic ("conflict"); one
//     re-sent with the same row is skipped (its verdict is in the output
//     topic already), except within one poll, where its record is produced
//     again.
//   - A session_id holding byte 0xFF (not UTF-8; the JSON decoder gives
//     valid UTF-8) is a dead letter: the byte separates a turn record's key.
//   - State is kept the way Kafka Streams keeps a state store: a local
//     SQLite file per assigned input partition (Config.StateDir) holds a row
//     per session (its live state) and a row per judged turn (its seq and
//     digest), and an LRU of decoded states sits in front of it. Memory is
//     flat in the number of sessions beyond the cache: a state not cached
//     is read from the file, and a re-sent turn_id is looked up there by
//     its key. The file is written after each poll's state records are
//     produced, with the changelog offset after them; on assignment it is
//     caught up from that offset (from the start when missing, or when its
//     offset is outside the changelog's). The changelog stays the source of
//     truth: a file can be deleted at any time.
//   - A state record holds the whole live state, rewritten by every poll
//     that judged a turn of the session: it is bounded by the state limit,
//     and one record per session keeps a session's change atomic without
//     transactions (per-entity records could be half written). The turns,
//     which grow without bound, are the small per-turn records.
//   - Forgetting a session takes a tombstone of its state record (the
//     local store then drops the session's turn rows too); its turn records
//     should be tombstoned as well: once compaction has dropped the state's
//     tombstone, a session_id used again would find them counted.
//   - A poll's records are judged in parallel, up to GOMAXPROCS goroutines,
//     in shares by partition and by a hash of the key (a session's turns are
//     all in one share: one partition, one key); within a share, records are
//     judged in offset order. What they give is still produced in the poll's
//     order, and committed together, verdicts before states. (By partition
//     alone was not enough: a fetch is filled partition by partition, so a
//     poll mostly holds one.)
//   - Produced records are flushed at once (kgo.Client.Flush), not left to
//     the producer's linger: the poll waits for their acknowledgements.
//   - A member that is not the partition's owner any more but still writes
//     (a zombie) can leave a local store out of step with the changelog until
//     the file is removed; the group's fencing of commits is not extended to
//     the state topic (no transactions).
package kafka

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"evident/persona"
	"evident/persona/ingest"
	"evident/persona/live"
)

// The defaults of Config's size and time limits (package doc, "Bounded by
// construction").
const (
	// DefaultMaxMessageBytes is Config.MaxMessageBytes when 0: a little
	// under Kafka's default max.message.bytes (1,048,588) and franz-go's
	// default batch cap (1,000,012), so that a default topic takes every
	// record the consumer writes.
	DefaultMaxMessageBytes = 1_000_000
	// DefaultDeadValueBytes is Config.DeadValueBytes when 0 (64 KiB).
	DefaultDeadValueBytes = 64 << 10
	// DefaultBrokerTimeout is Config.BrokerTimeout when 0.
	DefaultBrokerTimeout = 15 * time.Second
)

// A dead letter's key and reason are cut to these many bytes (its value to
// Config.DeadValueBytes).
const (
	deadKeyBytes    = 1 << 10
	deadReasonBytes = 1 << 10
)

// Config configures a Consumer.
type Config struct {
	// Brokers are the seed brokers, host:port. Required.
	Brokers []string
	// Topic is the input topic of chat_turn rows. Required.
	Topic string
	// Group is the consumer group. Required.
	Group string
	// OutTopic receives the verdict records. Required.
	OutTopic string
	// StateTopic is the compacted changelog of session state; "" means
	// Group+"-state".
	StateTopic string
	// DeadTopic receives the rows that cannot be judged; "" means
	// Topic+"-dead".
	DeadTopic string
	// Judge holds the cards, the lexicon and the speech profile. Required.
	Judge *persona.Judge
	// MaxPollRecords bounds the records handled between two commits; 0
	// means 10,000.
	MaxPollRecords int
	// StateDir holds the local state store: one SQLite file per assigned
	// input partition (STATE_TOPIC-PARTITION.sqlite), kept between runs so
	// that a restart reads only the changelog records written since. ""
	// means a temporary directory, removed by Close (every assignment then
	// restores from the changelog's start).
	StateDir string
	// CacheSessions bounds the session states kept decoded in memory (an LRU
	// in front of the local store); 0 means DefaultCacheSessions.
	CacheSessions int
	// CacheBytes bounds the stored size (persona/live.State.Bytes) of the
	// cached states together; 0 means DefaultCacheBytes.
	CacheBytes int
	// Limits bound a row (distinct names, bytes of reply_text plus
	// user_message) and a session's state (its stored JSON), as for the
	// live API (persona/live.Limits; zero fields are the defaults: 1,000
	// names, 1 MiB, 2 MiB). A row over one is a dead letter naming the limit
	// and the row, and the state is unchanged. The state limit is lowered,
	// per session, to what a state record within MaxMessageBytes holds
	// (about 1 MB with the defaults). An input record's value may hold at
	// most MaxRowBytes plus 1 MiB.
	Limits live.Limits
	// MaxMessageBytes bounds every record the consumer writes (verdicts,
	// state records, dead letters), in bytes as the broker counts a batch
	// of one record against max.message.bytes; 0 means
	// DefaultMaxMessageBytes. It is also the producer's batch cap
	// (kgo.ProducerBatchMaxBytes), so the output, state and dead-letter
	// topics must take batches of this size (their max.message.bytes at
	// least this); a record that would be larger is never produced: its
	// input row is a dead letter naming the limit. It must hold the
	// largest dead letter (DeadValueBytes plus at most 3 KiB and the input
	// topic's name; New says so otherwise), and at most 1 GiB.
	MaxMessageBytes int
	// DeadValueBytes is how much of a rejected record's value its dead
	// letter carries (the first DeadValueBytes bytes; headers
	// "original_size" and "original_sha256" give the whole value's size and
	// SHA-256); 0 means DefaultDeadValueBytes.
	DeadValueBytes int
	// BrokerTimeout bounds every wait on the brokers: a reachability check
	// before the group is joined and after each idle third of it, each
	// produce's acknowledgements, each commit, each step of a restore. Run
	// stops with an error naming the brokers or the topic when it runs out;
	// 0 means DefaultBrokerTimeout.
	BrokerTimeout time.Duration
	// Log receives one line per dead letter and per restore; nil discards.
	Log *log.Logger
	// Opts are more franz-go options for the client (TLS, SASL, timeouts).
	Opts []kgo.Opt

	// crash, when set (tests), is asked at each stage of a poll's handling
	// whether to stop there as if the process were killed.
	crash func(stage string) bool
	// onCommit, when set (tests), is called after each commit with the
	// records committed.
	onCommit func(recs []*kgo.Record)
	// onAssigned, when set (tests), is called after a restore.
	onAssigned func(parts []int32)
	// onRestored, when set (tests), is called after a restore with the
	// number of changelog records it read.
	onRestored func(parts []int32, read int)
	// afterStep, when set (tests), is called after each successful Step,
	// before its record is encoded.
	afterStep func(t *persona.Turn)
}

// sessionState is a state record's value: the session's live state
// (persona/live's stored form). Turns, each judged turn_id's digest, was
// written by versions before turn records (and Pending, the records of turns
// not yet committed, before the local store); both are read (Pending
// ignored: a turn in a state has had its verdict produced).
type sessionState struct {
	Live    live.State        `json:"live"`
	Turns   map[string]string `json:"turns,omitempty"`
	Pending map[string]string `json:"pending,omitempty"`
}

// Consumer is one member of the judge's consumer group. Create it with New,
// run it with Run, release it with Close.
type Consumer struct {
	cfg    Config
	limits live.Limits // cfg.Limits, resolved
	cl     *kgo.Client

	mu     sync.Mutex
	stores map[int32]*localStore // by assigned input partition
	cache  *lru                  // decoded live states, bounded
	tmpDir string                // StateDir made by New, removed by Close
	errc   chan error            // a failed restore, for Run
}

// ErrCrashed is returned by Run when a test's crash hook stopped it.
var ErrCrashed = errors.New("kafka: stopped by the crash hook")

// New connects a consumer (the group is joined by Run). Errors: a required
// field is missing, or the client options are invalid.
func New(cfg Config) (*Consumer, error) {
	switch {
	case len(cfg.Brokers) == 0:
		return nil, errors.New("kafka: no brokers (--brokers host:port)")
	case cfg.Topic == "" || cfg.Group == "" || cfg.OutTopic == "":
		return nil, errors.New("kafka: the input topic, the group and the output topic are required")
	case cfg.Judge == nil:
		return nil, errors.New("kafka: no judge")
	}
	if cfg.StateTopic == "" {
		cfg.StateTopic = cfg.Group + "-state"
	}
	if cfg.DeadTopic == "" {
		cfg.DeadTopic = cfg.Topic + "-dead"
	}
	if cfg.MaxPollRecords <= 0 {
		cfg.MaxPollRecords = 10_000
	}
	if cfg.Log == nil {
		cfg.Log = log.New(io.Discard, "", 0)
	}
	if cfg.CacheSessions <= 0 {
		cfg.CacheSessions = DefaultCacheSessions
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if err := cfg.Limits.Check(); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.DeadValueBytes == 0 {
		cfg.DeadValueBytes = DefaultDeadValueBytes
	}
	if cfg.BrokerTimeout <= 0 {
		cfg.BrokerTimeout = DefaultBrokerTimeout
	}
	if cfg.DeadValueBytes < 0 || cfg.MaxMessageBytes < 0 {
		return nil, fmt.Errorf("kafka: the message limit (%d bytes) and the dead-letter value cap (%d bytes) must be positive", cfg.MaxMessageBytes, cfg.DeadValueBytes)
	}
	switch least := batchBytes(largestDeadLetter(&cfg)); {
	case cfg.MaxMessageBytes > 1<<30:
		return nil, fmt.Errorf("kafka: the message limit is %d bytes; Kafka takes at most %d", cfg.MaxMessageBytes, 1<<30)
	case cfg.MaxMessageBytes < least:
		return nil, fmt.Errorf("kafka: the message limit of %d bytes cannot hold a dead letter carrying %d bytes of its value (%d bytes with its key, reason and headers): raise the limit or lower the dead-letter value cap", cfg.MaxMessageBytes, cfg.DeadValueBytes, least)
	}
	c := &Consumer{cfg: cfg, limits: cfg.Limits.Resolved(), stores: map[int32]*localStore{}, cache: newLRU(cfg.CacheSessions, cfg.CacheBytes), errc: make(chan error, 1)}
	if cfg.StateDir == "" {
		d, err := os.MkdirTemp("", "evident-consume-state-")
		if err != nil {
			return nil, fmt.Errorf("kafka: local state directory: %w", err)
		}
		c.tmpDir, c.cfg.StateDir = d, d
	} else if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("kafka: local state directory: %w", err)
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.RecordPartitioner(partitioner{state: cfg.StateTopic, byKey: kgo.StickyKeyPartitioner(nil), manual: kgo.ManualPartitioner()}),
		kgo.OnPartitionsAssigned(c.assigned),
		kgo.OnPartitionsRevoked(c.dropped),
		kgo.OnPartitionsLost(c.dropped),
		kgo.FetchMaxPartitionBytes(32 << 20),
		kgo.ProducerBatchMaxBytes(int32(cfg.MaxMessageBytes)),
		kgo.RecordDeliveryTimeout(cfg.BrokerTimeout),
	}, cfg.Opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		if c.tmpDir != "" {
			os.RemoveAll(c.tmpDir)
		}
		return nil, fmt.Errorf("kafka: %w", err)
	}
	c.cl = cl
	return c, nil
}

// partitioner writes state records to the partition the consumer chose (the
// input record's), every other record by key (murmur2, as the Java client).
type partitioner struct {
	state         string
	byKey, manual kgo.Partitioner
}

func (p partitioner) ForTopic(t string) kgo.TopicPartitioner {
	if t == p.state {
		return p.manual.ForTopic(t)
	}
	return p.byKey.ForTopic(t)
}

// Close leaves the group (nothing is committed: records handled since the
// last commit are replayed by the partition's next owner) and closes the
// client.
func (c *Consumer) Close() {
	c.cl.AllowRebalance() // a Run stopped mid-poll still holds the rebalance back
	c.cl.Close()
	c.mu.Lock()
	for p, s := range c.stores {
		s.close()
		delete(c.stores, p)
	}
	c.cache.clear()
	c.mu.Unlock()
	if c.tmpDir != "" {
		os.RemoveAll(c.tmpDir)
	}
}

// assigned opens the local state store of each newly assigned input
// partition and catches it up with the changelog (franz-go calls it between
// polls).
func (c *Consumer) assigned(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
	parts := m[c.cfg.Topic]
	if len(parts) == 0 {
		return
	}
	stores, read, err := c.restore(ctx, cl, parts)
	if err != nil {
		select {
		case c.errc <- fmt.Errorf("kafka: restore state of %s partitions %v: %w", c.cfg.StateTopic, parts, err):
		default:
		}
		return
	}
	c.mu.Lock()
	for p, s := range stores {
		if old := c.stores[p]; old != nil {
			old.close()
		}
		c.stores[p] = s
		c.cache.dropPartition(p)
	}
	c.mu.Unlock()
	c.cfg.Log.Printf("kafka: assigned %s partitions %v, local state caught up (%d changelog records read)", c.cfg.Topic, parts, read)
	if c.cfg.onRestored != nil {
		c.cfg.onRestored(parts, read)
	}
	if c.cfg.onAssigned != nil {
		c.cfg.onAssigned(parts)
	}
}

// dropped closes the local stores of revoked or lost partitions and forgets
// their cached states (the files stay for a later assignment).
func (c *Consumer) dropped(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range m[c.cfg.Topic] {
		if s := c.stores[p]; s != nil {
			s.close()
			delete(c.stores, p)
		}
		c.cache.dropPartition(p)
	}
}

// restore opens the local store of each partition in parts and applies the
// changelog records it has not seen, from its next_offset to the changelog
// partition's current end, with a separate, group-less client (cl, the
// group's client, which franz-go hands the callback possibly before New has
// returned it, asks for the offsets); the last
// record of each session wins (a tombstone, a nil value, deletes it). A
// store whose next_offset is outside the changelog's offsets (the topic was
// recreated, or records were deleted) is emptied and rebuilt from the start.
// It returns the stores and the number of changelog records read.
func (c *Consumer) restore(ctx context.Context, cl *kgo.Client, parts []int32) (_ map[int32]*localStore, read int, err error) {
	starts, err := c.listOffsets(ctx, cl, parts, -2)
	if err != nil {
		return nil, 0, err
	}
	ends, err := c.listOffsets(ctx, cl, parts, -1)
	if err != nil {
		return nil, 0, err
	}
	out := map[int32]*localStore{}
	defer func() {
		if err != nil {
			for _, s := range out {
				s.close()
			}
		}
	}()
	from := map[int32]kgo.Offset{}
	for _, p := range parts {
		s, err := openLocal(ctx, localPath(c.cfg.StateDir, c.cfg.StateTopic, p))
		if err != nil {
			return nil, 0, err
		}
		out[p] = s
		next, err := s.nextOffset(ctx)
		if err != nil {
			return nil, 0, err
		}
		if next > ends[p] || next < starts[p] {
			c.cfg.Log.Printf("kafka: %s: next offset %d is outside the changelog's %d..%d; rebuilt from the start", s.path, next, starts[p], ends[p])
			if err := s.wipe(ctx); err != nil {
				return nil, 0, err
			}
			next = starts[p]
		}
		if next < ends[p] {
			from[p] = kgo.NewOffset().At(next)
		}
	}
	if len(from) == 0 {
		return out, 0, nil
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(c.cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.cfg.StateTopic: from})}, c.cfg.Opts...)
	rc, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, 0, err
	}
	defer rc.Close()
	for len(from) > 0 {
		// Each fetch waits at most BrokerTimeout: the offsets to read are
		// known to exist, so a broker that sends none is not answering.
		pctx, cancel := context.WithTimeout(ctx, c.cfg.BrokerTimeout)
		fs := rc.PollFetches(pctx)
		timedOut := pctx.Err() != nil
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if timedOut && fs.Empty() {
			return nil, 0, fmt.Errorf("no changelog records from %s within %v (partitions %v of %d still to read)", c.brokers(), c.cfg.BrokerTimeout, slices.Sorted(maps.Keys(from)), len(parts))
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("fetch partition %d from %s: %w", p, c.brokers(), err)
			}
		})
		if ferr != nil {
			return nil, 0, ferr
		}
		var werr error
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			n := len(fp.Records)
			if n == 0 || werr != nil {
				return
			}
			ws := make([]localWrite, 0, n)
			for _, r := range fp.Records {
				ws = c.restoreRecord(ws, r)
			}
			last := fp.Records[n-1].Offset
			if werr = out[fp.Partition].write(ctx, ws, last+1); werr != nil {
				return
			}
			read += n
			if last+1 >= ends[fp.Partition] || last+1 >= fp.HighWatermark {
				delete(from, fp.Partition) // caught up (offsets of a compacted topic have gaps)
			}
		})
		if werr != nil {
			return nil, 0, werr
		}
	}
	return out, read, nil
}

// listOffsets asks the leaders for the offsets of the state topic's
// partitions at timestamp ts (-1: the end, -2: the start).
func (c *Consumer) listOffsets(ctx context.Context, cl *kgo.Client, parts []int32, ts int64) (map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.BrokerTimeout)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = c.cfg.StateTopic
	for _, p := range parts {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = ts
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	offs := map[int32]int64{}
	for _, sh := range cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			return nil, fmt.Errorf("offsets from %s: %w", c.brokers(), sh.Err)
		}
		resp := sh.Resp.(*kmsg.ListOffsetsResponse)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return nil, fmt.Errorf("partition %d: %w", rp.Partition, err)
				}
				offs[rp.Partition] = rp.Offset
			}
		}
	}
	for _, p := range parts {
		if _, ok := offs[p]; !ok {
			return nil, fmt.Errorf("partition %d: no offset (does %s have as many partitions as %s?)", p, c.cfg.StateTopic, c.cfg.Topic)
		}
	}
	return offs, nil
}

// Run joins the group and judges until ctx is done (nil is then returned)
// or an infrastructure failure stops it: no broker answers within
// Config.BrokerTimeout (before the group is joined, or in an idle check), a
// topic is missing or not authorized, or producing, committing or restoring
// fails (the error names the brokers or the topic). A record never stops it:
// what cannot be judged or written is a dead letter. Records handled but not
// committed when it stops are replayed by the next owner of their
// partition, this consumer again after a restart.
func (c *Consumer) Run(ctx context.Context) error {
	if err := c.preflight(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	idle := c.cfg.BrokerTimeout / 3
	for {
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := c.cl.PollRecords(pctx, c.cfg.MaxPollRecords)
		idled := pctx.Err() != nil && ctx.Err() == nil
		cancel()
		select {
		case err := <-c.errc:
			return err
		default:
		}
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			switch {
			case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			case t == "":
				ferr = fmt.Errorf("kafka: group %s on brokers %s: %w", c.cfg.Group, c.brokers(), err)
			default:
				ferr = fmt.Errorf("kafka: fetch %s partition %d from %s: %w", t, p, c.brokers(), err)
			}
		})
		if ferr != nil {
			return ferr
		}
		recs := fs.Records()
		if len(recs) > 0 {
			if err := c.handle(ctx, recs); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		} else if idled {
			if err := c.ping(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		c.cl.AllowRebalance()
	}
}

// brokers names the seed brokers, for errors.
func (c *Consumer) brokers() string { return strings.Join(c.cfg.Brokers, ",") }

// ping checks, within Config.BrokerTimeout, that a broker answers. The error
// names the seed brokers and how long they were given.
func (c *Consumer) ping(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, c.cfg.BrokerTimeout)
	defer cancel()
	if err := c.cl.Ping(pctx); err != nil {
		return fmt.Errorf("kafka: no broker of %s answered within %v: %w", c.brokers(), c.cfg.BrokerTimeout, err)
	}
	return nil
}

// preflight checks, before the group is joined, that a broker answers and
// that the four topics exist and are described to this client, and that the
// state topic has at least as many partitions as the input topic: without
// it, the group would wait on a missing topic without a word. The error names
// the brokers or the topic.
func (c *Consumer) preflight(ctx context.Context) error {
	if err := c.ping(ctx); err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, c.cfg.BrokerTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	roles := []struct{ topic, role string }{
		{c.cfg.Topic, "input"}, {c.cfg.OutTopic, "output"}, {c.cfg.StateTopic, "state"}, {c.cfg.DeadTopic, "dead-letter"},
	}
	for _, r := range roles {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(r.topic)
		req.Topics = append(req.Topics, t)
	}
	resp, err := req.RequestWith(pctx, c.cl)
	if err != nil {
		return fmt.Errorf("kafka: metadata of the topics from %s: %w", c.brokers(), err)
	}
	parts := map[string]int{}
	errs := map[string]error{}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			errs[*t.Topic] = err
			continue
		}
		parts[*t.Topic] = len(t.Partitions)
	}
	for _, r := range roles {
		if err := errs[r.topic]; err != nil {
			return fmt.Errorf("kafka: %s topic %s on %s: %w", r.role, r.topic, c.brokers(), err)
		}
		if _, ok := parts[r.topic]; !ok {
			return fmt.Errorf("kafka: %s topic %s: not in the metadata of %s", r.role, r.topic, c.brokers())
		}
	}
	if parts[c.cfg.StateTopic] < parts[c.cfg.Topic] {
		return fmt.Errorf("kafka: state topic %s has %d partitions, fewer than the %d of input topic %s: it needs at least as many", c.cfg.StateTopic, parts[c.cfg.StateTopic], parts[c.cfg.Topic], c.cfg.Topic)
	}
	return nil
}

// restoreRecord appends to ws the local store rows of changelog record r
// (package doc, "Topics and keys"): a session's state, one of its turns, or
// a tombstone of either. A record that cannot be read is logged and
// skipped; so is a whole state of an earlier version whose turns do not
// all read.
func (c *Consumer) restoreRecord(ws []localWrite, r *kgo.Record) []localWrite {
	skip := func(what string, err error) []localWrite {
		c.cfg.Log.Printf("kafka: %s partition %d offset %d: %s skipped: %v", r.Topic, r.Partition, r.Offset, what, err)
		return ws
	}
	if session, turnID, ok := splitTurnKey(r.Key); ok {
		if r.Value == nil {
			return append(ws, localWrite{session: session, isTurn: true, turnID: turnID, del: true})
		}
		seq, d, err := decodeTurnValue(r.Value)
		if err != nil {
			return skip(fmt.Sprintf("turn %s of session %s", quoteCut([]byte(turnID), 200), quoteCut([]byte(session), 200)), err)
		}
		return append(ws, localWrite{session: session, isTurn: true, turnID: turnID, seq: seq, digest: d})
	}
	session := string(r.Key)
	if r.Value == nil {
		return append(ws, localWrite{session: session, del: true})
	}
	var st sessionState
	if err := json.Unmarshal(r.Value, &st); err != nil {
		return skip(fmt.Sprintf("unreadable state of session %s", quoteCut(r.Key, 200)), err)
	}
	// An earlier version's state holds its turns' digests: each becomes a
	// turn row at seq 0, committed as long as the session has a turn.
	old := make([]localWrite, 0, len(st.Turns))
	for _, id := range slices.Sorted(maps.Keys(st.Turns)) {
		d, err := decodeDigest(st.Turns[id])
		if err != nil {
			return skip(fmt.Sprintf("state of session %s", quoteCut(r.Key, 200)), fmt.Errorf("turn %q: %w", id, err))
		}
		old = append(old, localWrite{session: session, isTurn: true, turnID: id, digest: d[:]})
	}
	ws = append(ws, localWrite{session: session, live: st.Live.AppendJSON(nil)})
	return append(ws, old...)
}

// A turn record's key is its session_id, byte 0xFF and its turn_id; a
// state record's key is the session_id alone. No session_id holds 0xFF
// (not UTF-8; judge refuses one that does), so the two never meet.
const turnKeySep = 0xff

// appendTurnKey appends the key of turn turnID of session to b.
func appendTurnKey(b []byte, session, turnID string) []byte {
	b = append(b, session...)
	b = append(b, turnKeySep)
	return append(b, turnID...)
}

// splitTurnKey splits a turn record's key; ok is false for a state
// record's key.
func splitTurnKey(key []byte) (session, turnID string, ok bool) {
	i := bytes.IndexByte(key, turnKeySep)
	if i < 0 {
		return "", "", false
	}
	return string(key[:i]), string(key[i+1:]), true
}

// A turn record's value is the turn's digest (digestLen bytes, decoded from
// persona/live.Digest's hex) followed by its seq as a uvarint.
func appendTurnValue(b []byte, digest *[digestLen]byte, seq int) []byte {
	b = append(b, digest[:]...)
	return binary.AppendUvarint(b, uint64(seq))
}

// errTurnValue is a turn record's value that is not appendTurnValue's.
var errTurnValue = errors.New("malformed turn record")

// decodeTurnValue reads a turn record's value (the digest is a slice of v).
func decodeTurnValue(v []byte) (seq int64, digest []byte, err error) {
	if len(v) <= digestLen {
		return 0, nil, errTurnValue
	}
	n, k := binary.Uvarint(v[digestLen:])
	if k <= 0 || digestLen+k != len(v) || n > math.MaxInt32 {
		return 0, nil, errTurnValue
	}
	return int64(n), v[:digestLen:digestLen], nil
}

// liveOpen and liveClose wrap a state record's value around the session's
// live state: {"live":STATE}, sessionState's JSON.
const liveOpen, liveClose = `{"live":`, `}`

// appendStateValue appends the state record's value of a session whose live
// state is st to b: {"live":…}, st's stored form (AppendJSON) inside. It
// returns the extended b and the live state's JSON within it.
func appendStateValue(b []byte, st *live.State) (_, liveJSON []byte) {
	b = append(b, liveOpen...)
	start := len(b)
	b = st.AppendJSON(b)
	end := len(b)
	return append(b, liveClose...), b[start:end:end]
}

// partPoll is one share of a poll: the records of one input partition whose
// key falls in one of GOMAXPROCS groups (shareOf), in offset order, and what
// judging them gives. The shares of a poll are judged in parallel, each by
// one goroutine: a session's turns are all in one share (its partition, its
// key), so no two goroutines touch one session. Shares of one partition share
// its local store (its connection serializes them).
type partPoll struct {
	part      int32
	ls        *localStore
	recs      []*kgo.Record
	at        []int                   // each record's position in the poll
	results   []*kgo.Record           // the poll's, by position: what each record gives (nil: none)
	sessions  map[string]*pollSession // by session_id
	order     []string                // session_ids, in the order first touched
	enc       recordEncoder           // the share's verdict records
	slab      []kgo.Record            // the verdicts' records (results point into it)
	stateSlab []kgo.Record            // the state topic's records (states point into it)
	hdrs      []kgo.RecordHeader      // their headers
	states    []*kgo.Record           // one changelog record per session that judged a turn
	writes    []localWrite            // the local store's rows, with states
}

// pollSession is one session touched by the poll being handled.
type pollSession struct {
	id          string // its session_id
	live        *live.State
	stored      bool           // the local store has the session
	storedTurns int            // its stored state's turn count: turn rows below it are committed
	turns       []localTurn    // judged in this poll, in order
	index       map[string]int // turn_id → position in turns
}

// localTurn is one turn judged in the poll being handled: its turn_id,
// digest, seq (arrival position in its session) and record (a slice of its
// partPoll's encoder buffer), and the position of its input record in the
// share (partPoll.recs).
type localTurn struct {
	id     string
	digest [digestLen]byte
	seq    int
	record []byte
	pos    int
}

// handle judges one poll's records, produces what they give, flushes, writes
// the local stores and commits.
func (c *Consumer) handle(ctx context.Context, recs []*kgo.Record) (err error) {
	defer func() {
		if err != nil { // states judged in place may be cached but not stored
			c.cache.clear()
		}
	}()
	c.mu.Lock()
	pps, err := c.split(recs)
	if err == nil {
		err = each(pps, func(pp *partPoll) error { return c.judgePart(ctx, pp) })
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if c.crashAt("judged") {
		return ErrCrashed
	}
	// Verdicts and dead letters first (in the poll's order), then the
	// state: a crash between the two leaves the old state, and the replay
	// judges the same again.
	outs := slices.DeleteFunc(pps[0].results, func(r *kgo.Record) bool { return r == nil })
	var states []*kgo.Record
	for _, pp := range pps {
		states = append(states, pp.states...)
	}
	if err := c.produce(ctx, outs); err != nil {
		return err
	}
	if c.crashAt("produced") {
		return ErrCrashed
	}
	if err := c.produce(ctx, states); err != nil {
		return err
	}
	// The local stores take the state records just produced, with the
	// changelog offset after them (a crash before this leaves a store behind
	// the changelog, caught up at the next assignment).
	c.mu.Lock()
	err = each(byPartition(pps), func(same []*partPoll) error {
		var ws []localWrite
		next := int64(-1)
		for _, pp := range same {
			ws = append(ws, pp.writes...)
			for _, r := range pp.states {
				next = max(next, r.Offset+1)
			}
		}
		if len(ws) == 0 {
			return nil
		}
		if c.stores[same[0].part] != same[0].ls {
			return fmt.Errorf("kafka: %s partition %d was revoked while its poll was handled", c.cfg.Topic, same[0].part)
		}
		return same[0].ls.write(ctx, ws, next)
	})
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if c.crashAt("state") {
		return ErrCrashed
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.BrokerTimeout)
	err = c.cl.CommitRecords(cctx, recs...)
	cancel()
	if err != nil {
		return fmt.Errorf("kafka: commit the offsets of group %s on %s: %w", c.cfg.Group, c.brokers(), err)
	}
	for _, pp := range pps {
		for _, id := range pp.order {
			if ps := pp.sessions[id]; ps.stored || len(ps.turns) > 0 {
				c.cache.put(stateKey{pp.part, id}, ps.live)
			}
		}
	}
	if c.cfg.onCommit != nil {
		c.cfg.onCommit(recs)
	}
	return nil
}

// split cuts a poll's records into shares (partPoll) by input partition and
// shareOf their key, each in offset order (c.mu held). The error names a
// partition without a local store (its restore failed).
func (c *Consumer) split(recs []*kgo.Record) ([]*partPoll, error) {
	type shareKey struct {
		part  int32
		share uint32
	}
	groups := uint32(runtime.GOMAXPROCS(0))
	results := make([]*kgo.Record, len(recs))
	var pps []*partPoll
	index := map[shareKey]*partPoll{}
	for i, r := range recs {
		k := shareKey{r.Partition, shareOf(r.Key, groups)}
		pp := index[k]
		if pp == nil {
			ls := c.stores[r.Partition]
			if ls == nil {
				return nil, fmt.Errorf("kafka: %s partition %d has no local state store (its restore failed)", r.Topic, r.Partition)
			}
			pp = &partPoll{part: r.Partition, ls: ls, results: results, sessions: map[string]*pollSession{}}
			index[k] = pp
			pps = append(pps, pp)
		}
		pp.recs = append(pp.recs, r)
		pp.at = append(pp.at, i)
	}
	return pps, nil
}

// shareOf is the share, of groups, of the records keyed key (FNV-1a): every
// turn of a session has the session_id as its key, so one share.
func shareOf(key []byte, groups uint32) uint32 {
	h := uint32(2166136261)
	for _, b := range key {
		h = (h ^ uint32(b)) * 16777619
	}
	return h % groups
}

// byPartition groups shares by their input partition, in first-seen order.
func byPartition(pps []*partPoll) [][]*partPoll {
	var out [][]*partPoll
	for _, pp := range pps {
		found := false
		for i := range out {
			if out[i][0].part == pp.part {
				out[i] = append(out[i], pp)
				found = true
				break
			}
		}
		if !found {
			out = append(out, []*partPoll{pp})
		}
	}
	return out
}

// each runs f on every element of xs, up to GOMAXPROCS at a time, and
// returns the first error (by position).
func each[T any](xs []T, f func(T) error) error {
	if len(xs) == 1 {
		return f(xs[0])
	}
	errs := make([]error, len(xs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(xs), runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(xs); i = int(next.Add(1) - 1) {
				errs[i] = f(xs[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// judgePart judges the records of one share of a poll, then builds the
// changelog records and local store rows of every session that judged a
// turn: a turn record per turn, then the session's state record (package
// doc, "Topics and keys").
func (c *Consumer) judgePart(ctx context.Context, pp *partPoll) error {
	for i := range pp.recs {
		o, err := c.judge(ctx, pp, i)
		if err != nil {
			return err
		}
		pp.results[pp.at[i]] = o
	}
	for _, id := range pp.order {
		ps := pp.sessions[id]
		if len(ps.turns) == 0 {
			continue
		}
		for i := range ps.turns {
			lt := &ps.turns[i]
			k := pp.enc.grow(len(id) + 1 + len(lt.id))
			k = appendTurnKey(k, id, lt.id)
			v := appendTurnValue(pp.enc.grow(digestLen+binary.MaxVarintLen64), &lt.digest, lt.seq)
			pp.states = append(pp.states, pp.stateRecord(c.cfg.StateTopic, k, v))
			pp.writes = append(pp.writes, localWrite{session: id, isTurn: true, turnID: lt.id, seq: int64(lt.seq), digest: lt.digest[:]})
		}
		v, lb := appendStateValue(pp.enc.grow(len(liveOpen)+ps.live.Bytes()+len(liveClose)), ps.live)
		r := pp.stateRecord(c.cfg.StateTopic, pp.enc.bytes(id), v)
		if n := batchBytes(r); n > c.cfg.MaxMessageBytes { // judge bounds the state to fit (stateLimits)
			return fmt.Errorf("kafka: the state record of session %s is %d bytes, over the %d-byte message limit that its state limit keeps it under (a bug)", quoteCut([]byte(id), 200), n, c.cfg.MaxMessageBytes)
		}
		pp.states = append(pp.states, r)
		pp.writes = append(pp.writes, localWrite{session: id, live: lb})
	}
	return nil
}

// stateRecord is a record of the state topic, at pp's partition, from pp's
// slab of state records.
func (pp *partPoll) stateRecord(topic string, key, value []byte) *kgo.Record {
	if len(pp.stateSlab) == cap(pp.stateSlab) {
		pp.stateSlab = make([]kgo.Record, 0, max(16, len(pp.recs)))
	}
	pp.stateSlab = append(pp.stateSlab, kgo.Record{Topic: topic, Partition: pp.part, Key: key, Value: value})
	return &pp.stateSlab[len(pp.stateSlab)-1]
}

func (c *Consumer) crashAt(stage string) bool { return c.cfg.crash != nil && c.cfg.crash(stage) }

// produce sends rs, flushes (no linger: the poll waits for them) and waits
// for every acknowledgement (each record's Offset is then set), at most
// Config.BrokerTimeout. Every record fits Config.MaxMessageBytes, the
// producer's batch cap; a broker that refuses one as too large has a topic
// whose max.message.bytes is below it, which the error says.
func (c *Consumer) produce(ctx context.Context, rs []*kgo.Record) error {
	if len(rs) == 0 {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, c.cfg.BrokerTimeout)
	defer cancel()
	var mu sync.Mutex
	var first error
	left := len(rs)
	done := make(chan struct{})
	for _, r := range rs {
		c.cl.Produce(pctx, r, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = fmt.Errorf("kafka: produce to %s on %s: %w", r.Topic, c.brokers(), err)
				if errors.Is(err, kerr.MessageTooLarge) {
					first = fmt.Errorf("%w (this consumer writes records of up to %d bytes, its message limit: topic %s must take as much, max.message.bytes)", first, c.cfg.MaxMessageBytes, r.Topic)
				}
			}
			if left--; left == 0 {
				close(done)
			}
		})
	}
	c.cl.Flush(pctx) // its error, pctx's, reaches the promises too
	select {
	case <-done:
	case <-pctx.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		mu.Lock()
		defer mu.Unlock()
		return fmt.Errorf("kafka: %d of %d records not acknowledged by %s within %v (topics %s)", left, len(rs), c.brokers(), c.cfg.BrokerTimeout, topicsOf(rs))
	}
	return first
}

// topicsOf names the topics of rs, for errors.
func topicsOf(rs []*kgo.Record) string {
	var ts []string
	for _, r := range rs {
		if !slices.Contains(ts, r.Topic) {
			ts = append(ts, r.Topic)
		}
	}
	return strings.Join(ts, ", ")
}

// judge handles input record i of pp: it returns the record to produce
// (nil: none). The error is a local store's (Run stops); a row that cannot
// be judged, or whose verdict could not be written, is a dead letter, not an
// error. A panic while judging a row (a bug) makes it a dead letter too,
// logged with its stack; the session's state is then rebuilt without it.
func (c *Consumer) judge(ctx context.Context, pp *partPoll, i int) (out *kgo.Record, err error) {
	r := pp.recs[i]
	var ps *pollSession // once Step may have changed ps.live
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		c.cfg.Log.Printf("kafka: %s partition %d offset %d: panic while judging: %v\n%s", r.Topic, r.Partition, r.Offset, p, cut(string(debug.Stack()), 8<<10))
		out, err = c.dead(r, fmt.Sprintf("internal error judging the row (a bug, logged with its stack): %v", p)), nil
		if ps != nil {
			err = c.rebuild(ctx, pp, ps)
		}
	}()
	if max := c.maxValue(); len(r.Value) > max {
		return c.dead(r, fmt.Sprintf("value of %d bytes is over the %d-byte limit of a record (limit %s plus %d bytes for the row's other fields)", len(r.Value), max, live.LimitRowBytes, recordRoom)), nil
	}
	t, err := ingest.DecodeTurn(ingest.Raw{Line: 1, JSON: r.Value})
	if err != nil {
		return c.dead(r, "not a chat_turn row: "+err.Error()), nil
	}
	if string(r.Key) != t.SessionID {
		return c.dead(r, fmt.Sprintf("key %s is not the row's session_id %s: producers must key turns by session_id", quoteCut(r.Key, 200), quoteCut([]byte(t.SessionID), 200))), nil
	}
	if strings.IndexByte(t.SessionID, turnKeySep) >= 0 {
		return c.dead(r, fmt.Sprintf("session_id %s holds byte 0xFF (not UTF-8), which separates a turn record's key", quoteCut([]byte(t.SessionID), 200))), nil
	}
	sess, err := c.session(ctx, pp, t.SessionID)
	if err != nil {
		return nil, err
	}
	digest, err := decodeDigest(live.Digest(&t))
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err) // persona/live.Digest writes 64 hex digits
	}
	conflict := func() *kgo.Record {
		return c.dead(r, fmt.Sprintf("conflict: turn_id %s was already judged with a different row", quoteCut([]byte(t.TurnID), 200)))
	}
	if i, ok := sess.index[t.TurnID]; ok {
		if sess.turns[i].digest != digest {
			return conflict(), nil
		}
		return c.verdict(pp, r, &t, sess.turns[i].record), nil
	}
	if sess.stored {
		seq, d, ok, err := pp.ls.turn(ctx, t.SessionID, t.TurnID)
		switch {
		case err != nil:
			return nil, err
		case ok && seq < int64(sess.storedTurns) && d != digest:
			return conflict(), nil
		case ok && seq < int64(sess.storedTurns):
			c.cfg.Log.Printf("kafka: %s partition %d offset %d: turn %s already judged with the same row (its verdict was produced before its state); skipped", r.Topic, r.Partition, r.Offset, quoteCut([]byte(t.TurnID), 200))
			return nil, nil
		}
	}
	if n := batchBytes(&kgo.Record{Key: appendTurnKey(nil, t.SessionID, t.TurnID), Value: make([]byte, digestLen+binary.MaxVarintLen64)}); n > c.cfg.MaxMessageBytes {
		return c.dead(r, fmt.Sprintf("its turn record on the state topic (keyed by session_id and turn_id) would be %d bytes, over the %d-byte message limit", n, c.cfg.MaxMessageBytes)), nil
	}
	// Step leaves the state as it was when it fails; once it has not, a
	// verdict that cannot be written needs the state rebuilt without it.
	lim, lowered := c.stateLimits(t.SessionID)
	ps = sess
	rec, outcome, err := lim.Step(c.cfg.Judge, sess.live, &t)
	if err != nil {
		ps = nil
		reason := err.Error()
		if le := (*live.LimitError)(nil); lowered && errors.As(err, &le) && le.Limit == live.LimitStateBytes {
			reason += fmt.Sprintf(": %s is %d, lowered from %d so that the session's state record fits the %d-byte message limit", live.LimitStateBytes, lim.MaxStateBytes, c.limits.MaxStateBytes, c.cfg.MaxMessageBytes)
		}
		return c.dead(r, reason), nil
	}
	if c.cfg.afterStep != nil {
		c.cfg.afterStep(&t)
	}
	b, err := pp.enc.encode(&rec)
	if err == nil {
		out = c.verdict(pp, r, &t, b)
		if n := batchBytes(out); n > c.cfg.MaxMessageBytes {
			err = fmt.Errorf("its verdict record would be %d bytes, over the %d-byte message limit", n, c.cfg.MaxMessageBytes)
		}
	}
	if err != nil {
		ps = nil
		if err := c.rebuild(ctx, pp, sess); err != nil {
			return nil, err
		}
		return c.dead(r, "verdict not written: "+err.Error()), nil
	}
	if sess.index == nil {
		sess.index = map[string]int{}
	}
	sess.index[t.TurnID] = len(sess.turns)
	sess.turns = append(sess.turns, localTurn{id: t.TurnID, digest: digest, seq: outcome.Change.Seq, record: b, pos: i})
	return out, nil
}

// recordRoom is what an input record's value may hold beyond the row limit
// (live.Limits.MaxRowBytes, reply_text plus user_message): its other fields
// and JSON.
const recordRoom = 1 << 20

// maxValue bounds an input record's value: the row limit plus recordRoom.
func (c *Consumer) maxValue() int { return c.limits.MaxRowBytes + recordRoom }

// stateLimits are the limits a turn of session is judged under: Config's,
// with MaxStateBytes lowered, when it must be (lowered), to what a state
// record of session within Config.MaxMessageBytes holds. So a state record
// is never over the message limit, by construction (live.State.Bytes is its
// stored form's length).
func (c *Consumer) stateLimits(session string) (_ live.Limits, lowered bool) {
	l := c.limits
	room := c.cfg.MaxMessageBytes - batchBytes(&kgo.Record{Key: []byte(session)}) - len(liveOpen) - len(liveClose)
	if room < l.MaxStateBytes {
		l.MaxStateBytes, lowered = max(room, 1), true // 0 would be the default
	}
	return l, lowered
}

// session returns the poll's entry of session id, reading it from pp's
// local store (its live state through the cache) the first time.
func (c *Consumer) session(ctx context.Context, pp *partPoll, id string) (*pollSession, error) {
	if ps := pp.sessions[id]; ps != nil {
		return ps, nil
	}
	ps := &pollSession{id: id}
	lb, ok, err := pp.ls.session(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		ps.live = &live.State{}
	default:
		ps.stored = true
		if st, hit := c.cache.get(stateKey{pp.part, id}); hit {
			ps.live = st
		} else {
			ps.live = &live.State{}
			if err := unmarshalLive(lb, ps.live); err != nil {
				return nil, pp.ls.fail("session "+strconv.Quote(id), err)
			}
		}
		ps.storedTurns = ps.live.Header().Turns
	}
	pp.sessions[id] = ps
	pp.order = append(pp.order, id)
	return ps, nil
}

// rebuild sets ps's live state to what the turns it judged in this poll
// (ps.turns) make of its stored state, for a Step whose turn is then
// refused: the stored state is read again (the local store is written only
// after the poll), and each turn stepped again (they were accepted, and a
// step is deterministic). The state is a new one: the cached one was changed
// in place, and the poll's commit caches the new one. Time: the session's
// turns in the poll, and its state once.
func (c *Consumer) rebuild(ctx context.Context, pp *partPoll, ps *pollSession) error {
	st := &live.State{}
	lb, ok, err := pp.ls.session(ctx, ps.id)
	if err != nil {
		return err
	}
	if ok {
		if err := unmarshalLive(lb, st); err != nil {
			return pp.ls.fail("session "+strconv.Quote(ps.id), err)
		}
	}
	lim, _ := c.stateLimits(ps.id)
	for _, lt := range ps.turns {
		t, err := ingest.DecodeTurn(ingest.Raw{Line: 1, JSON: pp.recs[lt.pos].Value})
		if err == nil {
			_, _, err = lim.Step(c.cfg.Judge, st, &t)
		}
		if err != nil { // each was judged once already
			return fmt.Errorf("kafka: rebuilding the state of session %s: turn %s: %w", quoteCut([]byte(ps.id), 200), quoteCut([]byte(lt.id), 200), err)
		}
	}
	ps.live = st
	return nil
}

// verdict is the output record of turn t, read from input record in (whose
// key is t's session_id). Records and headers come from pp's slabs, and the
// key from its encoder's buffer: a few allocations per poll, not per record.
func (c *Consumer) verdict(pp *partPoll, in *kgo.Record, t *persona.Turn, rec []byte) *kgo.Record {
	if len(pp.slab) == cap(pp.slab) {
		pp.slab = make([]kgo.Record, 0, len(pp.recs))
		pp.hdrs = make([]kgo.RecordHeader, 0, len(pp.recs))
	}
	pp.hdrs = append(pp.hdrs, kgo.RecordHeader{Key: "session_id", Value: in.Key})
	n := len(pp.hdrs)
	pp.slab = append(pp.slab, kgo.Record{Topic: c.cfg.OutTopic, Key: pp.enc.bytes(t.TurnID), Value: rec, Headers: pp.hdrs[n-1 : n : n]})
	return &pp.slab[len(pp.slab)-1]
}

// dead is the dead letter of input record r with reason: r's key and value
// cut to deadKeyBytes and Config.DeadValueBytes, so that it always fits
// Config.MaxMessageBytes (New checks largestDeadLetter), with headers
// "reason" (cut to deadReasonBytes), "topic", "partition", "offset",
// "original_size" (the value's bytes, decimal) and "original_sha256" (its
// SHA-256, hex), and, when the key was cut, "original_key_size" and
// "original_key_sha256".
func (c *Consumer) dead(r *kgo.Record, reason string) *kgo.Record {
	reason = cut(reason, deadReasonBytes)
	c.cfg.Log.Printf("kafka: %s partition %d offset %d: dead letter: %s", r.Topic, r.Partition, r.Offset, reason)
	sum := sha256.Sum256(r.Value)
	hs := []kgo.RecordHeader{
		{Key: "reason", Value: []byte(reason)},
		{Key: "topic", Value: []byte(r.Topic)},
		{Key: "partition", Value: []byte(strconv.Itoa(int(r.Partition)))},
		{Key: "offset", Value: []byte(strconv.FormatInt(r.Offset, 10))},
		{Key: "original_size", Value: []byte(strconv.Itoa(len(r.Value)))},
		{Key: "original_sha256", Value: hex.AppendEncode(nil, sum[:])},
	}
	key, value := r.Key, r.Value
	if len(key) > deadKeyBytes {
		ks := sha256.Sum256(key)
		hs = append(hs, kgo.RecordHeader{Key: "original_key_size", Value: []byte(strconv.Itoa(len(key)))},
			kgo.RecordHeader{Key: "original_key_sha256", Value: hex.AppendEncode(nil, ks[:])})
		key = key[:deadKeyBytes:deadKeyBytes]
	}
	if len(value) > c.cfg.DeadValueBytes {
		value = value[:c.cfg.DeadValueBytes:c.cfg.DeadValueBytes]
	}
	return &kgo.Record{Topic: c.cfg.DeadTopic, Key: key, Value: value, Headers: hs}
}

// largestDeadLetter is the largest record dead can write under cfg: key,
// value and reason at their caps, every number at its longest.
func largestDeadLetter(cfg *Config) *kgo.Record {
	long := func(n int) []byte { return make([]byte, n) }
	hs := []kgo.RecordHeader{
		{Key: "reason", Value: long(deadReasonBytes)},
		{Key: "topic", Value: []byte(cfg.Topic)},
		{Key: "partition", Value: []byte("-2147483648")},
		{Key: "offset", Value: []byte("-9223372036854775808")},
		{Key: "original_size", Value: []byte("9223372036854775807")},
		{Key: "original_sha256", Value: long(2 * sha256.Size)},
		{Key: "original_key_size", Value: []byte("9223372036854775807")},
		{Key: "original_key_sha256", Value: long(2 * sha256.Size)},
	}
	return &kgo.Record{Key: long(deadKeyBytes), Value: long(cfg.DeadValueBytes), Headers: hs}
}

// batchBytes bounds the bytes of r as a record batch of its own, what a
// broker compares with max.message.bytes and franz-go with its batch cap:
// the batch header (61 bytes), and the record's fields with each varint at
// its longest. (Compression can only make the batch smaller.)
func batchBytes(r *kgo.Record) int {
	n := 61 + 5 + 1 + 10 + 5 + 5 + len(r.Key) + 5 + len(r.Value) + 5
	for _, h := range r.Headers {
		n += 5 + len(h.Key) + 5 + len(h.Value)
	}
	return n
}

// cut returns s when it has at most n bytes, else its longest prefix of
// whole UTF-8 sequences that leaves room for "…", and "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// quoteCut is strconv.Quote of b cut to n bytes first (cut): for reasons
// that quote a row's own bytes.
func quoteCut(b []byte, n int) string { return strconv.Quote(cut(string(b[:min(len(b), n+1)]), n)) }

// recordEncoder writes a share's records, each one line without the
// newline, into chunks of encChunk bytes: a record is a slice of a chunk, and
// stays valid as later records are written (a chunk is never written over;
// one that a large record outgrows is copied by append into a new array, the
// old one kept alive by the slices into it). Chunks, not one growing buffer:
// append grows a large slice by a quarter, copying it all each time, which
// cost more than encoding the records. The bytes are persona.AppendRecord's,
// those of evident judge's JSON Lines; a record it declines (never from the
// rules) is written by encoding/json, HTML not escaped. The zero value is
// ready.
type recordEncoder struct {
	buf jsonBuf
	enc *json.Encoder
}

// encChunk is the size of a recordEncoder's chunk; a new chunk is started
// when the current one has less than encRoom bytes left.
const encChunk, encRoom = 256 << 10, 16 << 10

func (e *recordEncoder) room() {
	if cap(e.buf)-len(e.buf) < encRoom {
		e.buf = make(jsonBuf, 0, encChunk)
	}
}

// grow returns an empty slice of capacity n in the current chunk (its own
// array when n is over encRoom).
func (e *recordEncoder) grow(n int) []byte {
	if n > encRoom {
		return make([]byte, 0, n)
	}
	e.room()
	start := len(e.buf)
	e.buf = e.buf[:start+n]
	return e.buf[start : start : start+n]
}

// bytes copies s into the current chunk and returns the copy.
func (e *recordEncoder) bytes(s string) []byte {
	e.room()
	start := len(e.buf)
	e.buf = append(e.buf, s...)
	return e.buf[start:len(e.buf):len(e.buf)]
}

func (e *recordEncoder) encode(rec *persona.Record) ([]byte, error) {
	e.room()
	start := len(e.buf)
	if b, ok := persona.AppendRecord(e.buf, rec); ok {
		e.buf = b
		return e.buf[start : len(e.buf)-1 : len(e.buf)-1], nil
	}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	if err := e.enc.Encode(rec); err != nil {
		e.buf = e.buf[:start]
		return nil, err
	}
	return e.buf[start : len(e.buf)-1 : len(e.buf)-1], nil
}

type jsonBuf []byte

func (b *jsonBuf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
