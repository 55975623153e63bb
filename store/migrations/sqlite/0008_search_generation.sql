-- Each change to a workspace's search index raises its generation, so that
-- document frequencies, costly to count for common words, can be kept
-- between searches and trusted while the generation is the same.
ALTER TABLE search_stats ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
