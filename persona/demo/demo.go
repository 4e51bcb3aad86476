// Package demo embeds the demo data of the character-card judge: one public
// character (CHR-0100) whose past conversations open the product — three
// sessions answering the same scripted prompts with three models — plus three
// characters like the seed's (a blunt 반말·나 sword instructor, a warm
// 존댓말·저 barista, a 존댓말·저 researcher) and a topic lexicon. All text was
// written for this project.
//
// Files (under data/): turns.jsonl (chat_turn, JSON Lines), cards.json
// (character_card, JSON array), lexicon.csv (topic_lexicon, CSV) — three
// formats on purpose, so the demo exercises every reader — and intended.tsv,
// a hand reading of every turn by the rules (turn_id, verdict, why) that tests
// compare with the judge.
//
// The package owns the data and nothing else; it does no I/O outside the
// embedded files.
package demo

import (
	"embed"
	"io"

	"evident/persona/ingest"
)

//go:embed data/turns.jsonl data/cards.json data/lexicon.csv data/intended.tsv
var files embed.FS

func input(name string, f ingest.Format) *ingest.Table {
	return ingest.NewTable("demo:"+name, f, func() (io.ReadCloser, error) { return files.Open("data/" + name) })
}

// Turns, Cards and Lexicon return the three embedded tables as sources
// (ingest.Table, named "demo:" and the file name).
func Turns() *ingest.Table   { return input("turns.jsonl", ingest.JSONL) }
func Cards() *ingest.Table   { return input("cards.json", ingest.JSONArray) }
func Lexicon() *ingest.Table { return input("lexicon.csv", ingest.CSV) }

// Intended returns the hand reading intended.tsv (turn_id TAB verdict TAB why).
func Intended() ([]byte, error) { return files.ReadFile("data/intended.tsv") }
