// Package review computes the seed's manual-review queues (seed 000 "[수동
// 검증]"; spec persona.md "Evaluation runner and manual review") from a run's
// records: the forbidden-topic sample, off-canon names by character, and the
// mixed-style replies with candidate endings; and it names the decision keys
// and values the screen and the CLI store. It is pure: records, a speech
// profile and a reply lookup in, queues out.
//
// It owns the sampling rule (Sample: sha256("{run id}:{id}"), the SampleSize
// smallest, in run order), the grouping of names and the ending candidates.
// It must not import the store, web, llm or cmd: applying a decision (judging
// again) is evident/runstore's, storing it is store's.
package review
