-- Review threads on documents. doc_key is the document's path key, so that
-- an annotation finds its page whatever the case of the path it was given.
CREATE TABLE reviews (
	id           INTEGER PRIMARY KEY,
	uid          TEXT    NOT NULL UNIQUE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	doc_path     TEXT    NOT NULL,
	doc_key      TEXT NOT NULL,
	status       TEXT    NOT NULL CHECK (status IN ('draft', 'submitted', 'completed')),
	author_id    INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	summary      TEXT    NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
);
CREATE INDEX reviews_doc ON reviews (workspace_id, doc_key, created_at);

CREATE TABLE annotations (
	id           INTEGER PRIMARY KEY,
	uid          TEXT    NOT NULL UNIQUE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	doc_path     TEXT    NOT NULL,
	doc_key      TEXT NOT NULL,
	section      TEXT    NOT NULL DEFAULT '',
	quote_exact  TEXT    NOT NULL DEFAULT '',
	quote_prefix TEXT    NOT NULL DEFAULT '',
	quote_suffix TEXT    NOT NULL DEFAULT '',
	quote_offset INTEGER NOT NULL DEFAULT -1,
	content      TEXT    NOT NULL,
	author_id    INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	author_type  TEXT    NOT NULL CHECK (author_type IN ('human', 'ai')),
	status       TEXT    NOT NULL CHECK (status IN ('draft', 'submitted', 'resolved')),
	parent_id    INTEGER REFERENCES annotations(id) ON DELETE CASCADE,
	review_id    INTEGER REFERENCES reviews(id) ON DELETE SET NULL,
	orphaned     INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
);
CREATE INDEX annotations_doc ON annotations (workspace_id, doc_key, created_at, id);
CREATE INDEX annotations_parent ON annotations (parent_id, created_at, id);
CREATE INDEX annotations_review ON annotations (review_id);
CREATE INDEX annotations_dedup ON annotations (workspace_id, author_id, created_at);
