-- Hybrid search (issue 25, item 4): with an embeddings endpoint configured,
-- pages are embedded by section in the background. page_embeddings says
-- which revision of a page, by which model, its vectors are of: a page whose
-- revision or model differs (or that has no row) is the worker's to do, so
-- an edit, a move or a restore reaches the vectors without any write
-- waiting for the endpoint, and a restart resumes where it stopped. A page
-- the endpoint refused waits (next_at) longer after each failure; its
-- revision is then 0, which no page has. Deleting a page deletes both.
CREATE TABLE page_embeddings (
	page_id      BIGINT PRIMARY KEY REFERENCES pages(id) ON DELETE CASCADE,
	workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	revision     BIGINT NOT NULL,
	model        TEXT    NOT NULL,
	failures     INTEGER NOT NULL DEFAULT 0,
	next_at      BIGINT NOT NULL DEFAULT 0,
	updated_at   BIGINT NOT NULL
);

-- One vector per section (the page's title, the section's heading path and
-- its text), int8-quantised: vec holds round(x/scale) of each dimension,
-- scale = max|x|/127, four times smaller than float32 at a cosine error
-- far below what separates neighbours. line is the section's first line in
-- the body, for the hit's match line.
CREATE TABLE page_vectors (
	page_id      BIGINT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	section      INTEGER NOT NULL,
	workspace_id BIGINT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	heading      TEXT    NOT NULL,
	line         INTEGER NOT NULL,
	scale        DOUBLE PRECISION NOT NULL,
	vec          BYTEA   NOT NULL,
	PRIMARY KEY (page_id, section)
);
CREATE INDEX page_vectors_workspace ON page_vectors (workspace_id, page_id);

-- Raised by every write of a workspace's vectors: what a search's cache of
-- them is valid for.
CREATE TABLE vector_stats (
	workspace_id BIGINT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
	generation   BIGINT NOT NULL DEFAULT 0
);

-- pgvector is not used: vectors are few per workspace (a section each) and
-- ranked in Go from a cache, the same on both engines. An HNSW index there
-- would pay off past a few hundred thousand sections per workspace.
