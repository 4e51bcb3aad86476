// Package cardfile imports and exports character card files: Character Card
// V2 and V3 (spec "chara_card_v2" / "chara_card_v3") as plain JSON, inside a
// PNG's text chunks ("chara", "ccv3") and inside a CHARX zip ("card.json").
// It turns such a file into the judge's persona.Card (spec persona.md
// "Input", character_card) and writes the judge's fields back into the file.
//
// It owns the card file formats: sniffing, PNG chunk walking (tEXt, zTXt,
// iTXt, with CRC checks), base64 and JSON decoding with positions in errors,
// the CHARX zip layout, the namespaced extension data.extensions["evident/persona"]
// and the prefill guesses made when that extension is missing. It must not
// touch judging (no rule, verdict or evidence code lives here) and reads
// speech only through persona/speech (speech.Seed().Read and the same
// notion of a word). It does no file-system I/O: callers pass bytes in and
// get bytes out.
//
// # Shapes
//
// [Read] returns a [File] that keeps the whole JSON document as a tree
// (objects as map[string]any, numbers as json.Number, so every number is
// written back as it was read). [File.Card] returns the judge's card and the
// [Guesses] behind it; [File.SetPersona] writes the judge's fields;
// [File.JSON] exports the document; [PNG] writes it back into a PNG.
//
// The extension object data.extensions["evident/persona"] holds, all optional:
//
//	{"character_id": "…", "name": "…", "honorific_rule": "반말"|"존댓말",
//	 "first_person": "나", "canon_entities": ["…"], "forbidden_topics": ["…"],
//	 "entity_roles": [{"role": "동생", "entity": "하늘"}],
//	 "description": "…", "public": true}
//
// "name" is written only when the judge's name differs from data.name.
// Keys inside the extension that this package does not know are kept.
//
// # Prefill (fields the extension lacks)
//
// Each field is taken from the extension when it is there (an empty string
// or null counts as missing); otherwise:
//
//   - canon_entities: data.name, data.nickname, then every
//     data.character_book.entries[].keys element, trimmed, NFC, without
//     empty strings and repeats, in that order. Keys written as a regular
//     expression ("/…/flags") are skipped.
//   - honorific_rule: the style (speech.Seed().Read(text).Style()) that most
//     of the character's texts have. The texts are data.first_mes, each
//     data.alternate_greetings element, and each of the character's turns in
//     data.mes_example: a turn starts at a line beginning "{{char}}:",
//     "<bot>:" or "<data.name>:" (case-insensitive, ':' or '：') and runs
//     until the next line starting "{{user}}:", "<user>:", "{{char}}:",
//     "<bot>:", "<data.name>:" or "<START>". A tie, or no text with a Hangul
//     sentence, guesses nothing.
//   - first_person: the more frequent of 나 and 저 over the same texts,
//     counting the words 나, 내가, 날, 나는 as 나 and 저, 제가, 저는, 절 as
//     저; a word is a whitespace-separated piece with non-Hangul characters
//     stripped from both ends ("*나는" → 나는). A tie or no hit guesses
//     nothing. 저 is also the demonstrative "that", which is why this is a
//     guess for the creator to confirm.
//   - forbidden_topics, entity_roles: never guessed; empty.
//
// Every guessed field is listed in [Guesses].Guessed with its counts and the
// texts read; every field left empty is listed in [Guesses].Empty. A card
// read entirely from the extension has no guesses.
//
// # Decisions
//
//   - ccv3 is preferred over chara: when a PNG has a "ccv3" chunk it alone is
//     read (an error in it is an error of the file, with no fall-back to
//     "chara"), as SillyTavern does. Chunk keywords match case-insensitively;
//     the first chunk with a keyword wins. A chunk's text is base64 of the
//     JSON; text that starts with '{' is taken as the JSON itself.
//   - V1 cards (fields at the root, no "data") are rejected with [ErrV1]:
//     there is no data.extensions to hold our fields. Re-save the card as V2
//     or V3 in a card editor.
//   - JSON that has no "spec" of chara_card_v2/chara_card_v3 is rejected
//     with [ErrNotSpec], naming its first keys; nothing is mapped by guess
//     (an app's own format is never read as an empty card).
//   - data.name must be a string. data.extensions may be absent, null or an
//     empty array (some exporters write [] for an empty map); anything else
//     that is not an object is an error. A malformed extension object (wrong
//     types, a honorific_rule that is not 반말/존댓말, empty list elements)
//     is an error of Read, so Card cannot fail.
//   - A CHARX zip's card is the root "card.json" (case-insensitive, '\' read
//     as '/'); when there is none, the only card.json in a folder is used;
//     several are an error. Bytes before the zip (a self-extracting or image
//     prefix) are allowed.
//   - A PNG must be well formed up to IEND (chunk lengths inside the file);
//     only the card chunks' CRCs are checked. Bytes after IEND are kept.
//   - The character_id of [File.Card] is the argument when non-empty, else
//     the extension's character_id, else data.name.
//   - Export writes keys in sorted order (encoding/json maps), without HTML
//     escaping; values, numbers included, are unchanged.
//   - [PNG] replaces the card chunks by tEXt chunks at the place of the
//     first one, one for each keyword the PNG had ("chara" gets the document
//     relabelled chara_card_v2 2.0, "ccv3" relabelled chara_card_v3 3.0 when
//     the document is not already that spec); a PNG with no card chunk gets
//     "ccv3" (V3 document) or "chara" (V2) before IEND.
//   - Every string that comes out is NFC (golang.org/x/text/unicode/norm,
//     already a dependency of the module), as persona/ingest does.
//   - Size limits: a compressed chunk or zip entry may expand to at most
//     64 MiB.
package cardfile
