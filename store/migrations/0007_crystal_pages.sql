-- 0007: CRYSTAL runs read page by page (issue 16 item 3). A run saved under
-- this schema (crystal_run.paged = 1) keeps one row per item (crystal_item:
-- the item as JSON, and the lower-cased "id\nquestion\nanswer" the screen's
-- q filter searches) and one per model × item (crystal_score: the
-- crystal.ItemScore and the crystal.Reply as JSON, with the outcome flags and
-- Match F1 the index filters and shows), so the screen reads the rows of one
-- page (keyset on pos) instead of the whole table; crystal_run.tables then
-- holds the table without its per-item scores and inputs is empty. The
-- images uploaded with a run are kept in crystal_image by base name.
-- Runs saved before (paged = 0) keep their whole table and inputs.
ALTER TABLE crystal_run ADD COLUMN paged INTEGER NOT NULL DEFAULT 0;

CREATE TABLE crystal_item (
    run_id  INTEGER NOT NULL REFERENCES crystal_run(id) ON DELETE CASCADE,
    pos     INTEGER NOT NULL,
    item_id TEXT    NOT NULL,
    search  TEXT    NOT NULL,
    item    TEXT    NOT NULL,
    PRIMARY KEY (run_id, pos),
    UNIQUE (run_id, item_id)
) STRICT;

-- outcome bits: 1 no prediction, 2 answer correct, 4 unparseable reply,
-- 8 some step unmatched (never with 1).
CREATE TABLE crystal_score (
    run_id    INTEGER NOT NULL REFERENCES crystal_run(id) ON DELETE CASCADE,
    pos       INTEGER NOT NULL,
    model_pos INTEGER NOT NULL,
    outcome   INTEGER NOT NULL,
    f1        REAL    NOT NULL,
    rule      TEXT    NOT NULL,
    score     TEXT    NOT NULL,
    reply     TEXT    NOT NULL,
    PRIMARY KEY (run_id, pos, model_pos)
) STRICT;

CREATE TABLE crystal_image (
    run_id       INTEGER NOT NULL REFERENCES crystal_run(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    sha256       TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    data         BLOB    NOT NULL,
    PRIMARY KEY (run_id, name)
) STRICT;
