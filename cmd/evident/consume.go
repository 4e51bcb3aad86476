package main

// evident consume: the judge as a Kafka consumer group (package kafka;
// README "Live judging", Kafka). It runs until SIGINT or SIGTERM, then
// leaves the group; records handled since the last commit are replayed by
// the partition's next owner. It stops by itself only on an infrastructure
// failure, named (exit 2); a record that cannot be judged or written is a
// dead letter.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"evident/kafka"
	"evident/persona"
	"evident/persona/batch"
	"evident/persona/ingest"
	"evident/persona/live"
)

func consumeCommand() *cli.Command {
	return &cli.Command{
		Name:  "consume",
		Usage: "judge chat_turn rows from a Kafka topic as a consumer group, verdicts to another topic",
		Description: "Turns are keyed by session_id; each partition's session state lives in a compacted changelog\n" +
			"topic (--state-topic, as many partitions as --topic) restored when the partition is assigned.\n" +
			"Offsets are committed after the verdicts are produced (at least once; a repeat is the same record).\n" +
			"Session state is read through an LRU (--cache-sessions, --cache-mib) from a local SQLite file per partition\n" +
			"(--state-dir), caught up from the changelog on assignment; memory stays flat in the number of sessions.\n" +
			"A record that cannot be judged or written (not a row, over a --live-max-* limit, a verdict over --max-message-bytes)\n" +
			"is a dead letter carrying --dead-value-bytes of it; only a broker or topic failure stops consume, named.\n" +
			"Cards and lexicon come from --cards/--lexicon files or from the store (--db, --dataset; default the latest).",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "brokers", Usage: "seed brokers host:port (repeat, or separate with commas)"},
			&cli.StringFlag{Name: "topic", Value: "chat_turns", Usage: "input topic of chat_turn rows (JSON), keyed by session_id"},
			&cli.StringFlag{Name: "group", Value: "evident", Usage: "consumer group"},
			&cli.StringFlag{Name: "out-topic", Value: "verdicts", Usage: "output topic of verdict records, keyed by turn_id"},
			&cli.StringFlag{Name: "state-topic", Usage: "compacted changelog of session state (default GROUP-state)"},
			&cli.StringFlag{Name: "dead-topic", Usage: "dead-letter topic for rows that cannot be judged (default TOPIC-dead)"},
			&cli.StringFlag{Name: "cards", Usage: "character_card table (instead of the store's dataset)"},
			&cli.StringFlag{Name: "lexicon", Usage: "topic_lexicon table (with --cards)"},
			dbFlag(),
			&cli.Int64Flag{Name: "dataset", Usage: "stored dataset whose cards and lexicon judge; 0 = the latest", DefaultText: "the latest"},
			&cli.StringFlag{Name: "speech-profile", Value: "seed", Usage: "polite-ending profile: seed or extended"},
			&cli.StringFlag{Name: "endings", Usage: "file of extra polite endings, one a line ('!' prefix: noun exception)"},
			&cli.IntFlag{Name: "max-poll", Value: 10000, Usage: "records judged between two commits"},
			&cli.StringFlag{Name: "state-dir", Usage: "local state store, a SQLite file per assigned partition, kept between runs (default: a temporary directory, restored from the changelog on every start)"},
			&cli.IntFlag{Name: "cache-sessions", Value: kafka.DefaultCacheSessions, Usage: "session states kept decoded in memory (LRU over the local state store)"},
			&cli.IntFlag{Name: "cache-mib", Value: kafka.DefaultCacheBytes >> 20, Usage: "MiB of session state (its stored JSON) kept decoded in memory, all cached sessions together"},
			&cli.IntFlag{Name: "live-max-names", Value: live.DefaultMaxNames, Usage: "most distinct named_entities of one row (more: a dead letter)"},
			&cli.IntFlag{Name: "live-max-row-bytes", Value: live.DefaultMaxRowBytes, Usage: "most bytes of reply_text plus user_message of one row (more: a dead letter; a record's value may hold 1 MiB more)"},
			&cli.IntFlag{Name: "live-max-state-bytes", Value: live.DefaultMaxStateBytes, Usage: "most bytes of one session's recall state (a row that would make it more: a dead letter); lowered per session to fit --max-message-bytes"},
			&cli.IntFlag{Name: "max-message-bytes", Value: kafka.DefaultMaxMessageBytes, Usage: "largest record written (verdict, state, dead letter), as the broker counts it; the output, state and dead-letter topics' max.message.bytes must be at least this"},
			&cli.IntFlag{Name: "dead-value-bytes", Value: kafka.DefaultDeadValueBytes, Usage: "bytes of a rejected record's value its dead letter carries (headers original_size and original_sha256 give the whole value's)"},
			&cli.DurationFlag{Name: "broker-timeout", Value: kafka.DefaultBrokerTimeout, Usage: "longest wait on the brokers (answer, acknowledgement, commit, restore step) before consume stops naming them"},
		},
		Action: runConsume,
	}
}

