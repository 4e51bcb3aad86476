package persona

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Verdict is one of the five verdict values of the seed's output schema, used
// verbatim in code, output and screen (seed 000; spec persona.md "What it is for").
type Verdict string

// The five verdict values, in the priority order of spec persona.md "The rules":
// the first rule that fires decides; none firing gives Kept.
const (
	ForbiddenTopic Verdict = "금지 소재 접촉"
	OffCanon       Verdict = "세계관 밖 고유명사"
	SpeechOff      Verdict = "말투 어긋남"
	RecallFailed   Verdict = "앞 회차를 기억 못 함"
	Kept           Verdict = "설정대로 말함"
)

// Verdicts lists the five verdicts in priority order (highest first). Screens
// and tallies group by this order.
var Verdicts = []Verdict{ForbiddenTopic, OffCanon, SpeechOff, RecallFailed, Kept}

// Valid reports whether v is one of the five verdict values (automatic check 1).
func (v Verdict) Valid() bool {
	switch v {
	case ForbiddenTopic, OffCanon, SpeechOff, RecallFailed, Kept:
		return true
	}
	return false
}

// ParseVerdict reads a verdict value that a model wrote (the verdict of a
// summarizer's answer, persona/summarize): s is NFC-normalised
// (golang.org/x/text/unicode/norm) and trimmed of surrounding white space
// (strings.TrimSpace), then compared verbatim with the five values (spec
// persona.md: "Text is NFC-normalised before any rule"; automatic check 1,
// "verdict is one of the five"). It returns that value and true, or "" and
// false when the result is not one of the five: a value with anything more
// (another word, a mark, an inner space) is still refused. The work is linear
// in len(s).
func ParseVerdict(s string) (Verdict, bool) {
	v := Verdict(strings.TrimSpace(norm.NFC.String(s)))
	if !v.Valid() {
		return "", false
	}
	return v, true
}

// The two speech styles of the card's honorific_rule and of rule_observed.
const (
	Banmal    = "반말"
	Jondaemal = "존댓말"
)

// Turn is one row of the chat_turn table: one character reply (spec persona.md
// "Input: three tables"). Nullable text columns are pointers (nil = JSON null
// or absent). NamedEntities distinguishes null (nil slice: the chat server's
// extraction failed, the off-canon check is skipped) from an empty list
// (non-nil, length 0: no names). All strings are NFC-normalised by the reader.
type Turn struct {
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
	// CreatedAt is the RFC 3339 timestamp as written, "" when absent. Session
	// order uses it only when every turn of the session has one.
	CreatedAt string `json:"created_at,omitempty"`
	// PromptID marks the same prompt sent to several models, "" when absent.
	PromptID string `json:"prompt_id,omitempty"`
}

// EntityRole is one element of character_card.entity_roles: a relation word the
// user may ask about (Role, e.g. "동생") and the card's name for it (Entity).
type EntityRole struct {
	Role   string `json:"role"`
	Entity string `json:"entity"`
}

// Card is one row of the character_card table (spec persona.md "Input").
// HonorificRule is Banmal or Jondaemal; FirstPerson the card's first-person
// word (나, 저, …). List columns are never nil after reading (empty = none),
// except the optional FirstPersonForms.
type Card struct {
	CharacterID     string       `json:"character_id"`
	Name            string       `json:"name"`
	HonorificRule   string       `json:"honorific_rule"`
	FirstPerson     string       `json:"first_person"`
	CanonEntities   []string     `json:"canon_entities"`
	ForbiddenTopics []string     `json:"forbidden_topics"`
	EntityRoles     []EntityRole `json:"entity_roles"`
	Description     string       `json:"description,omitempty"`
	Public          bool         `json:"public,omitempty"`
	// FirstPersonForms are the card's own declined forms of FirstPerson
	// (a card whose first person is 소인 may list 소인이, 소인의), optional
	// column first_person_forms (a list of non-empty strings; issue 14
	// item 2, the spec is silent). Under profile "extended" a logged first
	// person equal to one of them agrees with the card
	// (speech.Profile.SameFirstPerson); under "seed" they are ignored, the
	// seed's rule being plain equality. nil when the card lists none, so a
	// card without the column encodes as before.
	FirstPersonForms []string `json:"first_person_forms,omitempty"`
}

// LexiconRow is one row of the topic_lexicon table. Row order matters: the
// earlier row wins when several terms match (spec persona.md, rule 3 Decision).
type LexiconRow struct {
	Term  string `json:"term"`
	Topic string `json:"topic"`
}

// Source names the table an evidence row cites (the schema's source enum).
type Source string

// The three sources of the output schema.
const (
	SourceTurn    Source = "chat_turn"
	SourceCard    Source = "character_card"
	SourceLexicon Source = "topic_lexicon"
)

// Agg is an aggregate an evidence row applies to its cited column. For a text
// column, count is the number of sentences the speech rule reads (sentences
// with a Hangul syllable); for a list column, the number of elements.
type Agg string

// Aggregates of the output schema. The judge writes only AggCount.
const (
	AggCount Agg = "count"
	AggSum   Agg = "sum"
	AggAvg   Agg = "avg"
	AggMin   Agg = "min"
	AggMax   Agg = "max"
)

// Evidence is one cited row {source, field, agg, value}. Value is the cited cell
// verbatim (after NFC): a string, a bool, nil for a null cell, or, with Agg
// set, the aggregate as an int. For a list column Value is one element; for
// entity_roles the role or the entity of one element.
type Evidence struct {
	Source Source `json:"source"`
	Field  string `json:"field"`
	Agg    Agg    `json:"agg,omitempty"`
	Value  any    `json:"value"`
}

// Record is one verdict record of the seed's output schema (embedded as
// persona/schema.json). Nullable fields are pointers; OffCanonEntities is nil
// (JSON null) exactly when the turn's named_entities is null.
type Record struct {
	TurnID           string     `json:"turn_id"`
	SessionID        string     `json:"session_id"`
	CharacterID      string     `json:"character_id"`
	ModelID          string     `json:"model_id"`
	Verdict          Verdict    `json:"verdict"`
	RuleExpected     *string    `json:"rule_expected"`
	RuleObserved     *string    `json:"rule_observed"`
	OffCanonEntities []string   `json:"off_canon_entities"`
	TouchedTerm      *string    `json:"touched_term"`
	TouchedTopic     *string    `json:"touched_topic"`
	RecallTarget     *string    `json:"recall_target"`
	RecallSourceTurn *string    `json:"recall_source_turn"`
	Evidence         []Evidence `json:"evidence"`
	Summary          string     `json:"summary"`
	Hedge            *string    `json:"hedge"`
}

// TurnColumns, CardColumns and LexiconColumns are the real column names of the
// three tables; an evidence field outside them fails automatic check 8.
var (
	TurnColumns = []string{"turn_id", "session_id", "character_id", "model_id", "user_message",
		"reply_text", "first_person", "named_entities", "honorific_level", "user_asked_recall",
		"created_at", "prompt_id"}
	CardColumns = []string{"character_id", "name", "honorific_rule", "first_person",
		"canon_entities", "forbidden_topics", "entity_roles", "description", "public"}
	LexiconColumns = []string{"term", "topic"}
)
