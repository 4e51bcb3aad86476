// Package runstore is the application layer that joins the judge pipeline
// (persona/batch) to the store adapter (store): it imports the three input
// tables as a dataset, judges a stored dataset into a run, re-runs the seed's
// ten automatic checks over a stored run, and applies review decisions by
// judging again. The command line (evident import, evident judge --db) and
// the screen (package web) call it, so both write the store the same way.
//
// Why a package of its own, outside persona/ (issue 12 item 3): these steps
// need both the pipeline and the store, and the store is an adapter that
// imports only domain packages (never persona/batch), while no domain package
// may import the store. So the wiring lives one layer out, next to the
// shells that use it. It may import persona/..., store and nothing of web,
// llm or cmd.
//
// It owns the order of those steps and nothing else. What the review queues
// show is computed by persona/review (pure, shared by screen and CLI). Rows are read and
// rejected only by persona/batch (with persona/ingest), verdicts come only from
// batch.Judge, checks only from batch.Check, and every row is written only by
// store. It must not decide verdicts, parse cells or hold SQL.
//
// # Import and judge in one pass
//
// Import reads the three tables through batch with the same rejects policy as
// evident judge (malformed row, missing column, unknown character_id,
// duplicate turn_id) and stores the accepted rows as one dataset, in bounded
// store transactions that become visible at once: a fatal error, a
// cancelled context or, with Options.Strict, a single rejected row leaves no
// dataset at all (RejectsError lists every reject with its file and line).
//
// JudgeDataset judges a stored dataset with a batch.Run reading straight
// from SQLite (store.Source: pages of rows by primary key), into one run,
// with no copy in a temporary file, with the import's rejects stored on the
// run. Positions are dense (rejected rows are not stored), which keeps
// every turn's relative order and so gives the same records as judging the
// files directly.
//
// Run (evident judge --db, the screen's upload) does both in one pass
// (issue 13: judge once): one batch.Run over the input, with the judge
// built from the loaded cards and lexicon, whose sink stores each accepted
// turn in the dataset (store.Importer) and its record in the run
// (store.Importer.BeginRun) as the records arrive. The dataset commits
// first, then the run (the store refuses the other order), and the run's
// fingerprints are those of the stored tables. It stores exactly what
// Import followed by JudgeDataset stores — turns, records with their
// sidecars, rejects, tally, fingerprints (TestRunJudgesOnce, on the demo,
// on a log with every kind of reject and with a summarizer) — so the run
// is the judgement of what the store holds, and JudgeDataset of the same
// dataset gives it again. When the dataset commits and the run then fails,
// the dataset stays without a run; the run list shows it and it can be
// judged again (JudgeDataset).
//
// # The run's summary (issue 13)
//
// The ten checks run as each record is judged (checks.go): batch hands a
// Summarizer each record with its check context (the turn, its position,
// the first pass's session index), so runstore's checker runs
// persona.Judge.Check there (on a model's rewrite too when a summarizer
// runs) and the sink tallies the outcomes in run order. That is
// batch.Check's report over the stored run (tested equal, failures
// included) without batch.Check's table of every turn in memory, so a
// run's memory does not grow with its size. Schema validation is the one
// sampled part: the first 10,000 records and every 100th after
// (StoredChecks.SchemaChecked says how many); the records come from one
// encoder, and validating all was a quarter of a run's CPU.
//
// After each run it commits, Run and JudgeDataset store the summary: the
// counts per verdict, character and model (SQL GROUP BY), the checks (at
// most MaxStoredFailures failures kept, all counted), the per-model report
// and the models-disagree prompts per scope (the whole run and each
// character), computed from each model's first answer per prompt as the
// store streams them, so memory holds one prompt and the model pairs, not
// the run (store.PutRunSummary), and refresh the planner's statistics
// (store.Analyze), the three reads side by side. The search index is not
// written here: on a file store it is written after the run commits, from
// the stored rows (store.IndexRunText), by the caller — evident judge --db
// and import before they exit, the screen in the background — so the run
// is listed as soon as it is judged (an in-memory store indexes with the
// run's own batches, store.RunWriter). When the summary fails
// after the run committed, the error is returned and the run stays; the
// screen then counts it with SQL and says the summary is missing.
// Summarize computes a missing summary for an older run; it runs the checks
// with Check (batch.Check over the stored run, which holds the dataset's
// turns in memory) because only a judging pass has the check context. Gold
// agreement is not stored: labels change, and the screen joins them by
// index at view time.
//
// # Decisions
//
//   - RunMeta.Endings records the speech profile as an --endings file would:
//     the endings, then each noun exception prefixed with '!'. ProfileOf
//     rebuilds the profile from it, so the checks of a stored run read speech
//     exactly as the run did, custom endings and exceptions included.
//   - Fingerprints are the sha256 of the JSON Lines tables that were judged
//     (chat_turn, character_card, topic_lexicon), not of the uploaded bytes:
//     they describe what the store holds. They are computed as the sources
//     stream (store.Source.Fingerprint); chat_turn's is known after the
//     first pass and set with RunWriter.SetFingerprint before Commit.
//   - No temporary file holds a dataset: the sources stream from SQLite
//     (only the first pass's sorted index spills, see persona/batch).
//
// # Review queues
//
// The seed's manual checks read a stored run; persona/review computes the
// queues. ForbiddenSample
// and the mixed-reply sample of ReviewEndings use Sample: each id is ranked
// by sha256("{run id}:{id}") and the SampleSize (20) smallest are kept, in
// run order — a uniform sample without replacement that needs no random
// generator, does not depend on input order, and is the same every time for
// the same run. OffCanonNames groups off_canon_entities by character and
// name. ReviewEndings reads every reply with the run's profile (ProfileOf):
// a reply is mixed when it has both 존댓말 and 반말 sentences, and a 반말
// reply whose last 어절 ends in no known 반말 final is listed too (unknown
// final); candidate endings come from the last 어절 of the 반말 sentences
// of both and must be of polite shape (persona/review, "Decisions where the
// spec is silent").
//
// The queues are built while the run is stored: the run's sink feeds each
// stored record to a review.Builder (bounded: samples of 20, one group per
// character and name, one entry per candidate ending) keyed by the run's id
// from BeginRun, and keeps the result with StoreQueues once the run commits,
// so even the first review view of a million-turn run reads no run (about 5 %
// more import CPU at 100k turns; computing them on first view took about 17 s
// at 1M). Runs stored without them (older stores, live runs) are built on
// first view by Queues, streaming the run's rows.
//
// Decisions live in the store (store.Decide); their keys and values are this
// package's convention: forbidden turn_id → confirm|reject; offcanon
// OffCanonKey(character_id, name) → add|block; ending → add|skip, and
// review.SeenKey(turn_id) → seen for an unknown final (changes nothing). ApplyCanon
// and ApplyEnding make the card or the profile agree with the active decision
// for one key and, when that changed anything, judge the dataset again into
// a new run: an added name goes into the card's canon_entities
// (store.UpdateCard, so later runs of the dataset keep it, and a blocked or
// undone one is taken out); an accepted ending is the run's endings plus it,
// an undone one the run's endings without it. The new run keeps the run's
// other settings and the import's rejected rows. Every accepted ending
// (active "add") is also used by evident import and evident judge --db:
// ReviewedProfile is the one function that adds them to a profile, for the
// two commands and for ApplyEnding alike, so an ending accepted on one run
// reaches every later judgement of the store (decisions are store-wide).
package runstore