func runConsume(ctx context.Context, cmd *cli.Command) (err error) {
	ctx, stop := interruptible(ctx)
	defer stop()
	var brokers []string
	for _, b := range cmd.StringSlice("brokers") {
		for _, x := range strings.Split(b, ",") {
			if x = strings.TrimSpace(x); x != "" {
				brokers = append(brokers, x)
			}
		}
	}
	if len(brokers) == 0 {
		return errors.New("--brokers is required (host:port)")
	}
	if cmd.Int("cache-sessions") < 1 {
		return fmt.Errorf("--cache-sessions is %d; it must be at least 1", cmd.Int("cache-sessions"))
	}
	for _, f := range []string{"cache-mib", "live-max-names", "live-max-row-bytes", "live-max-state-bytes", "max-message-bytes", "dead-value-bytes"} {
		if v := cmd.Int(f); v <= 0 {
			return fmt.Errorf("--%s is %d: it must be positive", f, v)
		}
	}
	if d := cmd.Duration("broker-timeout"); d < time.Second {
		return fmt.Errorf("--broker-timeout is %v: it must be at least 1s", d)
	}
	j, err := consumeJudge(ctx, cmd)
	if err != nil {
		return err
	}
	errw := cmd.Root().ErrWriter
	c, err := kafka.New(kafka.Config{Brokers: brokers, Topic: cmd.String("topic"), Group: cmd.String("group"),
		OutTopic: cmd.String("out-topic"), StateTopic: cmd.String("state-topic"), DeadTopic: cmd.String("dead-topic"),
		Judge: j, MaxPollRecords: int(cmd.Int("max-poll")), StateDir: cmd.String("state-dir"), CacheSessions: int(cmd.Int("cache-sessions")),
		CacheBytes:      int(cmd.Int("cache-mib")) << 20,
		Limits:          live.Limits{MaxNames: int(cmd.Int("live-max-names")), MaxRowBytes: int(cmd.Int("live-max-row-bytes")), MaxStateBytes: int(cmd.Int("live-max-state-bytes"))},
		MaxMessageBytes: int(cmd.Int("max-message-bytes")), DeadValueBytes: int(cmd.Int("dead-value-bytes")), BrokerTimeout: cmd.Duration("broker-timeout"),
		Log: log.New(errw, "", log.LstdFlags)})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(errw, "consuming %s as group %s, verdicts to %s; Ctrl-C stops\n", cmd.String("topic"), cmd.String("group"), cmd.String("out-topic"))
	return c.Run(ctx) // nil when a signal (or the caller) stopped it
}

// consumeJudge builds the judge from --cards/--lexicon or the store.
func consumeJudge(ctx context.Context, cmd *cli.Command) (*persona.Judge, error) {
	p, err := profile(cmd)
	if err != nil {
		return nil, err
	}
	if cmd.String("cards") != "" || cmd.String("lexicon") != "" {
		if cmd.String("cards") == "" || cmd.String("lexicon") == "" {
			return nil, errors.New("--cards and --lexicon go together")
		}
		cards, err := ingest.File(cmd.String("cards"))
		if err != nil {
			return nil, err
		}
		lex, err := ingest.File(cmd.String("lexicon"))
		if err != nil {
			return nil, err
		}
		j, _, err := batch.NewJudge(cards, lex, p)
		return j, err
	}
	db, err := openStore(ctx, cmd)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	id := cmd.Int64("dataset")
	if id == 0 {
		ds, err := db.Datasets(ctx)
		if err != nil {
			return nil, err
		}
		if len(ds) == 0 {
			return nil, errors.New("the store holds no dataset: give --cards and --lexicon, or import one (evident import)")
		}
		id = ds[0].ID
	}
	cards, err := db.Cards(ctx, id)
	if err != nil {
		return nil, err
	}
	lex, err := db.Lexicon(ctx, id)
	if err != nil {
		return nil, err
	}
	return persona.NewJudge(cards, lex, p)
}
