// Package ingest reads the three input tables of the character-card judge
// (spec persona.md "Input: three tables"): chat_turn, character_card and
// topic_lexicon, each as JSON Lines, a JSON array or CSV.
//
// It owns reading and decoding: choosing the format by file extension
// ([FormatOf]), cutting a stream into undecoded rows with the line where each
// starts ([Rows]), and decoding one row into a persona.Turn, persona.Card or
// persona.LexiconRow ([DecodeTurn], [DecodeCard], [DecodeLexicon]). It checks
// what a single row can show on its own: syntax, UTF-8, column types and
// required columns, with the line and rune column of the problem
// ([RowError]). Every string that comes out is NFC-normalised
// (golang.org/x/text/unicode/norm), so the judge compares names as
// normalised text.
//
// It must not touch judging, nor the rejects policy that needs more than one
// row: duplicate turn_id, unknown character_id, session order and counting
// rejects (spec persona.md "Output") are the caller's. A row that ingest
// cannot read is returned as an error for the caller to put on the rejects
// stream; ingest never drops a row silently and never stops the run for one
// bad row.
//
// # Streaming and concurrency
//
// A [Rows] reads its stream once and holds at most one row in memory, so
// tables larger than memory are fine; it is used from one goroutine. The
// [Raw] rows it returns are independent copies, and the Decode functions are
// pure, so rows can be decoded on several goroutines. Syntax and UTF-8 checks
// of JSON rows happen in the Decode functions, off the reading goroutine.
//
// # Decisions
//
//   - A JSON array is cut by a bracket- and string-aware splitter rather than
//     json.Decoder, because json.Decoder cannot go on after a syntax error
//     inside one element, and such an element must become a reject.
//   - A chat_turn JSON row is read by this package's own one-pass scanner
//     (turnscan.go, issue 18), which validates the row (syntax, UTF-8, object)
//     and decodes the twelve columns at once, the row's text copied into one
//     string whose substrings the cells are (4 allocations per row, where
//     json-iterator after json.Valid and utf8.Valid took 35). It takes a row
//     only when its result is certainly encoding/json's; any other row (bad,
//     a repeated column, a key that needs encoding/json's case folding, a
//     surrogate escape) is decoded again by encoding/json, the reference,
//     which words the error with line and column, so messages are as before.
//     FuzzScanTurn holds the scanner to encoding/json. Cards and lexicon
//     rows, a few per run, use encoding/json only.
//   - A \u escape of half a surrogate pair without the other half (\ud800
//     alone) rejects the JSON row, naming its column and field, where
//     encoding/json would read it as U+FFFD: a name "\ufffd" would be an
//     off-canon name the row does not hold, and a reply's verbatim evidence
//     would show a character it does not have (RFC 8259 section 8.2 leaves
//     such text's meaning open).
//   - In CSV an empty cell is null (or absent) for nullable columns, so an
//     empty user_message or reply_text string cannot be written in CSV.
//   - An empty string or null element in a list column (named_entities,
//     canon_entities, forbidden_topics) rejects the row: an empty forbidden
//     topic would match every reply, and an empty name is no name.
//   - user_asked_recall null is an error (the column is a boolean, absent =
//     false); public null means false.
//   - first_person_forms (a card's declined forms of first_person, issue 14
//     item 2) is optional and stays nil when absent, null or an empty CSV
//     cell, unlike the other list columns, so a card without it encodes as
//     before; an empty element rejects the row as in the other lists.
//   - Character Card V2/V3 JSON (spec persona.md, fields under
//     data.extensions) is not read here: this package reads the flat
//     character_card table.
package ingest
