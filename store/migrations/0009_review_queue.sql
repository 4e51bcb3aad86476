-- 0009: a run's review queues, computed once (issue 13: the review screen
-- must not load a run into memory). One row per (run, queue): body is the
-- queue's JSON as persona/review builds it (runstore.Queues encodes and
-- decodes it; the store only keeps it); records is how many verdict rows of
-- the run it was computed from, so a run that has grown since (a live run)
-- is computed again.
CREATE TABLE review_queue (
    run_id      INTEGER NOT NULL REFERENCES run (id),
    queue       TEXT    NOT NULL CHECK (queue IN ('forbidden', 'offcanon', 'ending')),
    records     INTEGER NOT NULL,
    computed_at TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    PRIMARY KEY (run_id, queue)
) STRICT;
