-- Agents: principals of kind agent with a launch preset; sessions run one
-- agent for one task (or none) inside a server replica.
CREATE TABLE agents (
	workspace_id      INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	principal_id      INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	preset            TEXT   NOT NULL,
	command           TEXT   NOT NULL,
	args              TEXT   NOT NULL,
	env               TEXT   NOT NULL,
	instructions_file TEXT   NOT NULL,
	prompt_mode       TEXT   NOT NULL,
	resume            TEXT   NOT NULL,
	repo              TEXT   NOT NULL,
	created_at        INTEGER NOT NULL,
	updated_at        INTEGER NOT NULL,
	PRIMARY KEY (workspace_id, principal_id)
);

CREATE TABLE agent_sessions (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	uid          TEXT   NOT NULL UNIQUE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	task_id      INTEGER REFERENCES tasks(id) ON DELETE SET NULL,
	state        TEXT   NOT NULL,
	exit_code    INTEGER,
	reason       TEXT   NOT NULL,
	dir          TEXT   NOT NULL,
	branch       TEXT   NOT NULL,
	base         TEXT   NOT NULL,
	replica      TEXT   NOT NULL,
	token_id     INTEGER,
	started_by   INTEGER,
	started_at   INTEGER NOT NULL,
	ended_at     INTEGER
);
CREATE INDEX agent_sessions_workspace ON agent_sessions (workspace_id, id);
