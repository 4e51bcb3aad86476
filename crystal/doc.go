// Package crystal scores vision-language-model reasoning the CRYSTAL way
// (seed 002; spec /work/shared/spec/crystal.md; Barrios & Jin, "Beyond Final
// Answers: CRYSTAL Benchmark for Transparent Multimodal Reasoning
// Evaluation", arXiv 2603.13099; reference package crystal-metrics 0.2.0):
//
//   - SystemPrompt, the seed's output contract, and ParseReply, which reads a
//     model's reply into steps + answer, repairing or flagging, never failing;
//   - MatchSteps / MatchMatrix: Match F1 by greedy 1:1 matching of predicted
//     to reference steps on a similarity matrix, with its evidence (pairs,
//     unmatched steps); Match.Accepts, the acceptance rule, and
//     ExplainUnmatched / ExplainSteps, each unmatched step's nearest step on
//     the other side and whether it lost to a better pair or fell below the
//     threshold;
//   - OrderedF1: Match F1 discounted by how out of order the matched steps
//     are (LIS ratio, or Kendall τ);
//   - Judge: the rule judge of answer correctness, naming the rule (and, in
//     the paper profile, the reference-package quirk) that decided;
//   - CPR: the Causal Process Reward;
//   - Evaluate: per-item scores and dataset macro means, one row of the
//     paper's table.
//
// It owns scoring only. Turning steps into similarities belongs to package
// evident/crystal/embedder (Embedder, Similarity, Lexical); reading references
// and predictions from files and rendering the table and per-item evidence
// belong to evident/crystal/report, the sample set to evident/crystal/demo;
// calling models belongs elsewhere. It reads no files, starts no goroutines
// and keeps no global state; stdlib only.
//
// # Profiles
//
// Every result names its Profile. ProfileSeed (default) follows the seed's
// code literally and judges answers by the spec's clean rules; ProfilePaper
// reproduces the reference package, quirks included, each quirk named by a
// Quirk constant (spec "Decision — profiles", "Decision — quirks").
//
// # Decisions (where spec and seed are silent)
//
//   - Greedy ties: both profiles sort candidates by similarity, then higher
//     predicted index, then higher reference index. This is what the seed's
//     pairs.sort(reverse=True) on (score, i, j) tuples does, and what the
//     spec states for the paper.
//   - Seed edge rules: both lists empty → P = R = F1 = 1; one empty →
//     P = R = F1 = 0 (the seed returns only F1; P and R follow it). Paper:
//     empty reference → ErrEmptyReference, empty prediction → 0.
//   - Threshold 0 in a config means "default": the similarity's hint
//     (Lexical 0.3, the reference package's word-overlap reward) else 0.35.
//     The seed's comparison is ≥, the paper's >, whatever the value.
//   - Order score: 1 with fewer than 2 matched pairs (spec), so a perfect
//     single match is not penalised; an item with no match has F1 0 anyway.
//     Kendall is τ-a over the matched pairs.
//   - Parsing: a reply that parses as JSON but lacks a field is parseable
//     (missing steps → none, missing answer → "", noted in Reply.Notes); null
//     steps are dropped; non-string steps/answers become their compact JSON
//     text; a string reasoning_steps becomes one step. Repair removes fence
//     markers wherever they stand (also inline), keeps tab,
//     newline and CR between tokens and turns them into spaces inside
//     strings; other control characters are dropped. Keys are case-sensitive.
//   - Judge: a rule decides only when it can read both sides (numeric needs a
//     number in each, yes/no a yes/no reading of the prediction, multiple
//     choice a letter on each side — the gold's letter may come from its
//     option text); otherwise the next rule is tried, and exact match decides
//     last. The numeric rule drops "the answer is"-like phrases, reads the
//     first number (thousands commas allowed; "COVID-19" is 19, not −19).
//     Seed numeric edges are inclusive with a 1e-9 relative slack (so 1.05 vs
//     1 passes); the paper profile compares raw floats, as Python would.
//     Seed "contains" ignores one-character golds, so a stray "a" or "C" in
//     prose never matches a letter. Seed "answer is X" needs an upper-case or
//     parenthesised letter ("the answer is a cat" is not option A).
//     Options come from Item.Options (letters A, B, … in order) or else from
//     "A) …" / "(A) …" lines of the question.
//   - Paper judge, where the spec names a quirk but not its exact code: yes
//     is tested before no, with yes words {yes, true, correct} and no words
//     {no, false} as raw substrings; "option x" needs a space or parenthesis
//     after "option"; the last-resort substring test runs in both directions
//     on lower-cased, space-collapsed, punctuation-trimmed text.
//   - CPR paper λ: the spec gives only aw 0.6, sw 0.4; λ stays 0.3.
//   - Dataset level: a missing prediction gives 0 for F1, P, R, order score,
//     Ordered F1, CPR and steps, and a wrong answer (RuleMissing). Under the
//     paper profile an item without reference steps is dropped from the step
//     means — also when its prediction is missing — and its CPR (which needs
//     the step F1) is left out too; accuracy and average steps count it.
//     Average steps counts missing and unparseable replies as 0 steps.
//   - Evaluate needs an explicit Similarity: scores from different
//     similarities are not comparable, so none is picked silently.
package crystal
