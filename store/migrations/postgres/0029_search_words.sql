-- One full-text index: phrases and prefixes are answered from the postings
-- lists, as words are, and the tsvector column and its GIN index go. A
-- prefix matches tokens as written while the lists are by stem, so
-- search_words keeps each token whose stem is another word (most tokens are
-- their own stem), for a prefix to find the lists of the words it begins, and to know which
-- of those lists hold only pages with such a word.
-- A prefix reads stems and words as a range, in byte order whatever the
-- database's collation. Words are filled as pages are indexed: the index
-- starts over (a rebuild, as in ClearPostings).
CREATE TABLE search_words (
    workspace_id BIGINT NOT NULL,
    word TEXT COLLATE "C" NOT NULL,
    stem TEXT NOT NULL,
    PRIMARY KEY (workspace_id, word)
);
CREATE INDEX search_words_stem ON search_words (workspace_id, stem);
DROP INDEX pages_tsv;
ALTER TABLE pages DROP COLUMN tsv;
DELETE FROM search_postings;
DELETE FROM search_pending;
ALTER TABLE search_postings ALTER COLUMN stem TYPE TEXT COLLATE "C";
INSERT INTO meta (key, value) VALUES ('search.epoch', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT);
DELETE FROM meta WHERE key = 'docs.index_version';
