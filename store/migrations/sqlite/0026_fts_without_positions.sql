-- The full-text index only ever answers which pages hold a token (search
-- verifies phrases and ranks in Go, from the page or the postings), so it
-- keeps no positions any more (detail=none): a third of its size at 10k
-- pages, and less for every write to do. Its tokens are carried over from
-- the index as it was, read through fts5vocab, so no rebuild from the pages
-- is needed. The pages freed are reused by later writes.
CREATE VIRTUAL TABLE temp.page_fts_terms USING fts5vocab(main, 'page_fts', 'instance');
CREATE VIRTUAL TABLE page_fts_slim USING fts5(tokens, content='', contentless_delete=1, detail=none, tokenize="unicode61 remove_diacritics 0 tokenchars '_'");
INSERT INTO page_fts_slim (rowid, tokens) SELECT doc, group_concat(term, ' ') FROM temp.page_fts_terms GROUP BY doc;
DROP TABLE temp.page_fts_terms;
DROP TABLE page_fts;
ALTER TABLE page_fts_slim RENAME TO page_fts;
INSERT INTO page_fts (page_fts) VALUES ('optimize');
