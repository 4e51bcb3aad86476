// Package runstore joins the judge pipeline to the store: it imports the three
// input tables as a dataset, judges a stored dataset into a run, and re-runs
// the seed's ten automatic checks over a stored run. The command line
// (evident import, evident judge --db) and the screen (package web) call it,
// so both write the store the same way.
//
// It owns the order of those steps and nothing else. Rows are read and
// rejected only by persona/batch (with persona/ingest), verdicts come only from
// batch.Judge, checks only from batch.Check, and every row is written only by
// store. It must not decide verdicts, parse cells or hold SQL.
//
// # Import, then judge the import
//
// Import reads the three tables through batch with the same rejects policy as
// evident judge (malformed row, missing column, unknown character_id,
// duplicate turn_id) and stores the accepted rows as one dataset, in one store
// transaction: a fatal error, a cancelled context or, with Options.Strict,
// a single rejected row leaves no dataset at all (RejectsError lists every
// reject with its file and line).
//
// JudgeDataset then writes the stored dataset's tables to temporary JSON Lines
// files and judges them with batch.Judge into one run (one more transaction),
// with the import's rejects stored on the run. The run is therefore exactly
// the judgement of what the store holds, and the screen can re-check it from
// the store alone. Positions are dense (rejected rows are not stored), which
// keeps every turn's relative order and so gives the same records as judging
// the files directly.
//
// Two transactions, not one: the store opens one write transaction per import
// and per run. When the import commits and judging then fails (I/O, a
// cancelled context), the dataset stays without a run; the run list shows it
// and it can be judged again (JudgeDataset).
//
// # Decisions
//
//   - RunMeta.Endings records the speech profile as an --endings file would:
//     the endings, then each noun exception prefixed with '!'. ProfileOf
//     rebuilds the profile from it, so the checks of a stored run read speech
//     exactly as the run did, custom endings and exceptions included.
//   - Fingerprints are the sha256 of the JSON Lines tables that were judged
//     (chat_turn, character_card, topic_lexicon), not of the uploaded bytes:
//     they describe what the store holds.
//   - Temporary files go to os.TempDir and are removed before returning.
package runstore
