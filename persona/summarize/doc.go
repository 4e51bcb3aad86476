// Package summarize lets a language model rewrite the one-line Korean summary
// of a verdict record (and propose the evidence rows it quotes) while code
// keeps the verdict: the model's answer is used only when code has checked
// it, and the rules' default sentence and evidence stand otherwise (spec
// persona.md "Evidence, summary, hedge"; seed 000 automatic checks 1, 8, 9,
// 10; issue 4).
//
// It owns the versioned prompt (prompts/v1.md, embedded; PromptVersion), the
// request built from the card, the turn and the rule's record, the decision
// whether a model's answer is used, discarded or reverted, the proper-noun
// rule below, the content-addressed answer cache's interface and its
// in-process forms (Cache, BatchCache, MemoryCache, Buffered; the store
// implements it as store.SummaryCache), the run's Tally and the sidecar line (LogLine). It
// plugs into persona/batch as Config.Summarize (Summarizer.Summarize).
//
// It must not touch: the verdict or any rule field (persona decides them and
// a model's disagreement only discards its answer), the call policy —
// timeouts, retries, backoff, concurrency and the run budget are llm.Wrap's —
// the output schema (persona/schema.json, the seed's, unchanged; which summary
// was used is a sidecar, never a record field), the pipeline and its order
// (persona/batch), and the store: it imports no adapter (arch_test.go); the
// answer types it caches (persona.CachedAnswer, persona.CacheEntry) live in
// persona so that the store can implement Cache without importing it.
//
// # What code decides
//
// For each record the rules produced, the model gets the card, the turn, the
// recall source turn when the record cites one, and the rule's whole record
// (fields, evidence, default summary, hedge), and must answer with a record
// in the seed's schema. Code then, in this order:
//
//  1. discards the answer — the record keeps the rule's summary and evidence —
//     when it is not a JSON object ("discarded: malformed JSON"), when its
//     verdict, NFC-normalised and trimmed of surrounding white space
//     (persona.ParseVerdict), is not one of the five ("discarded: check 1";
//     the answer is read with that value from then on), when it does not
//     validate against the seed's schema ("discarded: schema"), when its
//     verdict differs from the rule's ("discarded: verdict differs": the
//     verdict belongs to the rules), or when turn_id, session_id,
//     character_id, model_id or any rule field (rule_expected,
//     rule_observed, off_canon_entities, touched_term, touched_topic,
//     recall_target, recall_source_turn) differs from the rule's
//     ("discarded: rule field differs"; Summary.Detail names the field). The
//     model's hedge is ignored: the hedge is the rules'.
//  2. builds the candidate: the rule's record with the model's summary and
//     evidence (NFC), and runs persona's own ten checks on it
//     (persona.Judge.Check, with the batch's check context). The first check
//     that fails reverts to the rule's default sentence and evidence:
//     "check 2" (empty summary or evidence), "check 8" (an evidence field
//     that is not a real column), "check 9" (a value that is not verbatim
//     the cited cell), "check 10" (the summary is not one 존댓말 sentence).
//     Checks 1 and 3–7 read only fields that are the rule's, so they pass.
//  3. reverts with "rule evidence" when the candidate's evidence does not
//     keep every row of the rule's evidence, in order (the model may add
//     rows, never drop one), and
//  4. reverts with "proper noun" when the summary names a proper noun that is
//     not in the evidence or the card (the rule below).
//
// Otherwise the model's summary and evidence are used ("model"). When no
// answer comes (the call failed after llm.Wrap's retries, the run budget is
// spent, the model refused) the rule's sentence stands with
// "failed: timeout", "failed: budget", "failed: http 503", "failed: refused",
// "failed: empty answer", "failed: connection", "failed: cancelled" or
// "failed: error".
//
// # The proper-noun rule
//
// A summary mentions these, and each must occur (as a substring, after NFC)
// in an allowed text:
//
//   - every span quoted in 「」 (the seed quotes names and words this way);
//   - every known name of at least two characters that occurs in the summary.
//     Known names are every card's name, canon_entities and entity_roles
//     entities (Config.Cards: other characters' names included — that is how
//     an off-card person is caught), every topic_lexicon term, the turn's
//     named_entities and Config.ExtraNames (e.g. every named_entities of the
//     log).
//
// Allowed texts are the candidate's evidence string values (aggregate rows
// excluded), this card's name, canon_entities and entity_roles (roles and
// entities), and the record's rule field values (rule_expected, rule_observed,
// off_canon_entities, touched_term, touched_topic, recall_target,
// recall_source_turn; code computed them from the cells). Korean has no
// capitals, so an unquoted name that no table knows cannot be told from an
// ordinary word; such a name passes this rule. The prompt asks the model to
// quote every name in 「」, and the rule is on the side of caution: a false
// alarm only keeps the rule's sentence. Its work is linear in the record,
// whatever the number of known names or the card's size: the names are an
// automaton built by New (internal/multimatch), read once over the summary,
// and a large card's texts a suffix array built on its first record
// (BenchmarkProperNouns: 5–7 µs a record with a million known names or a
// 200,000-role card, where one strings.Contains per name and per allowed text
// took 173 ms and 44 ms).
//
// # Cache
//
// Every answer the model gives (also one that code then rejects) is cached
// under sha256(PromptVersion, provider, model, the request as JSON), so a
// re-run with the same prompt, model and inputs sends nothing for unchanged
// turns and reaches the same decision. Failed calls are not cached.
// Without a Config.Cache the Summarizer keeps answers in memory for its own
// life only (NewMemoryCache); store.SummaryCache keeps them in the store's
// llm_cache table (migration 0002) across runs; Buffered holds writes back
// while a store run's transaction holds the write lock and flushes them in
// one write (BatchCache).
package summarize
