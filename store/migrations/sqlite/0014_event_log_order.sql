-- The event log's order (see store/events.go). SQLite commits one writer at
-- a time, so an event takes the next seq as it is written.
ALTER TABLE events ADD COLUMN seq INTEGER;
UPDATE events SET seq = id;
CREATE UNIQUE INDEX events_seq ON events (seq);
CREATE INDEX events_workspace_seq ON events (workspace_id, seq);
