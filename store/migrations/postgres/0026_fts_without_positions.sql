-- SQLite's 0026 drops the positions from its full-text index. PostgreSQL's
-- (pages.tsv, array_to_tsvector) never had any: nothing to do here but keep
-- the two engines' migration numbers in step.
SELECT 1;
