-- An agent whose session Atrium's own end cut short, after it had read what
-- woke it, is woken again on the task to go on where it left off: an inbox
-- item of its own kind, 'resume', naming the item it had read (resumes).
-- SQLite cannot change a CHECK in place, so the table is built anew
-- (foreign keys are off while migrations run, and checked before they
-- commit: agent_deliveries keeps its rows).
CREATE TABLE inbox_items_new (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	kind         TEXT    NOT NULL CHECK (kind IN ('mention', 'question', 'answer', 'assigned', 'handoff', 'blocked', 'resume')),
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	comment_id   INTEGER REFERENCES task_comments(id) ON DELETE CASCADE,
	actor_id     INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	created_at   INTEGER NOT NULL,
	read_at      INTEGER,
	resumes      INTEGER REFERENCES inbox_items(id) ON DELETE SET NULL
);
INSERT INTO inbox_items_new (id, workspace_id, principal_id, kind, task_id, comment_id, actor_id, created_at, read_at)
	SELECT id, workspace_id, principal_id, kind, task_id, comment_id, actor_id, created_at, read_at FROM inbox_items;
DROP TABLE inbox_items;
ALTER TABLE inbox_items_new RENAME TO inbox_items;
CREATE INDEX inbox_unread ON inbox_items (workspace_id, principal_id, read_at, id);
