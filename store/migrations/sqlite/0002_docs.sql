-- Pages, their history, links, attachments and the search index.
-- *_key columns are lower-cased: paths are unique regardless of case (as on
-- macOS and Windows, where the mirror may live) and links resolve that way.
CREATE TABLE pages (
	id           INTEGER PRIMARY KEY,
	uid          TEXT    NOT NULL UNIQUE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	path         TEXT    NOT NULL,
	path_key     TEXT    NOT NULL,
	parent_key   TEXT    NOT NULL, -- the folder's key, '' at the root
	title        TEXT    NOT NULL,
	title_key    TEXT    NOT NULL,
	stem_key     TEXT    NOT NULL, -- file name without .md
	icon         TEXT    NOT NULL DEFAULT '',
	tags         TEXT    NOT NULL DEFAULT '[]', -- JSON array
	access       TEXT    NOT NULL CHECK (access IN ('public', 'private')),
	content      TEXT    NOT NULL,
	headings     TEXT    NOT NULL DEFAULT '', -- heading texts, one per line, for search
	content_hash TEXT    NOT NULL,
	revision     INTEGER NOT NULL,
	title_len    INTEGER NOT NULL DEFAULT 0, -- search tokens per field, for BM25 averages
	tags_len     INTEGER NOT NULL DEFAULT 0,
	headings_len INTEGER NOT NULL DEFAULT 0,
	body_len     INTEGER NOT NULL DEFAULT 0,
	created_by   INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	created_at   INTEGER NOT NULL,
	updated_by   INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	updated_at   INTEGER NOT NULL,
	UNIQUE (workspace_id, path_key)
);
CREATE INDEX pages_parent ON pages (workspace_id, parent_key, path_key);
CREATE INDEX pages_title ON pages (workspace_id, title_key);
CREATE INDEX pages_stem ON pages (workspace_id, stem_key);

-- Folders are implied by paths; this keeps them listable without a scan.
-- pages counts the pages anywhere below; public_pages those that are public,
-- so that a listing without private pages does not show their folders.
CREATE TABLE folders (
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	path_key     TEXT    NOT NULL,
	path         TEXT    NOT NULL,
	parent_key   TEXT    NOT NULL,
	pages        INTEGER NOT NULL,
	public_pages INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (workspace_id, path_key)
);
CREATE INDEX folders_parent ON folders (workspace_id, parent_key, path_key);

CREATE TABLE page_tags (
	page_id      INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	workspace_id INTEGER NOT NULL,
	tag_key      TEXT    NOT NULL,
	PRIMARY KEY (page_id, tag_key)
);
CREATE INDEX page_tags_tag ON page_tags (workspace_id, tag_key);

CREATE TABLE page_revisions (
	page_id      INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	revision     INTEGER NOT NULL,
	path         TEXT    NOT NULL,
	content      TEXT    NOT NULL,
	content_hash TEXT    NOT NULL,
	author       INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (page_id, revision)
);

CREATE TABLE page_links (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL,
	source_id    INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	kind         TEXT    NOT NULL CHECK (kind IN ('wiki', 'markdown')),
	target       TEXT    NOT NULL,
	target_key   TEXT    NOT NULL,
	heading      TEXT    NOT NULL DEFAULT '',
	line         INTEGER NOT NULL
);
CREATE INDEX page_links_target ON page_links (workspace_id, target_key);
CREATE INDEX page_links_source ON page_links (source_id);

CREATE TABLE attachments (
	id           INTEGER PRIMARY KEY,
	uid          TEXT    NOT NULL UNIQUE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	page_id      INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	path         TEXT    NOT NULL,
	path_key     TEXT    NOT NULL,
	name         TEXT    NOT NULL,
	mime_type    TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT    NOT NULL,
	data         BLOB    NOT NULL,
	created_by   INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	created_at   INTEGER NOT NULL,
	UNIQUE (workspace_id, path_key)
);
CREATE INDEX attachments_page ON attachments (page_id);

CREATE TABLE search_stats (
	workspace_id INTEGER PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
	docs         INTEGER NOT NULL DEFAULT 0,
	title_len    INTEGER NOT NULL DEFAULT 0,
	tags_len     INTEGER NOT NULL DEFAULT 0,
	headings_len INTEGER NOT NULL DEFAULT 0,
	body_len     INTEGER NOT NULL DEFAULT 0
);

-- The candidate index: each page's distinct search tokens (rowid = pages.id),
-- and its workspace as "w<id>" so that one MATCH stays inside it. Ranking is
-- done in Go, identically on both engines.
CREATE VIRTUAL TABLE page_fts USING fts5(ws, tokens, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0');
