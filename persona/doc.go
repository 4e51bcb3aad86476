// Package persona is the character-card judge: for every reply turn of a
// role-play character it decides by rules, never by a model, whether the
// reply kept its character card, and writes a verdict record with verbatim
// evidence, a one-line Korean summary and a hedge (spec persona.md; seed 000).
//
// It owns the domain types (Turn, Card, LexiconRow, Record, Evidence, the
// five Verdict values), the four rules and their priority (Judge), the
// session index the recall rule reads (Sessions), the evidence and default
// summaries, the seed's ten automatic checks (Judge.Check) and the embedded
// output schema (ValidateJSON). It does no I/O: reading the three tables is
// persona/ingest's job, streaming whole files through the judge is
// persona/batch's, storing and showing results belong to store and web.
// Speech-style reading lives in persona/speech.
//
// # Rules (spec persona.md "The rules"; verdict = first that fires)
//
//  1. 금지 소재 접촉: a topic_lexicon term occurs verbatim in reply_text and its
//     topic is in the card's forbidden_topics; the earliest such lexicon row
//     is touched_term/touched_topic. When no matching row is forbidden,
//     touched_term is the earliest matching row's term and touched_topic is
//     null (Decision of the spec).
//  2. 세계관 밖 고유명사: named_entities minus canon_entities, in order, without
//     repeats; null named_entities skip the check (off_canon_entities null).
//  3. 말투 어긋남: the style read from reply_text (persona/speech) differs from
//     honorific_rule, or first_person is non-null and differs from the card's.
//     rule_observed is "{style} · {first_person}" ("{style}" alone when
//     first_person is null; null when no sentence could be read).
//  4. 앞 회차를 기억 못 함: only when user_asked_recall; the first entity_roles
//     row whose role occurs in user_message names the entity; it fires when an
//     earlier turn of the session (session order) named it and this reply does
//     not contain it; recall_source_turn is the earliest such turn.
//
// Text is NFC before any rule (the reader normalises it; checks normalise
// what they compare).
//
// # Evidence and summaries
//
// Which rows each verdict cites follows the seed's seven examples; see
// Judge.evidence's comment (evidence.go) for the exact list and the one
// Decision taken where the examples differ. Numbers the summary states (the
// sentence count) are cited with agg "count". Every default summary is one
// 존댓말 sentence ending in -니다, quoting words from the inputs in 「」 with the
// particle their last sound takes (coda in korean.go).
package persona
