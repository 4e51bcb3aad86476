-- 0005: the read side at platform scale (issue 13): whole-run figures
-- computed once per run, indexes that serve every filter of the screen with
-- keyset pagination (WHERE run_id = ? AND … AND seq > ? ORDER BY seq), and a
-- trigram search index over summary and reply_text (NFC).

-- One row per run whose figures were computed (runstore, at judge time).
-- summary is the JSON of store.RunSummary minus the run id. A run without a
-- row (an older store, a live run that still grows) is counted with SQL.
CREATE TABLE run_summary (
    run_id      INTEGER PRIMARY KEY REFERENCES run (id),
    computed_at TEXT    NOT NULL,
    summary     TEXT    NOT NULL
) STRICT;

-- The prompts of a run on which models disagree (store.PutDisagreements), per
-- scope: '' for the whole run, else one character_id (the page's character
-- filter), numbered pos 0, 1, … in the order the prompts first appear.
CREATE TABLE run_disagree (
    run_id    INTEGER NOT NULL REFERENCES run (id),
    scope     TEXT    NOT NULL,
    pos       INTEGER NOT NULL,
    prompt_id TEXT    NOT NULL,
    PRIMARY KEY (run_id, scope, pos)
) STRICT;

-- Filter indexes: each ends in seq, so one filter (with or without a
-- verdict) reads its rows in run order from the index, and counts per
-- verdict are index-only. The 0001 indexes are superseded.
DROP INDEX verdict_by_character;
DROP INDEX verdict_by_model;
DROP INDEX verdict_by_session;
DROP INDEX verdict_by_verdict;
CREATE INDEX verdict_by_verdict ON verdict (run_id, verdict, seq);
CREATE INDEX verdict_by_character ON verdict (run_id, character_id, verdict, seq, model_id);
CREATE INDEX verdict_by_model ON verdict (run_id, model_id, verdict, seq, character_id);
CREATE INDEX verdict_by_session ON verdict (run_id, session_id, seq, verdict);
CREATE INDEX verdict_by_prompt ON verdict (run_id, prompt_id, model_id, seq);

-- Trigram index of each verdict row's summary and reply_text, NFC-normalised,
-- keyed by verdict's rowid. Contentless and detail=none (about a quarter of
-- the size of detail=full): a match is a candidate that the query checks
-- again on the row's own text (evident_contains).
CREATE VIRTUAL TABLE verdict_fts USING fts5 (
    summary, reply_text, tokenize = 'trigram', content = '', columnsize = 0, detail = none
);

-- How far store.IndexRunText got with a run: its rows with seq < next_seq
-- are in verdict_fts; indexed_at is set when all are (search then uses the
-- index; before, it reads the run's rows).
CREATE TABLE run_search (
    run_id     INTEGER PRIMARY KEY REFERENCES run (id),
    next_seq   INTEGER NOT NULL,
    indexed_at TEXT
) STRICT;
