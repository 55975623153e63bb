-- Tracker mirrors (issue 22): a workspace's tasks mirrored to one outside
-- tracker's repository. Atrium stays the truth; the link remembers where the
-- poll of the other side stands and who pushes now.
CREATE TABLE tracker_links (
	workspace_id   INTEGER NOT NULL PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
	kind           TEXT    NOT NULL,
	repo           TEXT    NOT NULL,
	api_url        TEXT    NOT NULL DEFAULT '',
	-- the newest remote change a poll has seen (micros), and the ETag of
	-- the answer to a poll from there (a 304 to it costs no budget)
	poll_since     INTEGER NOT NULL DEFAULT 0,
	poll_etag      TEXT    NOT NULL DEFAULT '',
	claimed_by     TEXT    NOT NULL DEFAULT '',
	claim_until    INTEGER NOT NULL DEFAULT 0,
	last_sync_at   INTEGER NOT NULL DEFAULT 0,
	last_error     TEXT    NOT NULL DEFAULT '',
	rate_limit     INTEGER NOT NULL DEFAULT -1,
	rate_remaining INTEGER NOT NULL DEFAULT -1,
	rate_reset     INTEGER NOT NULL DEFAULT 0,
	created_at     INTEGER NOT NULL
);

-- A mirrored task's issue, and the fields both sides last agreed on (JSON):
-- the base a change on either side is told from, and a conflict found by.
CREATE TABLE tracker_issues (
	task_id      INTEGER NOT NULL PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	issue_number INTEGER NOT NULL,
	synced       TEXT    NOT NULL DEFAULT '',
	UNIQUE (workspace_id, issue_number)
);

-- A comment and its twin on the other side, whichever side wrote it first.
CREATE TABLE tracker_comments (
	comment_id   INTEGER NOT NULL PRIMARY KEY REFERENCES task_comments(id) ON DELETE CASCADE,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	remote_id    INTEGER NOT NULL,
	UNIQUE (workspace_id, remote_id)
);

-- The outbox: a row per change of a mirrored task, written with its event;
-- pushed in id order. attempts counts tries begun, so a try after one that
-- may have reached the tracker looks for what it made before making it.
CREATE TABLE tracker_outbox (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	comment_id   INTEGER NOT NULL DEFAULT 0,
	kind         TEXT    NOT NULL,
	-- pending, done
	state        TEXT    NOT NULL DEFAULT 'pending',
	attempts     INTEGER NOT NULL DEFAULT 0,
	last_error   TEXT    NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	done_at      INTEGER
);
CREATE INDEX tracker_outbox_pending ON tracker_outbox (workspace_id, state, id);

-- A field changed on both sides since they last agreed: listed, never
-- settled silently.
CREATE TABLE tracker_conflicts (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	task_id      INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	field        TEXT    NOT NULL,
	atrium_value TEXT    NOT NULL,
	remote_value TEXT    NOT NULL,
	created_at   INTEGER NOT NULL
);
CREATE INDEX tracker_conflicts_ws ON tracker_conflicts (workspace_id, id);
