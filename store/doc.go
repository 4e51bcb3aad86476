// Package store keeps evident's data in one SQLite database, through the pure
// Go driver modernc.org/sqlite ("sqlite"), so the binary needs no C compiler.
// The file is the --db flag; DefaultPath gives the default under the user's
// data directory, and ":memory:" opens a private in-memory database for tests
// and demos.
//
// It owns the schema, its versioned migrations and every transaction:
//
//   - imported tables: a dataset is one import of the three input tables
//     (chat_turn, character_card, topic_lexicon), written all or nothing
//     (ImportDataset, ImportStream, Importer); cards can later be updated
//     (UpdateCard, the review queue's "add to canon");
//
//   - judge runs: id, time, speech profile and endings, input fingerprints,
//     prompt version, tally (BeginRun, RunWriter, Runs, Run, LatestRun);
//
//   - verdict records: each persona.Record as its JSON plus denormalised
//     columns for filtering (Records, Entries, CountByVerdict, Facets), and a
//     per-record sidecar saying who wrote the summary (SummarySource);
//
//   - rejected rows of a run (RunWriter.Reject, Rejects);
//
//   - gold labels (PutGold, Gold) and review decisions with who and when,
//     undoable and exportable (Decide, Undo, Decisions, ExportDecisions).
//
//   - a content-addressed cache of model answers (CacheGet, CachePut;
//     migration 0002), so a re-run with the same prompt and inputs sends
//     nothing; the caller computes the key. SummaryCache is that table as
//     the summarizer's cache (persona/summarize.Cache and BatchCache, over
//     persona.CachedAnswer), so the summarizer needs no store import.
//
//   - stored tables and a run's records as ingest.Sources (DatasetTable,
//     RunWriter.Turns, RunRecords; source.go), read a page at a time, so the
//     judge streams a stored dataset from SQLite with no temporary copy.
//
// It is an adapter (issue 12): it imports only domain packages (persona,
// persona/ingest) and implements the interfaces they declare. It must not
// import the pipeline (persona/batch, persona/summarize, persona/evalrun),
// runstore, web, llm or cmd (arch_test.go holds it to that); it must not
// judge, parse input files, run pipelines, serve HTTP or decide what a
// review decision means for the rules: it stores values and gives them back.
//
// # Migrations
//
// The schema lives in migrations/NNNN_name.sql, embedded in the binary and
// applied in order by Open, each in its own transaction together with its row
// in schema_migrations(version, name, applied_at). Re-opening an up-to-date
// database applies nothing. A database whose schema_migrations names a
// version this build does not know is refused with ErrSchemaTooNew rather
// than read with the wrong schema. Migrations are append-only: never edit a
// released file, add the next number.
//
// # Transactions and safety
//
// A file database runs in WAL mode with foreign keys on, a busy timeout
// (BusyTimeout) and synchronous=NORMAL (a killed process loses nothing that
// was committed; a power cut may lose the last commits, never consistency).
// Every write transaction starts with BEGIN IMMEDIATE, so two writers queue
// on the busy timeout instead of failing half way.
//
// An import and a judge run are each one transaction: the dataset or run row
// is inserted in the same transaction as its rows, so until Commit no reader
// sees any of it, and a process killed mid-way leaves nothing behind (SQLite
// discards the uncommitted WAL frames on the next open). In WAL mode readers
// keep reading the last committed state while that transaction writes. The
// price of one transaction is that other writers (a review decision, gold
// labels) wait for it, up to BusyTimeout, and then fail with SQLITE_BUSY.
//
// An in-memory database (":memory:") uses SQLite's memdb VFS under a name
// private to the DB, shared by all its connections, and lives until Close.
// It has no WAL: a reader that runs while an import or run is being written
// waits for the commit (up to BusyTimeout) instead of reading the old state.
// Use a file when readers and a writer overlap.
//
// A DB is safe for concurrent use; an Importer or RunWriter is not (one
// goroutine writes it).
package store
