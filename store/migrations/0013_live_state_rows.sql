-- 0013: a live session's state as rows, updated by what each turn adds
-- (persona/live "Bounded by construction"; store/live.go). Before, the
-- state was one JSON value per session in which every mention carried its
-- turn's reply_text, rewritten whole on every request: a row naming 2,000
-- entities with a 198 KB reply made a 396 MB value, and every later turn
-- of the session re-encoded and rewrote it.

-- One turn a mention refers to, once per session however many mentions do:
-- what the recall evidence cites. Deleted when no mention refers to it.
CREATE TABLE live_cited (
    session_id TEXT    NOT NULL,
    seq        INTEGER NOT NULL, -- its arrival position in the session
    turn_id    TEXT    NOT NULL,
    reply_text TEXT,
    created_at TEXT    NOT NULL DEFAULT '', -- '' for an untimed turn
    PRIMARY KEY (session_id, seq)
) STRICT;

-- One entity a session named: the seqs of its first mention by arrival and
-- of its earliest by (created_at, arrival), each a live_cited row.
CREATE TABLE live_mention (
    session_id TEXT    NOT NULL,
    entity     TEXT    NOT NULL,
    by_arrival INTEGER NOT NULL,
    by_time    INTEGER NOT NULL,
    PRIMARY KEY (session_id, entity)
) STRICT, WITHOUT ROWID;

-- The earlier JSON's mentions, each turn once (its copies are equal).
INSERT OR IGNORE INTO live_cited (session_id, seq, turn_id, reply_text, created_at)
SELECT s.session_id, json_extract(m.value, '$.' || r.k || '.seq'), json_extract(m.value, '$.' || r.k || '.turn_id'),
       json_extract(m.value, '$.' || r.k || '.reply_text'), coalesce(json_extract(m.value, '$.' || r.k || '.created_at'), '')
FROM live_session s, json_each(s.state, '$.mentions') m, (SELECT 'by_arrival' AS k UNION ALL SELECT 'by_time') r
WHERE m.type = 'object';

INSERT INTO live_mention (session_id, entity, by_arrival, by_time)
SELECT s.session_id, m.key, json_extract(m.value, '$.by_arrival.seq'), json_extract(m.value, '$.by_time.seq')
FROM live_session s, json_each(s.state, '$.mentions') m
WHERE m.type = 'object';

-- The header: what every turn changes.
CREATE TABLE live_session_header (
    session_id        TEXT    PRIMARY KEY,
    turns             INTEGER NOT NULL, -- judged turns; only grows
    untimed           INTEGER NOT NULL DEFAULT 0 CHECK (untimed IN (0, 1)),
    latest_turn_id    TEXT,             -- the turn with the latest created_at; NULL while none
    latest_created_at TEXT,
    updated_at        TEXT    NOT NULL
) STRICT;

INSERT INTO live_session_header (session_id, turns, untimed, latest_turn_id, latest_created_at, updated_at)
SELECT session_id, coalesce(json_extract(state, '$.turns'), turns), CASE WHEN json_extract(state, '$.untimed') THEN 1 ELSE 0 END,
       json_extract(state, '$.latest.turn_id'), json_extract(state, '$.latest.created_at'), updated_at
FROM live_session;

DROP TABLE live_session;
ALTER TABLE live_session_header RENAME TO live_session;
