-- 0001: the first schema of the evident store (see package store's doc).
-- Times are TEXT in UTC, "2006-01-02T15:04:05.000000000Z" (fixed width, so
-- they sort as text). Lists are JSON arrays in TEXT columns.

-- One import of the three input tables. The row is written in the same
-- transaction as its rows, so a dataset is either whole or absent.
CREATE TABLE dataset (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    imported_at TEXT    NOT NULL,
    n_turns     INTEGER NOT NULL DEFAULT 0,
    n_cards     INTEGER NOT NULL DEFAULT 0,
    n_lexicon   INTEGER NOT NULL DEFAULT 0
) STRICT;

-- chat_turn rows in input order (seq, 0-based).
CREATE TABLE chat_turn (
    dataset_id        INTEGER NOT NULL REFERENCES dataset (id),
    seq               INTEGER NOT NULL,
    turn_id           TEXT    NOT NULL,
    session_id        TEXT    NOT NULL,
    character_id      TEXT    NOT NULL,
    model_id          TEXT    NOT NULL,
    user_message      TEXT,
    reply_text        TEXT,
    first_person      TEXT,
    named_entities    TEXT, -- JSON array; NULL = the server's extraction failed
    honorific_level   TEXT,
    user_asked_recall INTEGER NOT NULL CHECK (user_asked_recall IN (0, 1)),
    created_at        TEXT    NOT NULL DEFAULT '',
    prompt_id         TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (dataset_id, seq),
    UNIQUE (dataset_id, turn_id)
) STRICT;

-- character_card rows in input order; updated_at is set by UpdateCard.
CREATE TABLE character_card (
    dataset_id       INTEGER NOT NULL REFERENCES dataset (id),
    seq              INTEGER NOT NULL,
    character_id     TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    honorific_rule   TEXT    NOT NULL,
    first_person     TEXT    NOT NULL,
    canon_entities   TEXT    NOT NULL DEFAULT '[]',
    forbidden_topics TEXT    NOT NULL DEFAULT '[]',
    entity_roles     TEXT    NOT NULL DEFAULT '[]',
    description      TEXT    NOT NULL DEFAULT '',
    public           INTEGER NOT NULL DEFAULT 0 CHECK (public IN (0, 1)),
    updated_at       TEXT,
    PRIMARY KEY (dataset_id, seq),
    UNIQUE (dataset_id, character_id)
) STRICT;

-- topic_lexicon rows; seq is the row order the forbidden-topic rule relies on.
CREATE TABLE topic_lexicon (
    dataset_id INTEGER NOT NULL REFERENCES dataset (id),
    seq        INTEGER NOT NULL,
    term       TEXT    NOT NULL,
    topic      TEXT    NOT NULL,
    PRIMARY KEY (dataset_id, seq)
) STRICT;

-- One judge run. Inserted in the same transaction as its verdict rows;
-- finished_at and the tally are set by RunWriter.Commit in that transaction.
CREATE TABLE run (
    id             INTEGER PRIMARY KEY,
    dataset_id     INTEGER REFERENCES dataset (id), -- NULL: judged from files
    started_at     TEXT    NOT NULL,
    finished_at    TEXT,
    profile        TEXT    NOT NULL,
    endings        TEXT    NOT NULL DEFAULT '[]', -- JSON array
    fingerprints   TEXT    NOT NULL DEFAULT '{}', -- JSON object table -> sha256
    prompt_version TEXT    NOT NULL DEFAULT '',
    judged         INTEGER NOT NULL DEFAULT 0,
    rejected       INTEGER NOT NULL DEFAULT 0,
    by_verdict     TEXT    NOT NULL DEFAULT '{}' -- JSON object verdict -> count
) STRICT;

-- One verdict record per judged turn: the record's JSON plus copies of the
-- columns the screen filters on. seq is the record's position in the run.
CREATE TABLE verdict (
    run_id              INTEGER NOT NULL REFERENCES run (id),
    seq                 INTEGER NOT NULL,
    turn_id             TEXT    NOT NULL,
    session_id          TEXT    NOT NULL,
    character_id        TEXT    NOT NULL,
    model_id            TEXT    NOT NULL,
    prompt_id           TEXT    NOT NULL DEFAULT '',
    verdict             TEXT    NOT NULL CHECK (verdict IN (
        '금지 소재 접촉', '세계관 밖 고유명사', '말투 어긋남', '앞 회차를 기억 못 함', '설정대로 말함')),
    summary             TEXT    NOT NULL,
    reply_text          TEXT,
    record              TEXT    NOT NULL, -- the persona.Record as JSON
    summary_source      TEXT CHECK (summary_source IN ('rule', 'model')),
    summary_rejected_by TEXT,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, turn_id)
) STRICT;
CREATE INDEX verdict_by_character ON verdict (run_id, character_id);
CREATE INDEX verdict_by_model ON verdict (run_id, model_id);
CREATE INDEX verdict_by_session ON verdict (run_id, session_id);
CREATE INDEX verdict_by_verdict ON verdict (run_id, verdict);

-- Rows a run could not judge (batch.Reject), in the order they were reported.
CREATE TABLE run_reject (
    run_id  INTEGER NOT NULL REFERENCES run (id),
    seq     INTEGER NOT NULL,
    file    TEXT    NOT NULL,
    line    INTEGER NOT NULL,
    turn_id TEXT,
    reason  TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT;

-- Hand labels, one per turn_id; PutGold replaces a label.
CREATE TABLE gold (
    turn_id     TEXT PRIMARY KEY,
    verdict     TEXT NOT NULL CHECK (verdict IN (
        '금지 소재 접촉', '세계관 밖 고유명사', '말투 어긋남', '앞 회차를 기억 못 함', '설정대로 말함')),
    note        TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL DEFAULT '',
    labelled_at TEXT NOT NULL
) STRICT;

-- Review decisions. Never deleted: Undo sets undone_at/undone_by. The active
-- decision for (queue, key) is the latest one not undone.
CREATE TABLE decision (
    id         INTEGER PRIMARY KEY,
    queue      TEXT NOT NULL CHECK (queue IN ('forbidden', 'offcanon', 'ending')),
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    who        TEXT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    decided_at TEXT NOT NULL,
    undone_at  TEXT,
    undone_by  TEXT
) STRICT;
CREATE INDEX decision_by_key ON decision (queue, key, id);
