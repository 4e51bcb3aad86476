// Command floor is the JSON floor of `evident judge` (issue 18): on one
// thread it reads a chat_turn JSON Lines table, decodes each line with
// encoding/json into a struct of the chat_turn columns, and encodes a verdict
// record of the judge's shape (the schema's fields in its order, four
// evidence rows citing the turn's own cells, a summary and a hedge) with
// encoding/json, applying no rule at all. Its CPU time is what reading and
// writing the JSON costs; bench/throughput.sh compares the judge's CPU time
// per turn with it.
//
//	go run ./bench/floor -turns turns.jsonl -out records.jsonl
//
// A line that does not decode is counted and skipped (the judge writes a
// reject for it). Lines are read with bufio.Reader up to -max-line bytes (the
// judge's own row cap, 16 MiB by default); a longer line is an error.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// turn holds the chat_turn columns (spec persona.md "Input: three tables").
type turn struct {
	TurnID          string   `json:"turn_id"`
	SessionID       string   `json:"session_id"`
	CharacterID     string   `json:"character_id"`
	ModelID         string   `json:"model_id"`
	UserMessage     *string  `json:"user_message"`
	ReplyText       *string  `json:"reply_text"`
	FirstPerson     *string  `json:"first_person"`
	NamedEntities   []string `json:"named_entities"`
	HonorificLevel  *string  `json:"honorific_level"`
	UserAskedRecall bool     `json:"user_asked_recall"`
	CreatedAt       string   `json:"created_at"`
	PromptID        string   `json:"prompt_id"`
}

type evidence struct {
	Source string `json:"source"`
	Field  string `json:"field"`
	Agg    string `json:"agg,omitempty"`
	Value  any    `json:"value"`
}

// record has the fields of persona.Record in the same order.
type record struct {
	TurnID           string     `json:"turn_id"`
	SessionID        string     `json:"session_id"`
	CharacterID      string     `json:"character_id"`
	ModelID          string     `json:"model_id"`
	Verdict          string     `json:"verdict"`
	RuleExpected     *string    `json:"rule_expected"`
	RuleObserved     *string    `json:"rule_observed"`
	OffCanonEntities []string   `json:"off_canon_entities"`
	TouchedTerm      *string    `json:"touched_term"`
	TouchedTopic     *string    `json:"touched_topic"`
	RecallTarget     *string    `json:"recall_target"`
	RecallSourceTurn *string    `json:"recall_source_turn"`
	Evidence         []evidence `json:"evidence"`
	Summary          string     `json:"summary"`
	Hedge            *string    `json:"hedge"`
}

// Fixed texts of the judge's typical Kept record (about its lengths).
var (
	expected = "반말 · 나"
	observed = "반말"
	summary  = "답장 네 문장이 모두 반말로 끝나고 1인칭은 로그에 없어 말투만 견줬으며 카드 밖 이름 없이 넘어갔습니다."
	hedge    = "로그에 1인칭이 없어 1인칭 비교는 건너뛰고 말투만 견줬습니다."
)

func main() {
	in := flag.String("turns", "", "chat_turn JSON Lines table")
	out := flag.String("out", "", "records file")
	maxLine := flag.Int("max-line", 16<<20, "longest line in bytes")
	flag.Parse()
	n, bad, err := run(*in, *out, *maxLine)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "floor: %d records, %d lines skipped\n", n, bad)
}

func run(inPath, outPath string, maxLine int) (n, bad int, err error) {
	if inPath == "" || outPath == "" {
		return 0, 0, errors.New("-turns and -out are required")
	}
	f, err := os.Open(inPath)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	o, err := os.Create(outPath)
	if err != nil {
		return 0, 0, err
	}
	w := bufio.NewWriterSize(o, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // as the judge writes its records
	r := bufio.NewReaderSize(f, 1<<20)
	var line []byte
	for {
		line = line[:0]
		for {
			frag, rerr := r.ReadSlice('\n')
			line = append(line, frag...)
			if len(line) > maxLine {
				o.Close()
				return n, bad, fmt.Errorf("%s: line %d longer than %d bytes", inPath, n+bad+1, maxLine)
			}
			if rerr == bufio.ErrBufferFull {
				continue
			}
			if rerr != nil && rerr != io.EOF {
				o.Close()
				return n, bad, fmt.Errorf("%s: %w", inPath, rerr)
			}
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if len(line) == 0 {
				break
			}
			continue
		}
		var t turn
		if json.Unmarshal(line, &t) != nil {
			bad++
			continue
		}
		var count int
		if t.ReplyText != nil {
			count = bytes.Count([]byte(*t.ReplyText), []byte(". ")) + 1
		}
		rec := record{TurnID: t.TurnID, SessionID: t.SessionID, CharacterID: t.CharacterID, ModelID: t.ModelID,
			Verdict: "설정대로 말함", RuleExpected: &expected, RuleObserved: &observed,
			OffCanonEntities: []string{},
			Evidence: []evidence{
				{Source: "chat_turn", Field: "reply_text", Value: t.ReplyText},
				{Source: "chat_turn", Field: "reply_text", Agg: "count", Value: count},
				{Source: "character_card", Field: "honorific_rule", Value: observed},
				{Source: "chat_turn", Field: "first_person", Value: t.FirstPerson},
			},
			Summary: summary, Hedge: &hedge}
		if err := enc.Encode(&rec); err != nil {
			o.Close()
			return n, bad, err
		}
		n++
	}
	if err := w.Flush(); err != nil {
		o.Close()
		return n, bad, err
	}
	return n, bad, o.Close()
}
