-- A desk's progress log (001): dated items of finished work, until the day is
-- archived. A desk's todos are tasks of kind 'todo'; its draft and plan are pages.
CREATE TABLE progress_items (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	description  TEXT    NOT NULL,
	done_at      INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	archived_at  INTEGER
);
CREATE INDEX progress_desk ON progress_items (workspace_id, principal_id, archived_at, done_at);
