-- One full-text index: phrases and prefixes are answered from the postings
-- lists, as words are, and the FTS5 table goes. A prefix matches tokens as
-- written while the lists are by stem, so search_words keeps each token
-- whose stem is another word (most tokens are their own stem), for a prefix
-- to find the lists of the words it begins, and to know which of those
-- lists hold only pages with such a word. Words are filled as pages are
-- indexed: the index starts over (a rebuild, as in ClearPostings).
CREATE TABLE search_words (
    workspace_id INTEGER NOT NULL,
    word TEXT NOT NULL,
    stem TEXT NOT NULL,
    PRIMARY KEY (workspace_id, word)
) WITHOUT ROWID;
CREATE INDEX search_words_stem ON search_words (workspace_id, stem);
DROP TABLE page_fts;
DELETE FROM search_postings;
DELETE FROM search_pending;
INSERT INTO meta (key, value) VALUES ('search.epoch', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT);
DELETE FROM meta WHERE key = 'docs.index_version';
