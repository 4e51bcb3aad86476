-- 0004: imports and runs written in bounded transactions (issue 13 item 2).
-- An Importer or RunWriter now commits its rows a batch at a time, so other
-- writers (review decisions, gold) get the write lock between batches. The
-- dataset row is committed first, with complete = 0, and set to 1 in the
-- transaction of the last batch; every reader shows only complete datasets
-- (a run was already hidden until finished_at is set). Datasets from before
-- this migration were written whole in one transaction: they are complete.
ALTER TABLE dataset ADD COLUMN complete INTEGER NOT NULL DEFAULT 1 CHECK (complete IN (0, 1));
CREATE INDEX dataset_incomplete ON dataset (id) WHERE complete = 0;
CREATE INDEX run_unfinished ON run (id) WHERE finished_at IS NULL;
