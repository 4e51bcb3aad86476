-- 0003: CRYSTAL score runs (issue 16 item 3), saved by `crystal score --db`
-- and the screen's upload. report is the table's JSON as crystal/report
-- writes it (Table.WriteJSON, the Summary); tables is the full Table (every
-- model's per-item scores) and inputs the items and predictions it was
-- scored from, as JSON, so the screen reopens a run without rescoring.
-- crystal_evidence holds one row per model × item (report.Evidence as JSON),
-- seq numbering them in table order (models, then items) for LIMIT/OFFSET.
CREATE TABLE crystal_run (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    profile     TEXT    NOT NULL,
    similarity  TEXT    NOT NULL,
    items       INTEGER NOT NULL,
    models      INTEGER NOT NULL,
    report      TEXT    NOT NULL,
    tables      TEXT    NOT NULL,
    inputs      TEXT    NOT NULL
) STRICT;

CREATE TABLE crystal_evidence (
    run_id  INTEGER NOT NULL REFERENCES crystal_run(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    model   TEXT    NOT NULL,
    item_id TEXT    NOT NULL,
    evidence TEXT   NOT NULL,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, model, item_id)
) STRICT;
