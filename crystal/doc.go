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
//     either list empty → 0, as the package's best_match_f1 (issue 16; it
//     was ErrEmptyReference); Evaluate skips the item (ItemScore.Skipped).
//   - Threshold 0 in a config means "default": the similarity's hint
//     (Lexical 0.3, the reference package's word-overlap reward) else 0.35.
//     The seed's comparison is ≥, the paper's >, whatever the value.
//   - Order score: 1 with fewer than 2 matched pairs (spec), so a perfect
//     single match is not penalised; an item with no match has F1 0 anyway.
//     This holds for a missing prediction too (no pairs: LIS ratio 1, τ 1),
//     so the mean order score counts it as 1 (issue 16). Kendall is τ-a
//     over the matched pairs.
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
//     first number (seed: thousands commas allowed, "1,200" is 1200;
//     "COVID-19" is 19, not −19).
//     Seed numeric edges are inclusive with a 1e-9 relative slack (so 1.05 vs
//     1 passes); the paper profile compares raw floats, as Python would.
//     Seed "contains" ignores one-character golds, so a stray "a" or "C" in
//     prose never matches a letter. Seed "answer is X" needs an upper-case or
//     parenthesised letter ("the answer is a cat" is not option A).
//     Options come from Item.Options (letters A, B, … in order) or else from
//     "A) …" / "(A) …" lines of the question.
//   - Paper judge: the package's AccuracyCalculator.evaluate_single
//     (accuracy.py) rule for rule, re-implemented (judge_paper.go) and
//     checked against its own test vectors (package_vectors_test.go): its
//     normalize_text (periods without a digit beside them and , ( ) " [ ]
//     { } ' removed, other punctuation kept), extract_number's first
//     -?\d+\.?\d* ("1,200" is 1, QuirkThousandsFirstDigits; "COVID-19" is
//     −19), compare_numbers (the 15 % grace is strict <, decimals counted on
//     Python's str of the float: "2.500" has 1), yes/no deciding whenever
//     the gold is yes/no (a prediction that reads as neither is wrong),
//     extract_choice's patterns on normalised text, two different single
//     words wrong, then the substring fallback. Python's \d and float()
//     also read non-ASCII digits; here only 0–9 are digits. Explicit
//     Item.Options are laid out as "A) …" lines after the question, where
//     the package looks for them.
//   - Training reward: TrainReward is the package's
//     rewards._lightweight_causal_reward (its check_answer_match, not the
//     judge, and a word-overlap step F1 at > 0.3), on the parsed Reply; it
//     is reported beside CPR in both profiles (ItemScore.Train,
//     Report.TrainReward, the mean over all items, missing ones 0).
//   - CPR paper λ: the spec gives only aw 0.6, sw 0.4; λ stays 0.3.
//   - Dataset level: a missing prediction gives 0 for F1, P, R, order score,
//     Ordered F1, CPR and steps, and a wrong answer (RuleMissing). Under the
//     paper profile an item without reference steps is skipped (flagged
//     ItemScore.Skipped) — also when its prediction is missing — from the
//     step means, its CPR (which needs the step F1) and average steps, as the
//     package leaves it out; accuracy counts it. Average steps counts missing
//     and unparseable replies as 0 steps.
//   - Truncation: when the Similarity is an embedder.Truncator, every step
//     it cut to the model's token limit is listed per item
//     (ItemScore.Truncated: side, step, tokens kept of total) and counted in
//     the report (TruncatedSteps, TruncatedItems).
//   - Evaluate needs an explicit Similarity: scores from different
//     similarities are not comparable, so none is picked silently.
//   - Many models (EvaluateAll, issue 16 item 4): items are scored in
//     parallel and each item's reference side (tokens, vectors and norms,
//     options, the training reward's trimmed steps) is prepared once for all
//     models; every report stays bit for bit what Evaluate gives alone (the
//     means are summed in item order after the parallel part). When items
//     fail, the error is the first failing item's (items order), for the
//     first model failing on it, so it does not depend on scheduling; one
//     model at a time would have reported the first failing model's first
//     item instead, which is the same whenever an item fails for every model.
package crystal
