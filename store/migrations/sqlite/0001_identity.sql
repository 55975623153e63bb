-- Identity and the event log. Times are microseconds since the Unix epoch, UTC,
-- the same on both engines.
CREATE TABLE workspaces (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

CREATE TABLE principals (
	id           INTEGER PRIMARY KEY,
	handle       TEXT    NOT NULL UNIQUE,
	kind         TEXT    NOT NULL CHECK (kind IN ('human', 'agent')),
	display_name TEXT    NOT NULL,
	created_at   INTEGER NOT NULL
);

CREATE TABLE memberships (
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	role         TEXT    NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (workspace_id, principal_id)
);

CREATE TABLE tokens (
	id           INTEGER PRIMARY KEY,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	workspace_id INTEGER REFERENCES workspaces(id) ON DELETE CASCADE,
	name         TEXT    NOT NULL,
	hash         TEXT    NOT NULL UNIQUE,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER,
	revoked_at   INTEGER
);
CREATE INDEX tokens_principal ON tokens (principal_id);

-- workspace_id is NULL for changes that belong to no workspace (a new principal).
CREATE TABLE events (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace_id INTEGER REFERENCES workspaces(id) ON DELETE CASCADE,
	actor_id     INTEGER,
	kind         TEXT    NOT NULL,
	subject      TEXT    NOT NULL,
	payload      TEXT,
	created_at   INTEGER NOT NULL
);
CREATE INDEX events_workspace ON events (workspace_id, id);

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
