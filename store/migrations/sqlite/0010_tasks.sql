-- Tasks: work items people and agents hand to each other (002), and the
-- desk's todos (001), which are tasks of kind 'todo' so they show on the board.
-- A task's number is per workspace, allocated from task_counters so that a
-- number is never given twice, even after the newest task is archived.
CREATE TABLE task_counters (
	workspace_id INTEGER PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
	last         INTEGER NOT NULL
);

CREATE TABLE tasks (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	number       INTEGER NOT NULL,
	kind         TEXT    NOT NULL CHECK (kind IN ('task', 'todo')),
	title        TEXT    NOT NULL,
	body         TEXT    NOT NULL DEFAULT '',
	status       TEXT    NOT NULL CHECK (status IN ('open', 'in_progress', 'blocked', 'done', 'archived')),
	status_text  TEXT    NOT NULL DEFAULT '',
	progress     INTEGER NOT NULL DEFAULT 0,
	phase        TEXT    NOT NULL DEFAULT '',
	labels       TEXT    NOT NULL DEFAULT '[]', -- JSON array, in the order given; task_labels indexes it
	specs        TEXT    NOT NULL DEFAULT '[]', -- JSON array of page paths
	plans        TEXT    NOT NULL DEFAULT '[]',
	assignee_id  INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	creator_id   INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	revision     INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	UNIQUE (workspace_id, number)
);
CREATE INDEX tasks_status ON tasks (workspace_id, status, number);
CREATE INDEX tasks_assignee ON tasks (workspace_id, assignee_id, status);
-- A desk: its owner's todos, newest first.
CREATE INDEX tasks_desk ON tasks (workspace_id, kind, assignee_id, number);

CREATE TABLE task_labels (
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	workspace_id INTEGER NOT NULL,
	label        TEXT    NOT NULL,
	PRIMARY KEY (task_id, label)
);
CREATE INDEX task_labels_label ON task_labels (workspace_id, label, task_id);

-- blocked_by: task_id cannot start before blocker_id is done.
CREATE TABLE task_deps (
	task_id    INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	blocker_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	PRIMARY KEY (task_id, blocker_id)
);
CREATE INDEX task_deps_blocker ON task_deps (blocker_id);

CREATE TABLE task_comments (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	author_id    INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	type         TEXT    NOT NULL CHECK (type IN ('status', 'completion', 'question', 'answer', 'blocked', 'clarification', 'note')),
	body         TEXT    NOT NULL,
	answers_id   INTEGER REFERENCES task_comments(id) ON DELETE SET NULL,
	created_at   INTEGER NOT NULL
);
CREATE INDEX task_comments_task ON task_comments (task_id, id);

-- Who a task is waiting on: the target of an open question, or whoever a
-- blocked task waits for. Cleared when they answer or the status moves on.
CREATE TABLE task_waits (
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	reason       TEXT    NOT NULL CHECK (reason IN ('question', 'blocked')),
	comment_id   INTEGER NOT NULL REFERENCES task_comments(id) ON DELETE CASCADE,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (task_id, principal_id, reason)
);

-- A principal's inbox: mentions, questions to them, answers to their
-- questions, tasks assigned or handed to them.
CREATE TABLE inbox_items (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	principal_id INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	kind         TEXT    NOT NULL CHECK (kind IN ('mention', 'question', 'answer', 'assigned', 'handoff', 'blocked')),
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	comment_id   INTEGER REFERENCES task_comments(id) ON DELETE CASCADE,
	actor_id     INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	created_at   INTEGER NOT NULL,
	read_at      INTEGER
);
CREATE INDEX inbox_unread ON inbox_items (workspace_id, principal_id, read_at, id);

-- Hand-off rules: when a task whose phase (or label) matches is completed,
-- next_id is handed it, and the phase moves to next_phase if one is set.
CREATE TABLE handoff_rules (
	id           INTEGER PRIMARY KEY,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	match_kind   TEXT    NOT NULL CHECK (match_kind IN ('phase', 'label')),
	match_value  TEXT    NOT NULL,
	next_id      INTEGER NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
	next_phase   TEXT    NOT NULL DEFAULT '',
	UNIQUE (workspace_id, match_kind, match_value)
);

-- Files attached to a task (a todo's files), stored like page attachments.
CREATE TABLE task_files (
	id           INTEGER PRIMARY KEY,
	uid          TEXT    NOT NULL UNIQUE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	name         TEXT    NOT NULL,
	mime_type    TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT    NOT NULL,
	data         BLOB    NOT NULL,
	created_by   INTEGER REFERENCES principals(id) ON DELETE SET NULL,
	created_at   INTEGER NOT NULL
);
CREATE INDEX task_files_task ON task_files (task_id, id);
