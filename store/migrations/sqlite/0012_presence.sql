-- Who is connected (atrium://sessions): one row per MCP session, refreshed
-- while it makes requests. A process killed without a goodbye leaves its row,
-- which readers skip once it has not been seen for a while.
CREATE TABLE presence (
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	session_key  TEXT    NOT NULL,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	transport    TEXT    NOT NULL,
	client       TEXT    NOT NULL DEFAULT '',
	started_at   INTEGER NOT NULL,
	seen_at      INTEGER NOT NULL,
	PRIMARY KEY (workspace_id, session_key)
);
CREATE INDEX presence_seen ON presence (workspace_id, seen_at);
