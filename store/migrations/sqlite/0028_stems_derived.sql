-- A page's stems (the lists that hold its postings) are derived again from
-- its row's texts when it is rewritten or removed, not kept: they were a
-- third of a row, and made rows too big to share a database page. A page in
-- no list has index_epoch -1.
UPDATE pages SET index_epoch = -1 WHERE trashed_at IS NOT NULL;
ALTER TABLE pages DROP COLUMN stems;
