-- A page's current text was stored twice: in pages and in its newest
-- revision (issue 24: the store was 5.7× the vault, a whole vault of it
-- this copy). The newest revision's row now keeps its text empty, and
-- readers take it from pages; when a page gets a new revision, the text
-- it replaces moves into the old revision's row in the same transaction.
UPDATE page_revisions SET content = ''
	WHERE revision = (SELECT p.revision FROM pages p WHERE p.id = page_revisions.page_id);
