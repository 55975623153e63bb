-- Webhook deliveries from a linked tracker (issue 22), by the tracker's own
-- delivery ID: a delivery sent twice (GitHub redelivers) wakes the sync once.
-- The sync reads the tracker itself; a delivery is only a hint that
-- something changed there, so none is kept past a week.
CREATE TABLE tracker_hook_deliveries (
	delivery_id  TEXT    NOT NULL,
	workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	event        TEXT    NOT NULL,
	received_at  INTEGER NOT NULL,
	PRIMARY KEY (delivery_id, workspace_id)
);
CREATE INDEX tracker_hook_deliveries_received ON tracker_hook_deliveries (received_at);
