-- Hand-offs: every inbox item for an agent with a launch preset becomes a
-- delivery, written with the item; a dispatcher wakes the agent with it and
-- the agent acknowledges it by reading its inbox or the task.
ALTER TABLE agents ADD COLUMN wake TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN max_sessions INTEGER NOT NULL DEFAULT 0;

-- A session's status from the best source it has (structured events, then
-- output, then the process), and the CLI's own session id for a resume.
ALTER TABLE agent_sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE agent_sessions ADD COLUMN cli_session TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_sessions ADD COLUMN activity_at INTEGER;

CREATE TABLE agent_deliveries (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	inbox_id     INTEGER NOT NULL UNIQUE REFERENCES inbox_items(id) ON DELETE CASCADE,
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	kind         TEXT   NOT NULL,
	-- pending, waking, delivered, acknowledged, failed, cancelled
	state        TEXT   NOT NULL,
	-- The session generation it is for: the agent's open session on the
	-- task when it was made (NULL: the next one), then the one it went into.
	session_id   INTEGER REFERENCES agent_sessions(id) ON DELETE SET NULL,
	channel      TEXT   NOT NULL DEFAULT '',
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_at      INTEGER,
	claimed_by   TEXT   NOT NULL DEFAULT '',
	claim_until  INTEGER,
	reason       TEXT   NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	delivered_at INTEGER,
	acked_at     INTEGER
);
CREATE INDEX agent_deliveries_due ON agent_deliveries (state, next_at);
CREATE INDEX agent_deliveries_agent ON agent_deliveries (workspace_id, principal_id, task_id, id);

CREATE TABLE agent_delivery_log (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	delivery_id INTEGER NOT NULL REFERENCES agent_deliveries(id) ON DELETE CASCADE,
	at          INTEGER NOT NULL,
	state       TEXT   NOT NULL,
	note        TEXT   NOT NULL
);
CREATE INDEX agent_delivery_log_delivery ON agent_delivery_log (delivery_id, id);
