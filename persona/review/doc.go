// Package review computes the seed's manual-review queues (seed 000 "[수동
// 검증]"; spec persona.md "Evaluation runner and manual review") from a run's
// records: the forbidden-topic sample, off-canon names by character, and the
// endings queue — the mixed-style replies, the 반말 replies whose last 어절
// ends in no known ending, and the candidate endings both give; and it names
// the decision keys and values the screen and the CLI store. It is pure:
// records, a speech profile and a reply lookup in, queues out. Each queue
// has an accumulator form (ForbiddenQueue, NameQueue, EndingQueue; Builder
// for the three): records are added one at a time in run order and the
// memory kept is bounded by what the queue shows, so a stored run of a
// million turns is read in one pass without being held (issue 13). The
// batch functions are thin wrappers over them.
//
// It owns the sampling rule (Sample: sha256("{run id}:{id}"), the SampleSize
// smallest, in run order), the grouping of names, the ending candidates and
// the known 반말 finals. It must not import the store, web, llm or cmd:
// applying a decision (judging again) is evident/runstore's, storing it is
// store's.
//
// # Decisions where the spec is silent
//
//   - Only endings of polite shape are proposed (PoliteShape): the candidate
//     must end in one of 요 죠 니다 십시오 니까 십쇼 시다 디다 오 소. These are the
//     seed's four endings (seed 000, automatic check 3: 요·죠·니다·십시오), the
//     tails of what profile "extended" adds (ㅂ니까, 십쇼, ㅂ시다, ㅂ디다;
//     package speech) and the 하오체 endings -오 and -소 (하시오, 있소), polite
//     but in neither profile. Without the rule the demo's most frequent
//     candidate was 어 (싫어, 됐어, 맛있어), which would have flipped 45 real
//     반말 replies; fragments such as 름이 (이름이) were proposed too.
//   - A candidate is the last one or two syllables of a 반말-read last 어절,
//     and also that tail with the final of the syllable before it in front,
//     in the profile's ending syntax: 준비되셨습니까 gives ㅂ니까 as well as
//     니까. The coda form changes fewer replies (ㅂ니까 leaves 험하니까 반말, 니까
//     does not), so it ranks first. A form that would not make its own word
//     존댓말 (a noun exception wins: 필요 under extended) is not proposed.
//   - The unknown-final list: a reply read 반말 in every sentence whose last
//     어절 ends in no known 반말 final (PlainFinal) is listed, so that a false
//     반말 with no polite sentence beside it (seed: "확인하셨습니까?") reaches
//     review too, not only mixed replies. Only the reply's last 어절 counts
//     (a 반말 reply often has a noun sentence before its verb). The known
//     finals are a vowel rule and a short list, not a grammar: the -아/-어
//     infinitive leaves a syllable without a final on ㅏ ㅐ ㅑ ㅓ ㅕ ㅘ ㅙ ㅝ (해,
//     봐, 거야, 한다), plus 지 게 네 데 니 고 걸 군 든 렴 and 응; any word ending
//     in 니까 is unknown, because a reason clause, an insistence and the
//     polite -ㅂ니까 question end alike.
//   - An unknown-final item offers the candidates its last 어절 gives
//     (Unknown.Candidates, decided like any candidate: EndingAdd or
//     EndingSkip on the ending) or, when it gives none or none fits, "seen":
//     key SeenKey(turn_id) ("turn:" and the turn_id) with value EndingSeen in
//     the same store queue as the endings. A seen mark changes no profile;
//     it only records that a person read the reply.
//   - The unknown-final list is sampled like the mixed replies (Sample, up
//     to SampleSize, run id as salt), so a large run shows 20 of them and
//     says how many there are.
//   - A candidate lists at most MaxWords (20) of the 어절 that give it,
//     the first ones of the run; Sentences still counts every sentence.
//     The bounded name groups keep NameExamples (3) example turns and
//     counts (Count, ByVerdict) instead of every position.
//   - The accumulators sample with Sample's rule in one pass: the
//     SampleSize smallest (digest, position) pairs are kept, so a repeated
//     id's earlier record ranks first, as in Sample's stable sort.
package review
