// Package cardfile imports and exports character card files: Character Card
// V2 and V3 (spec "chara_card_v2" / "chara_card_v3") as plain JSON, inside a
// PNG's text chunks ("chara", "ccv3") and inside a CHARX zip ("card.json"),
// and Character Card V1 (the six fields at the root), imported as V2.
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
// [Read] returns a [File] that keeps the document's bytes as read and the
// whole JSON document as a tree (objects as map[string]any, numbers as
// json.Number). [File.Card] returns the judge's card and the [Guesses]
// behind it; [File.SetPersona] writes the judge's fields; [File.JSON]
// exports the document; [PNG] writes it back into a PNG. [File.Origin]
// says where the card came from (container, chunk type and keyword, bytes
// before a CHARX's zip), [File.Faults] lists the fields of the wrong type,
// [File.Assets] the data.assets elements with a CHARX's embedded bytes.
//
// # Faults
//
// Real exports carry fields of the wrong type: "character_book": null,
// "tags": "a, b", a number among alternate_greetings, "entries": null, a
// lorebook entry whose keys is one string. Every present field that the V2
// or V3 spec types (data's strings, lists of strings, character_book and
// its entries, assets, creator_notes_multilingual, the dates, spec_version;
// for a V1 card its six strings) and that has another JSON type, null
// included, is a [Fault] "PATH: GOT where WANT is expected", for example
// "data.character_book: null where an object is expected". A missing field
// is not a fault (exporters leave optional and V2-only fields out). A
// faulty field is not read (a null book gives no canon; a string tags
// stays unsplit) and is written back as it was, byte for byte. Only
// data.name (must be a string), a non-empty non-object data.extensions and
// a malformed evident/persona extension stay errors of Read. data.extensions
// that is null or [] is a fault and is read as empty; it is the one faulty
// field SetPersona replaces, by an object holding our extension.
//
// # Export keeps the bytes
//
// [File.JSON] is the document's bytes exactly as read until SetPersona
// changes something; then it is the same bytes with only the value of
// data.extensions["evident/persona"] replaced (in place) or inserted (after
// the last member of data.extensions, or as a new data.extensions after
// data's last member). White space, key order, escapes, numbers, unknown
// keys and faulty fields are untouched. [PNG] writes those bytes, and for
// the other keyword's chunk only the values of spec and spec_version are
// replaced. A V1 card has no V2 bytes: its V2 document is marshalled (keys
// sorted, HTML not escaped, numbers as read).
//
// # Assets (CHARX)
//
// Every object in data.assets is an [Asset]. URIs embeded://PATH (the V3
// spec's spelling) and embedded://PATH (the common one) name a zip entry;
// PATH is looked up exactly (case-sensitive, '/'-separated, as SPEC_V3.md
// "CHARX" says) relative to the folder of card.json, then from the root,
// then percent-decoded. A PATH that is empty, absolute ("/…", "C:…"), has a
// backslash or NUL, or has a ".." segment (before or after percent
// decoding) is refused and never looked up. Each entry is read up to
// 64 MiB and all assets of a card up to 128 MiB together; an entry over
// either is not read (its Problem says so), and an entry that inflates
// past the size its header declares fails to read (archive/zip stops
// there). ccdefault:, http(s):, data: and __asset: URIs are listed, never
// fetched or decoded; a JSON or PNG card's embedded assets are listed with
// "not read: the card is not a CHARX".
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
//   - honorific_rule: first what the prose says: every sentence of
//     data.description and data.personality (cut at line breaks and
//     . ! ? 。) that names exactly one style (존댓말, 존대, 높임말, 경어,
//     jondaemal / 반말, 하대, banmal) and no negation (않, 안, 못, 말고,
//     대신, 없, 금지, never, not, n't) counts; when they all name one style
//     it is the guess ("누구에게나 존댓말을 쓴다" → 존댓말; "반말을 쓰지
//     않는다" is not read; "반말 대신 존댓말" names both and is not read).
//     Otherwise the style (speech.Seed().Read(text).Style()) that most
//     of the character's texts have. The texts are data.first_mes, each
//     data.alternate_greetings element, and each of the character's turns in
//     data.mes_example: a turn starts at a line beginning "{{char}}:",
//     "<bot>:" or "<data.name>:" (case-insensitive, ':' or '：') and runs
//     until the next line starting "{{user}}:", "<user>:", "{{char}}:",
//     "<bot>:", "<data.name>:" or "<START>", and the speech quoted in the
//     prose ("…", “…”, 「…」, 『…』 on one line, with a Hangul syllable;
//     "data.description quote 1"). A tie, or no text with a Hangul
//     sentence, guesses nothing.
//   - first_person: first what the prose says: the word after 1인칭,
//     일인칭 or "first person" ("1인칭: 저", "1인칭은 '소인'"), or what the
//     character calls itself after 자신을/스스로를/자기를 when quoted or
//     before a quotative ("자신을 본좌라고 부른다"; "자신을 사랑한다" is not
//     read); 1 to 4 Hangul syllables, the declined forms below mapped to
//     나/저, sentences with a negation skipped; when all statements agree
//     that word is the guess, and it may be any word (소인, 본좌). Otherwise
//     the more frequent of 나 and 저 over the same texts,
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
//   - V1 cards are imported ([File.FromV1]): a root object with no spec
//     and no data that has "name" and "first_mes" or "mes_example" (the two
//     Tavern-only names; NativeTavern's own format has name, description
//     and personality too and stays refused). As SillyTavern does, the V2
//     document keeps every root key where it is (the V1 fields stay at the
//     root for V1 readers) and gets spec chara_card_v2 2.0 and a data
//     object with the six V1 fields as they were (missing ones "") and the
//     V2 defaults ("", [] and {}). A PNG "chara" chunk holding V1 is read
//     the same; [PNG] writes it back as a V2 "chara" chunk. [ErrV1] is no
//     longer returned.
//   - Other JSON that has no "spec" of chara_card_v2/chara_card_v3 is
//     rejected with [ErrNotSpec], naming its first keys; nothing is mapped
//     by guess (an app's own format is never read as an empty card).
//   - data.name must be a string. data.extensions may be absent, null or an
//     empty array (some exporters write [] for an empty map); anything else
//     that is not an object is an error. A malformed extension object (wrong
//     types, a honorific_rule that is not 반말/존댓말, empty list elements)
//     is an error of Read, so Card cannot fail.
//   - A CHARX zip's card is the root "card.json" (case-insensitive, '\' read
//     as '/'); when there is none, the only card.json in a folder is used;
//     several are an error. Bytes before the zip (a self-extracting or image
//     prefix) are allowed and counted in [File.Prefix], whether the zip's
//     offsets count them or not.
//   - Lorebook keys are canon candidates even when an entry says
//     "use_regex": true: SillyTavern writes that flag on plain-word keys
//     (its Seraphina card does), so only a key written as /…/flags is
//     taken as a regular expression.
//   - A PNG must be well formed up to IEND (chunk lengths inside the file);
//     only the card chunks' CRCs are checked. Bytes after IEND are kept.
//   - The character_id of [File.Card] is the argument when non-empty, else
//     the extension's character_id, else data.name.
//   - Export keeps the bytes as read (see "Export keeps the bytes"); our
//     extension object itself is written with sorted keys, without HTML
//     escaping.
//   - [PNG] replaces the card chunks by tEXt chunks at the place of the
//     first one, one for each keyword the PNG had ("chara" gets the document
//     relabelled chara_card_v2 2.0, "ccv3" relabelled chara_card_v3 3.0 when
//     the document is not already that spec); a PNG with no card chunk gets
//     "ccv3" (V3 document) or "chara" (V2) before IEND.
//   - Every string that comes out is NFC (golang.org/x/text/unicode/norm,
//     already a dependency of the module), as persona/ingest does.
//   - Size limits: a compressed chunk or zip entry may expand to at most
//     64 MiB; a CHARX's assets to 128 MiB together.
package cardfile
