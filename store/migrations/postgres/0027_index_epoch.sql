-- pages.stems names the lists that hold a page's postings. A rebuild of the
-- index empties every list at once (ClearPostings) and moves the index to a
-- new epoch (meta 'search.epoch'); a page's stems name lists only while its
-- index_epoch is the current one. A page written during a rebuild, before
-- the rebuild reached it, then takes nothing out of lists that never held
-- it, and a rebuild that goes on over such a page knows it is in its lists.
ALTER TABLE pages ADD COLUMN index_epoch BIGINT NOT NULL DEFAULT 0;
