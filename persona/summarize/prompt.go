package summarize

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"

	"evident/llm"
	"evident/persona"
)

// PromptVersion names the prompt in prompts/v1.md. It is part of every cache
// key and is what a store run records as RunMeta.PromptVersion. Editing the
// prompt means a new file and a new version; never change a released one.
const PromptVersion = "summary/v1"

// SchemaName is the name the request gives the seed's output schema (the
// json_schema name for OpenAI-compatible servers, the forced tool for
// Anthropic).
const SchemaName = "verdict_record"

//go:embed prompts/v1.md
var promptV1 string

// Prompt returns the system prompt of PromptVersion (Korean instructions, the
// seed's schema, three of the seed's examples as few-shot).
func Prompt() string { return promptV1 }

// sourceTurn is the recall source turn as the request shows it.
type sourceTurn struct {
	TurnID    string  `json:"turn_id"`
	ReplyText *string `json:"reply_text"`
}

// input is the user message: what the model may read.
type input struct {
	Card             *persona.Card   `json:"card"`
	Turn             *persona.Turn   `json:"turn"`
	RecallSourceTurn *sourceTurn     `json:"recall_source_turn"`
	RuleRecord       *persona.Record `json:"rule_record"`
}

// userMessage encodes the input of one record as compact JSON.
func userMessage(rec *persona.Record, card *persona.Card, cx persona.Context) (string, error) {
	in := input{Card: card, Turn: cx.Turn, RuleRecord: rec}
	if rec.RecallSourceTurn != nil && cx.TurnByID != nil {
		if src, ok := cx.TurnByID(*rec.RecallSourceTurn); ok {
			in.RecallSourceTurn = &sourceTurn{TurnID: src.TurnID, ReplyText: src.ReplyText}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&in); err != nil {
		return "", fmt.Errorf("summarize: encode input: %w", err)
	}
	return string(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// request is what the model is asked for one record.
func (s *Summarizer) request(rec *persona.Record, card *persona.Card, cx persona.Context) (llm.Request, error) {
	msg, err := userMessage(rec, card, cx)
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{
		System:     promptV1,
		Messages:   []llm.Message{llm.User(msg)},
		Schema:     persona.SchemaJSON,
		SchemaName: SchemaName,
		MaxTokens:  s.cfg.AnswerTokens,
	}, nil
}
