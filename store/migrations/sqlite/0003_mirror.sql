-- What the folder mirror last synced for each file: the base that tells an
-- edit in the folder from an edit in the store. Keyed by the folder, so that
-- pointing the mirror at a new folder starts afresh instead of reading every
-- missing file as a deletion.
CREATE TABLE mirror_state (
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	dir          TEXT NOT NULL,
	path_key     TEXT NOT NULL,
	path         TEXT NOT NULL,
	hash         TEXT NOT NULL,
	revision     INTEGER NOT NULL, -- 0 for attachments
	PRIMARY KEY (workspace_id, dir, path_key)
);
