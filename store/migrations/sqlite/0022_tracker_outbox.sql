-- The tracker mirror's second round (issue 22). An outbox row that fails
-- waits (next_at) longer after each failure, and holds back only its own
-- task's later rows; after too many failures, or one the tracker will never
-- accept, it is dead: listed in the status until someone retries it.
ALTER TABLE tracker_outbox ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tracker_outbox ADD COLUMN next_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tracker_outbox_due ON tracker_outbox (state, next_at);

-- An issue deleted or moved away on the tracker: its task is not made a
-- new issue behind anyone's back, only when someone retries it.
ALTER TABLE tracker_issues ADD COLUMN gone INTEGER NOT NULL DEFAULT 0;
-- When the twin of a comment was last seen changed on the tracker.
ALTER TABLE tracker_comments ADD COLUMN remote_updated INTEGER NOT NULL DEFAULT 0;

-- A comment written on the tracker and edited or deleted there since: its
-- copy here says so (the text it had is in the event log).
ALTER TABLE task_comments ADD COLUMN edited_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_comments ADD COLUMN deleted_at INTEGER NOT NULL DEFAULT 0;

-- Who wrote a comment first: 'atrium', pushed there, or 'tracker', pulled
-- here (a tracker user's principal is gh-LOGIN); an edit or deletion on the
-- tracker means something else for each.
ALTER TABLE tracker_comments ADD COLUMN origin TEXT NOT NULL DEFAULT 'atrium';
UPDATE tracker_comments SET origin = 'tracker' WHERE comment_id IN (
	SELECT c.id FROM task_comments c JOIN principals p ON p.id = c.author_id WHERE p.handle LIKE 'gh-%');

-- Every issue's comments changed since comments_since (with the ETag of
-- that request): edits that do not touch their issue show there.
ALTER TABLE tracker_links ADD COLUMN comments_since INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tracker_links ADD COLUMN comments_etag TEXT NOT NULL DEFAULT '';

-- The issue's updated_at as the mirror's own last write there left it: a
-- later one means someone else touched it, and its comments are read whole
-- (a deletion shows only as an absence).
ALTER TABLE tracker_issues ADD COLUMN seen_at INTEGER NOT NULL DEFAULT 0;
