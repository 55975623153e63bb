-- create_annotation's retry check (the same annotation sent twice within
-- 30 s is made once) read every annotation its author had made in those
-- 30 s: at a few hundred creates a second, thousands of rows for each new
-- one, so creates slowed the faster they came (issue 24: 1.8 ms at first,
-- 4.8 ms a few thousand creates later). twin_key, a hash of what was sent
-- (page, section, parent, content), leaves only the annotations that can be
-- twins. Rows made before it have none, and are past the window anyway.
ALTER TABLE annotations ADD COLUMN twin_key BIGINT;
CREATE INDEX annotations_twin ON annotations (workspace_id, author_id, twin_key, created_at);
DROP INDEX annotations_dedup;
