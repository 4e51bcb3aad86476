-- 0006: live judging (issue 17). Turns sent one at a time (POST /api/v1/turns,
-- the Kafka consumer's HTTP twin) are judged against their session's state and
-- stored here; each dataset's live turns also grow one run (live_run) whose
-- verdict rows the screen shows like any run's.

-- One session's live state (persona/live.State as JSON): what the recall rule
-- needs to know about the session's judged turns. Written in the same
-- transaction as the turns that changed it.
CREATE TABLE live_session (
    session_id TEXT    PRIMARY KEY,
    state      TEXT    NOT NULL,
    turns      INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT    NOT NULL
) STRICT;

-- One judged live turn. turn_id is unique across the live API: a re-send of
-- the same row (same digest) gets the stored record back; a different row
-- with the same turn_id is refused.
CREATE TABLE live_turn (
    turn_id    TEXT    PRIMARY KEY,
    session_id TEXT    NOT NULL,
    dataset_id INTEGER NOT NULL REFERENCES dataset (id),
    run_id     INTEGER NOT NULL REFERENCES run (id),
    seq        INTEGER NOT NULL, -- its verdict row (run_id, seq), which holds the record
    digest     TEXT    NOT NULL, -- persona/live.Digest of the row
    arrived_at TEXT    NOT NULL
) STRICT;
CREATE INDEX live_turn_by_session ON live_turn (session_id);

-- The growing run of each dataset's live turns: one per dataset, created with
-- the first live turn judged against it.
CREATE TABLE live_run (
    dataset_id INTEGER PRIMARY KEY REFERENCES dataset (id),
    run_id     INTEGER NOT NULL UNIQUE REFERENCES run (id)
) STRICT;
