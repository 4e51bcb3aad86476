-- 0011: the search index of the runs a file store writes lives in a second
-- file beside it, PATH-search (store/side.go): its own writer indexes a run
-- on the other core while the run's rows are written (issue 13: import +
-- judge of a million turns). Runs indexed before stay in verdict_fts here.

-- Where a run's index lives: 'main' (verdict_fts of this file) or 'side'
-- (verdict_fts of the sidecar).
ALTER TABLE run_search ADD COLUMN place TEXT NOT NULL DEFAULT 'main' CHECK (place IN ('main', 'side'));

-- The token naming this store's sidecar; the sidecar keeps the same one
-- (side_meta). A sidecar with another token is not this store's.
CREATE TABLE search_side (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    token TEXT    NOT NULL
) STRICT;
