-- SQLite's search index changed its form in this version; PostgreSQL's did
-- not. The file keeps the two engines' migration numbers in step.
SELECT 1;
