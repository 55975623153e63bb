-- The postings index: for each stem of a workspace, what each page holding
-- it holds of it (fields, counts, lengths, positions), in rows of consecutive
-- pages named by their first (see store/postings.go). Questions of common
-- words rank from it without reading pages. pages.stems records the stems a
-- page is in, so that a rewrite or removal knows which lists to take it out
-- of. The index starts empty; dropping the stored index version makes the
-- docs service rebuild it from the pages at the next start. A rowid table:
-- rows of a few KB would spill into overflow pages of a WITHOUT ROWID one
-- (its rows keep ~1 KB in the tree) and leave them half empty.
CREATE TABLE search_postings (
    workspace_id INTEGER NOT NULL,
    stem TEXT NOT NULL,
    first_page INTEGER NOT NULL,
    last_page INTEGER NOT NULL,
    pages INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (workspace_id, stem, first_page)
);
-- Pages written since the lists last took them in: each with the stems
-- whose lists still hold its older postings (base_stems) and its postings
-- now (empty: none). Searches read them beside the lists; once there are a
-- few dozen, a write folds them into the lists at once.
CREATE TABLE search_pending (
    workspace_id INTEGER NOT NULL,
    page_id INTEGER NOT NULL,
    base_stems TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (workspace_id, page_id)
);
ALTER TABLE pages ADD COLUMN stems TEXT NOT NULL DEFAULT '';
DELETE FROM meta WHERE key = 'docs.index_version';
