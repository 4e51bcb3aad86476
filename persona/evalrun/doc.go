// Package evalrun is the evaluation runner of the character-card judge (spec
// persona.md "Evaluation runner and manual review"; seed 000 "[평가 러너]"):
// it compares the judge's verdict records with turns a creator labelled by
// hand (gold) and compares models on prompts that several models answered.
//
// It owns the gold format (ReadGold), the agreement report (Evaluate: agreement
// with a Wilson interval, Cohen's kappa, the confusion matrix, per-verdict
// precision and recall, disagreements grouped by reason), the per-model
// comparison (CompareModels: mismatch rate per model, McNemar's exact test per
// pair) and the statistics they use (Wilson, Kappa, McNemarExact). It also
// owns the comparisons the screen and the CLI show: SharedPrompts and
// FindDisagreements (prompts several models answered, and those whose
// verdicts differ — the same first-record rule CompareModels counts by),
// CompareRuns (turns two runs judged differently) and Summary, the report of
// `evident eval` as text (WriteText) or JSON (WriteJSON).
//
// It must not touch anything else: it does not judge (records come from
// persona/batch, verdicts are decided by persona), it does not store or load
// runs (store), it serves nothing over HTTP (web), and it does no I/O besides
// decoding the reader handed to ReadGold and writing a Summary to the writer
// handed to it. Everything here is a pure function of its arguments. It
// imports only persona, persona/speech and internal/located.
//
// # Gold format
//
// JSON Lines, one object per labelled turn:
//
//	{"turn_id": "T-010041", "verdict": "설정대로 말함", "note": "「필요」는 명사"}
//
// turn_id and verdict are required, note is optional, other keys are ignored.
// Blank lines are skipped and a UTF-8 byte-order mark before the first line is
// dropped. ReadGold stops at the first bad line and returns a *LineError
// naming it (1-based): a line that is not one JSON object, a missing or empty
// turn_id, a verdict that is not one of the five persona.Verdicts (the file
// must be NFC, as every input of the judge is), or a turn_id already labelled
// on an earlier line. Nothing is dropped silently: a gold file with one bad
// line is rejected as a whole, because the agreement of a partly read gold
// set would be a number nobody can source.
//
// The demo's gold set is persona/demo/data/gold.jsonl: 120 demo turns
// labelled the way a careful creator reads them (not the rules' literal
// reading, which is intended.tsv), so it disagrees with the rules where a
// person would — nouns such as 필요/중요 that end in 요, a polite -습니까
// question, a lexicon term touched in a harmless sense, an off-canon name the
// creator accepts, a recall failure the rules cannot see.
//
// # Formulas
//
// Agreement p̂ = k/n, k turns where the gold verdict equals the record's
// verdict among the n gold turns that have a record. Its 95 % interval is the
// Wilson score interval (E. B. Wilson, "Probable inference, the law of
// succession, and statistical inference", JASA 22, 1927), with z = Φ⁻¹(0.975)
// = 1.959963984540054:
//
//	centre = (p̂ + z²/2n) / (1 + z²/n)
//	half   = z/(1 + z²/n) · √( p̂(1−p̂)/n + z²/4n² )
//	[Lo, Hi] = [centre − half, centre + half], clamped to [0, 1]
//
// It stays inside [0, 1] and is not degenerate at k = 0 or k = n (0/10 gives
// [0, 0.2775], 10/10 gives [0.7225, 1]); it is undefined for n = 0.
//
// Cohen's kappa (J. Cohen, "A coefficient of agreement for nominal scales",
// Educational and Psychological Measurement 20, 1960) on the confusion matrix
// m (rows gold, columns predicted, both in persona.Verdicts order):
//
//	p_o = Σ_i m_ii / n
//	p_e = Σ_i (row_i · col_i) / n²
//	κ   = (p_o − p_e) / (1 − p_e)
//
// κ is undefined when n = 0 or p_e = 1 (both sides put every turn in one and
// the same verdict); it is then reported as null.
//
// Per verdict v: precision = m_vv / col_v (null when the judge never predicted
// v), recall = m_vv / row_v (null when the gold set never uses v).
//
// McNemar's test (Q. McNemar, "Note on the sampling error of the difference
// between correlated proportions or percentages", Psychometrika 12, 1947) in
// its exact form: of the prompts two models both answered, b are those where
// only the first model's reply was off the card (verdict ≠ 설정대로 말함) and
// c those where only the second's was. Under the null hypothesis each
// discordant prompt is equally likely to go either way, so b ~ Binomial(b+c,
// ½) and the two-sided p-value is
//
//	p = min(1, 2 · Σ_{i=0}^{min(b,c)} C(b+c, i) / 2^(b+c)),   p = 1 when b + c = 0.
//
// It is computed exactly with math/big up to b+c = 4096 and with log-gamma
// (summing the tail terms from the largest down; relative error a few
// 1e-12 at the switch, checked by the tests) beyond.
//
// # Disagreement reasons
//
// A disagreement is a gold turn whose record has another verdict. Groups are
// keyed by (gold verdict, predicted verdict, rule detail), where the rule
// detail is read from the record for the predicted verdict:
//
//   - 말투 어긋남: rule_observed ≠ rule_expected, and the sentence endings the
//     record quotes — words in 「」 in the summary that are the last 어절 of a
//     sentence of the reply_text the evidence cites (persona/speech.Split and
//     LastWord), e.g. "존댓말 ≠ 반말 · 나; endings 「필요」";
//   - 금지 소재 접촉: touched_term and touched_topic, e.g. "touched 「투표」 · 현실 정치";
//   - 세계관 밖 고유명사: the off_canon_entities, e.g. "off-canon 「금성호」";
//   - 앞 회차를 기억 못 함: the recall_target, e.g. "recall 「파랑이」";
//   - 설정대로 말함: no rule fired, detail "".
//
// Groups are sorted by count (descending), then by gold and predicted verdict
// in persona.Verdicts order, then by detail.
package evalrun
