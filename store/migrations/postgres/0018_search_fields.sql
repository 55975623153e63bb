-- Search scores every field a page declares (search/fields.go): besides
-- title, tags, headings and body, its aliases, its summary (description,
-- summary, excerpt) and the rest of its frontmatter's text. Their token
-- counts are kept like the others' (BM25's averages); their texts, a JSON
-- array in field order, for ranking a query of a prefix or a phrase from
-- text. The columns start empty: the docs service's index version was
-- raised with them, so the next start rebuilds every page's entries from its
-- content (pages.EnsureIndex), as it does for any change to what is derived.
ALTER TABLE pages ADD COLUMN aliases_len BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN summary_len BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN meta_len BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN field_texts TEXT NOT NULL DEFAULT '[]';
ALTER TABLE search_stats ADD COLUMN aliases_len BIGINT NOT NULL DEFAULT 0;
ALTER TABLE search_stats ADD COLUMN summary_len BIGINT NOT NULL DEFAULT 0;
ALTER TABLE search_stats ADD COLUMN meta_len BIGINT NOT NULL DEFAULT 0;
